"""Taught patterns (``--pattern``, the settings' ``[[patterns]]``) and the unread-line count (issue 22.5).

The log is in a format the extractor does not read (``[120] => 0.5213 @ 310ms``: no labels it knows):
without a pattern its lines are counted as one unread shape; taught, every value is read at its step.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from gputui import cli
from gputui.logs.formats import taught
from gputui.logs.parser import LogParser
from gputui.logs.unread import MAX_TRACKED, Unread

STEPS = 3000
PATTERN = "[{step}] => {loss} @ {step_time_ms}ms"


def _loss(step: int) -> float:
    return round(3 + 2 * math.exp(-step / 500), 4)


def _ms(step: int) -> int:
    return 300 + (step % 7) * 10


def write_log(path: Path) -> Path:
    lines = ["Starting training on 4 GPUs"]
    for step in range(1, STEPS + 1):
        if step % 1000 == 0:
            lines.append(f"saving checkpoint ckpt_{step}.pt")
        lines.append(f"[{step}] => {_loss(step):.4f} @ {_ms(step)}ms")
    lines.append("done")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(autouse=True)
def no_patterns():
    """Every test starts and ends with no pattern in effect (the command line sets them per process)."""
    taught.TEACHING.configure([])
    yield
    taught.TEACHING.configure([])


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    monkeypatch.setenv("GPUTUI_CONFIG", str(path))
    monkeypatch.delenv("GPUTUI_CLUSTER", raising=False)
    monkeypatch.delenv("SLURM_CLUSTER_NAME", raising=False)
    return path


def _read(path: Path, thin: bool) -> LogParser:
    parser = LogParser(path=str(path))
    parser.thin = thin
    data = path.read_bytes()
    for at in range(0, len(data), 5000):  # blocks cut mid-line, as a follower reads
        parser.feed(data[at : at + 5000])
    parser.finish()
    return parser


@pytest.mark.parametrize("thin", [False, True])
def test_lines_of_an_unknown_format_are_counted_as_one_unread_shape(tmp_path: Path, thin: bool) -> None:
    parser = _read(write_log(tmp_path / "train.log"), thin)
    assert parser.unread.summary() == (STEPS, 1)
    (shape,) = parser.unread.listed()
    assert shape.example == "[1] => 4.9960 @ 310ms"


def _json_records(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict]:
    assert cli.main(["parse", "--json", *argv]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _assert_every_value(records: list[dict]) -> None:
    taught_records = [r for r in records if r.get("source") == "taught"]
    loss = {r["step"]: r["value"] for r in taught_records if r["name"] == "loss"}
    step_time = {r["step"]: r["value"] for r in taught_records if r["name"] == "step_time_s"}
    assert loss == {step: _loss(step) for step in range(1, STEPS + 1)}
    assert step_time == pytest.approx({step: _ms(step) / 1000 for step in range(1, STEPS + 1)})


def test_a_pattern_on_the_command_line_reads_every_value_at_its_step(
    tmp_path: Path, settings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = write_log(tmp_path / "train.log")
    _assert_every_value(_json_records(capsys, "--pattern", PATTERN, str(log)))


def test_a_pattern_in_the_settings_applies_to_logs_under_its_folder_only(
    tmp_path: Path, settings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project, other = tmp_path / "gpt", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    settings.write_text(
        f'[alerts]\nidle_util_pct = 5\n\n[[patterns]]\npattern = "{PATTERN}"\nwhere = "{project}"\n'
    )
    _assert_every_value(_json_records(capsys, str(write_log(project / "slurm-1.out"))))
    outside = _json_records(capsys, str(write_log(other / "slurm-2.out")))
    assert not [r for r in outside if r.get("source") == "taught"]


def test_a_pattern_for_another_cluster_does_not_apply(
    tmp_path: Path, settings: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.write_text(f'[[patterns]]\npattern = "{PATTERN}"\ncluster = "lumi"\n')
    log = str(write_log(tmp_path / "train.log"))
    assert not [r for r in _json_records(capsys, log) if r.get("source") == "taught"]
    monkeypatch.setenv("GPUTUI_CLUSTER", "lumi")
    _assert_every_value(_json_records(capsys, log))


def test_the_parse_table_ends_with_one_line_on_what_was_not_read(
    tmp_path: Path, settings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = write_log(tmp_path / "train.log")
    assert cli.main(["parse", str(log)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == (
        f"{log}: 3,000 lines in 1 shape were not read: gputui parse --unread {log} lists them; "
        "--pattern teaches one"
    )
    assert cli.main(["parse", "--pattern", PATTERN, str(log)]) == 0
    assert "not read" not in capsys.readouterr().out


def test_unread_lists_each_shape_with_its_count_an_example_and_a_draft(
    tmp_path: Path, settings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = write_log(tmp_path / "train.log")
    with log.open("a") as f:
        for step in range(20):
            f.write(f"eval #{step} ~ {0.5 + step / 100:.3f} / {0.9 - step / 100:.3f}\n")
    assert cli.main(["parse", "--unread", str(log)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:8] == [
        f"== {log}",
        "3,020 lines in 2 shapes were not read: each shape, its count and an example",
        "     3,000  [1] => 4.9960 @ 310ms",
        "            not read: a number no word names",
        "            draft: --pattern '[{n1}] => {n2} @ {n3}ms'",
        "        20  eval #0 ~ 0.500 / 0.900",
        "            not read: words that name no value (a sentence, a command line's flags)",
        "            draft: --pattern 'eval #{n1} ~ {n2} / {n3}'",
    ]


def test_a_bad_pattern_is_one_line(
    tmp_path: Path, settings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = str(write_log(tmp_path / "train.log"))
    with pytest.raises(SystemExit) as ended:
        cli.main(["parse", "--pattern", "iter {step} loss {", log])
    assert ended.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "argument --pattern" in last and "unbalanced '{'" in last
    settings.write_text('[alerts]\nidle_util_pct = 5\n\n[[patterns]]\npattern = "iter {step}"\n')
    assert cli.main(["parse", log]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"gputui: warning: {settings}:5: patterns[1].pattern 'iter {{step}}': a pattern needs at least one "
        "{name} placeholder for a metric, such as {loss} — using the default settings"
    ]


@pytest.mark.parametrize(
    ("pattern", "line", "expected"),
    [
        ("iter {step}: loss {loss}, time {step_time_ms}ms", "iter 7: loss 0.5, time 250ms", (7, None)),
        ("Ep {epoch}/{epochs_total} acc {acc_pct}", "Ep 3/90 acc 71.5", (None, 3)),
        ("step {step} dt {dt}ms mem {max_mem_gib}", "[rank0] step 9   dt 12.5ms  mem 11.8", (9, None)),
        ("{{{step}}} l {loss} {}", "{12} l 0.25 7", (12, None)),
    ],
)
def test_a_pattern_names_its_numbers_by_the_naming_rule(pattern: str, line: str, expected: tuple) -> None:
    taught.TEACHING.configure([taught.Taught(taught.compile_pattern(pattern))])
    parser = LogParser()
    records = [r for r in parser.feed(line.encode() + b"\n") if r.kind == "metric"]
    found = {r["name"]: r["value"] for r in records}
    assert all(r.get("step") == expected[0] and r.get("epoch") == expected[1] for r in records)
    assert (
        found
        == {
            "iter {step}: loss {loss}, time {step_time_ms}ms": {"loss": 0.5, "step_time_s": 0.25},
            "Ep {epoch}/{epochs_total} acc {acc_pct}": {"acc_pct": 71.5},
            "step {step} dt {dt}ms mem {max_mem_gib}": {"dt_s": 0.0125, "max_mem_gib": 11.8},
            "{{{step}}} l {loss} {}": {"loss": 0.25},
        }[pattern]
    )


def test_the_shapes_tracked_are_bounded() -> None:
    unread = Unread()
    for shape in range(MAX_TRACKED + 50):
        for step in range(3):
            unread.see(f"{'x' * shape}ab {step} cd {step / 10 + 0.01:.2f}")
    assert len(unread.shapes) == MAX_TRACKED and unread.untracked == 50 * 3


def test_a_taught_pattern_is_appended_to_the_settings_and_the_rest_of_the_file_kept(
    tmp_path: Path, settings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from gputui.config import ConfigError, load_config
    from gputui.config_write import append_pattern

    kept = "# my settings\n[alerts]\nidle_util_pct = 7  # low\n"
    settings.write_text(kept)
    assert append_pattern(PATTERN, str(tmp_path)) == settings
    text = settings.read_text()
    assert text.startswith(kept) and load_config().alerts.idle_util_pct == 7
    (stored,) = load_config().patterns
    assert (stored.pattern, stored.where) == (PATTERN, str(tmp_path))
    _assert_every_value(_json_records(capsys, str(write_log(tmp_path / "train.log"))))
    with pytest.raises(ConfigError, match="unbalanced"):
        append_pattern("[{step}] => {loss", None)
    assert settings.read_text() == text
