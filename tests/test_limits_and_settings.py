"""Readers and settings survive anything (issue 21, part 4).

A record line nested a thousand deep (2 KB) among valid ones is one bad line, counted and skipped, in
every command that reads records; every number in the settings file, the flags and ``GPUTUI_REFRESH``
is finite and in its range, or one line naming where it came from. Hypothesis drives values of every
type into every setting: loading gives a valid Config or a one-line ConfigError, never a Config that
would spin the app (the app then starts with the defaults and that line, as for a broken file).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_e2e_dashboard import Terminal, header, shell
from test_e2e_tmux import GPUTUI

from gputui.argtypes import SAMPLE_INTERVAL_S, SLURM_REFRESH_S, Range
from gputui.cli import build_parser
from gputui.config import Config, ConfigError, apply_environment, load_config, load_config_or_defaults
from gputui.logs.files.lightning_csv import CsvMetricsParser
from gputui.logs.parser import LogParser
from gputui.probes.sampler import Sampler
from gputui.stream import records
from gputui.stream.io import MAX_JSON_DEPTH, ReadStats, RecordWriter, parse_prefixed, read_records

DEEP_LIST = b"[" * 1000 + b"]" * 1000
DEEP_DICT = b'{"a":' * 1000 + b"1" + b"}" * 1000


def cli(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gputui", *argv], capture_output=True, text=True, timeout=120, cwd=cwd
    )


@pytest.fixture
def deep_file(tmp_path: Path) -> Path:
    """Six valid records (a run's GPU samples and an epoch), the two deep lines between them."""
    path = tmp_path / "run.jsonl"
    with RecordWriter(path) as writer:
        for t in range(3):
            sample = records.gpu_sample(
                host="n1",
                gpu_id="G0",
                vendor="nvidia",
                source="nvml",
                index=0,
                time=100.0 + t,
                util_gpu_pct=90,
            )
            writer.write(sample)
    with open(path, "ab") as f:
        f.write(DEEP_LIST + b"\n" + DEEP_DICT + b"\n")
    with RecordWriter(path) as writer:
        for epoch in (1, 2, 3):
            writer.write(records.metric("loss", 1.0 / epoch, epoch=epoch, scope="epoch", time=100.0 + epoch))
    return path


# --------------------------------------------------------------------------- nesting depth


@pytest.mark.parametrize("line", [DEEP_LIST, DEEP_DICT, b"[" * 40 + b"]" * 40], ids=["list", "dict", "40"])
def test_a_deep_line_is_one_malformed_line_and_the_rest_is_read(line: bytes) -> None:
    body = b'{"v":1,"kind":"metric","time":1,"name":"loss","value":0.5}\n'
    stats = ReadStats()
    got = list(read_records(io.BytesIO(body + line + b"\n" + body), stats))
    assert len(got) == 2
    assert stats.malformed == 1 and stats.skipped == 1
    assert f"nested deeper than {MAX_JSON_DEPTH} levels" in stats.examples[0]


def test_records_with_nested_fields_within_the_limit_are_read() -> None:
    nested = {"v": 1, "kind": "event", "time": 1, "event": "x", "detail": {"a": [[{"b": [1, 2]}]]}}
    stats = ReadStats()
    got = list(read_records(io.BytesIO(json.dumps(nested).encode() + b"\n"), stats))
    assert stats.skipped == 0 and got[0]["detail"] == {"a": [[{"b": [1, 2]}]]}


def test_a_deep_record_on_stdout_is_a_broken_payload() -> None:
    with pytest.raises(ValueError, match="nested deeper"):
        parse_prefixed("@gputui " + DEEP_LIST.decode())


def test_log_parsers_skip_deep_lines() -> None:
    """fairseq's JSON dicts and ``@gputui`` records printed in a log: the deep line gives nothing, the
    lines around it their values."""
    tag = "2022-06-06 09:18:44 | INFO | train_inner | "
    lines = [
        tag + '{"epoch": 1, "loss": "0.5", "num_updates": "10"}',
        tag + '{"epoch": ' + DEEP_LIST.decode() + "}",
        "@gputui " + DEEP_DICT.decode(),
        tag + '{"epoch": 1, "loss": "0.4", "num_updates": "20"}',
    ]
    parser = LogParser()
    got = parser.feed(("\n".join(lines) + "\n").encode()) + parser.finish()
    assert [r["value"] for r in got if r.kind == "metric" and r["name"] == "loss"] == [0.5, 0.4]


def test_metric_csv_with_an_oversized_field_and_infinite_steps_is_read() -> None:
    """Lightning's metrics.csv: a field over the csv module's limit and ``inf`` steps are skipped
    (they raised csv.Error and OverflowError); the rows around them are read."""
    text = 'epoch,step,loss\n0,1,0.5\n0,2,"' + "x" * 200_000 + '"\ninf,inf,0.4\n0,3,0.3\n'
    parser = CsvMetricsParser()
    got = parser.feed(text.encode()) + parser.finish()
    assert [(r.get("step"), r["value"]) for r in got] == [(1, 0.5), (None, 0.4), (3, 0.3)]


@pytest.mark.parametrize(
    "argv",
    [["check"], ["parse"], ["parse", "--json"], ["report"], ["scale", "--from"], ["replay", "--headless"]],
    ids=lambda argv: " ".join(argv),
)
def test_every_reader_command_skips_a_deep_line(deep_file: Path, argv: list[str]) -> None:
    result = cli(*argv, str(deep_file))
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stdout + result.stderr
    if argv == ["check"]:
        assert result.returncode == 1  # lines were skipped: check says so
        assert "read 6 records; skipped 2 lines (2 malformed)" in result.stdout
    elif argv == ["parse", "--json"]:
        assert result.returncode == 0 and len(result.stdout.splitlines()) == 6
    elif argv == ["replay", "--headless"]:
        assert result.returncode == 0 and "failed" not in result.stdout + result.stderr
        assert "records: 6" in result.stdout
    elif argv == ["parse"]:
        assert result.returncode == 0 and "0.333333" in result.stdout  # epoch 3's loss
    elif argv == ["report"]:
        assert (
            result.returncode == 0 and "│ epochs        │ 3 " in result.stdout and "90.0 %" in result.stdout
        )
    else:
        assert result.returncode == 0 and "100 %" in result.stdout and "90.0" in result.stdout


def test_export_skips_a_deep_line(deep_file: Path, tmp_path: Path) -> None:
    result = cli("export", str(deep_file), str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert "metrics.csv: 3, gpus.csv: 3, epochs.csv: 3" in result.stdout


# --------------------------------------------------------------------------- settings: examples


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("[jobs]\nrefresh_s = nan\n", "jobs.refresh_s must be a finite number from 0.5 to 3600 s, not nan"),
        ("[jobs]\nrefresh_s = 1e-9\n", "jobs.refresh_s must be from 0.5 to 3600 s, not 1e-09"),
        ("[jobs]\nrefresh_s = 0.001\n", "jobs.refresh_s must be from 0.5 to 3600 s, not 0.001"),
        (
            "[jobs]\nended_hours = inf\n",
            "jobs.ended_hours must be a finite number from 0 to 720 hours, not inf",
        ),
        ("[dashboard]\nrefresh_s = 1e-9\n", "dashboard.refresh_s must be from 0.1 to 3600 s, not 1e-09"),
        ("[alerts]\nmem_high_pct = 101\n", "alerts.mem_high_pct must be from 0 to 100 %, not 101"),
        ("[alerts]\ngpu_idle_minutes = 1e308\n", "alerts.gpu_idle_minutes must be from 0 to 1440 minutes"),
        ("[jobs]\nsqueue_json = 1\n", "jobs.squeue_json must be true or false, not 1"),
        ('[jobs]\nsqueue_json = "yes"\n', "jobs.squeue_json must be true or false, not 'yes'"),
        ('[clusters."a b"]\npartition = "gpu"\n', "[clusters.a b]: a cluster name is a word"),
        ('[jobs]\n"a\\nb" = 1\n', "unknown setting jobs.a\\nb "),
    ],
)
def test_a_bad_setting_is_one_line_naming_file_and_key(tmp_path: Path, text: str, what: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config({"GPUTUI_CONFIG": str(path)})
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{path}:") and what in message


@pytest.mark.parametrize("value", ["nan", "inf", "1e-9", "0.001", "1e308", "-1"])
def test_gputui_refresh_out_of_range_is_one_line(value: str) -> None:
    with pytest.raises(ConfigError) as err:
        apply_environment(Config(), {"GPUTUI_REFRESH": value})
    assert str(err.value).startswith(f"GPUTUI_REFRESH='{value}' must be")


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--refresh", "nan"], "--refresh"),
        (["--refresh", "1e-9"], "--refresh"),
        (["--refresh", "0.001"], "--refresh"),
        (["--interval", "1e308", "probe"], "--interval"),
        (["--interval", "nan", "probe"], "--interval"),
        (["--duration", "inf"], "--duration"),
        (["attach", "1", "--detach-after", "1e308"], "--detach-after"),
        (["attach", "1", "--probe-interval", "inf"], "--probe-interval"),
        (["--log", "x", "--rotate-mb", "1e308"], "--rotate-mb"),
        (["--log", "x", "--rotate-keep", "1000000000"], "--rotate-keep"),
        (["run", "--gpus-per-node", "-1", "--dry-run", "--", "true"], "--gpus-per-node"),
        (["demo", "--ranks", "100000"], "--ranks"),
    ],
)
def test_a_flag_out_of_range_is_a_usage_error_naming_it(argv: list[str], flag: str) -> None:
    result = cli(*argv)
    last = result.stderr.strip().splitlines()[-1]
    assert result.returncode == 2 and f"argument {flag}" in last and "must be" in last, result.stderr


def test_the_sampler_refuses_an_interval_that_would_spin() -> None:
    for interval in (math.nan, 0.0, 1e-9, math.inf):
        with pytest.raises(ValueError, match="sampling interval"):
            Sampler(object(), None, interval=interval)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- settings: any value

PERCENT, MINUTES = Range(0, 100), Range(0, 1440)
#: Every setting of the file and the range the issue asks of it (None: a switch, true or false).
NUMBER_KEYS: list[tuple[str, str, Range | None]] = [
    ("alerts", "gpu_idle_minutes", MINUTES),
    ("alerts", "idle_util_pct", PERCENT),
    ("alerts", "busy_util_pct", PERCENT),
    ("alerts", "no_output_minutes", MINUTES),
    ("alerts", "mem_high_pct", PERCENT),
    ("alerts", "hot_temp_c", Range(0, 150)),
    ("alerts", "straggler_gap_pct", PERCENT),
    ("dashboard", "refresh_s", Range(0.1, 3600)),
    ("jobs", "refresh_s", Range(0.5, 3600)),  # one squeue call each
    ("jobs", "ended_hours", Range(0, 720)),
    ("jobs", "squeue_json", None),
]

toml_scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=20),
)
toml_values = st.recursive(
    toml_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2)
    ),
    max_leaves=6,
)


def toml(value: object) -> str:
    """``value`` as a TOML value (inline tables and arrays for dicts and lists)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else ("inf" if value > 0 else "-inf")
            if math.isinf(value)
            else repr(value)
        )
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{k} = {toml(v)}" for k, v in value.items()) + "}"


def assert_usable(config: Config) -> None:
    """Every number finite and in its range: nothing that would spin a timer or overflow a query."""
    for section, key, limits in NUMBER_KEYS:
        value = getattr(getattr(config, section), key)
        if limits is None:
            assert isinstance(value, bool)
        else:
            assert limits.problem(value) is None, (section, key, value)
    assert config.jobs.refresh_s >= 0.5 and config.dashboard.refresh_s >= 0.1


@settings(max_examples=300, deadline=None)
@given(
    entries=st.lists(
        st.tuples(st.sampled_from(NUMBER_KEYS), toml_values),
        min_size=1,
        max_size=4,
        unique_by=lambda e: e[0][:2],
    ),
    refresh=st.one_of(st.none(), st.text(max_size=12), st.floats().map(repr)),
)
def test_any_setting_gives_a_usable_config_or_one_line(tmp_path_factory, entries, refresh) -> None:
    folder = tmp_path_factory.mktemp("cfg")
    by_section: dict[str, list[str]] = {}
    for (section, key, _), value in entries:
        by_section.setdefault(section, []).append(f"{key} = {toml(value)}")
    text = "".join(f"[{s}]\n" + "\n".join(lines) + "\n" for s, lines in by_section.items())
    (folder / "config.toml").write_text(text, encoding="utf-8")
    env = {"GPUTUI_CONFIG": str(folder / "config.toml")}
    if refresh is not None:
        env["GPUTUI_REFRESH"] = refresh
    try:
        assert_usable(load_config(env))
    except ConfigError as exc:
        assert "\n" not in str(exc) and str(exc)
    config, warning = load_config_or_defaults(env)  # what the app starts with: never raises
    assert_usable(config)
    assert warning is None or "\n" not in warning


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(max_size=16), st.floats().map(repr), st.integers().map(str)))
def test_any_refresh_or_interval_flag_is_in_range_or_a_usage_error(text: str) -> None:
    for flag, limits, argv in (
        ("--refresh", SLURM_REFRESH_S, []),
        ("--interval", SAMPLE_INTERVAL_S, ["probe"]),
    ):
        parser = build_parser()
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                args = parser.parse_args([f"{flag}={text}", *argv])
        except SystemExit as exc:
            assert exc.code == 2
            continue
        assert limits.problem(getattr(args, flag[2:])) is None


def test_range_parse_messages_are_one_line() -> None:
    with pytest.raises(
        argparse.ArgumentTypeError, match=r"^'nan' must be a finite number from 0.5 to 3600 s$"
    ):
        SLURM_REFRESH_S.parse("nan")


# --------------------------------------------------------------------------- the app with a bad setting


@pytest.mark.slurm
@pytest.mark.skipif(shutil.which("tmux") is None and os.environ.get("CI") != "true", reason="no tmux")
@pytest.mark.parametrize(
    "setting",
    ["[jobs]\nrefresh_s = 1e-9\n", "[dashboard]\nrefresh_s = nan\n", "[jobs]\nended_hours = inf\n"],
    ids=["jobs-1e-9", "dashboard-nan", "ended-inf"],
)
def test_the_jobs_screen_with_a_bad_setting_shows_it_and_quits_on_q(
    slurm_cluster, tmp_path: Path, setting: str
) -> None:
    """A refresh of 1e-9 gave a blank screen at 90 % CPU that ignored q: now the file is not used (the
    defaults, squeue every 5 s, and the one-line reason on screen, as for a broken file) and q quits."""
    config = tmp_path / "config.toml"
    config.write_text(setting, encoding="utf-8")
    env = {
        "SLURM_CONF": slurm_cluster.env["SLURM_CONF"],
        "GPUTUI_STATE_DIR": str(tmp_path / "state"),
        "GPUTUI_CONFIG": str(config),
    }
    term = Terminal(f"gputui-limits-{os.getpid()}-{tmp_path.name}")
    try:
        term.start(
            shell(f"unset GPUTUI_CLUSTER GPUTUI_REFRESH; {GPUTUI} --backend sim"), env=env, cwd=tmp_path
        )
        said = setting.splitlines()[0].strip("[]") + "." + setting.splitlines()[1].split()[0] + " must be"
        term.wait(
            lambda s: said in re.sub(r"[▌│\s]+", " ", s),  # the toast, its lines wrapped
            60,
            f"the reason the settings file is not used ({said} ...)",
        )
        term.wait(
            lambda s: re.search(r"my jobs: .* every 5 s", header(s)), 60, "squeue every 5 s (the default)"
        )
        term.keys("q")
        assert "EXIT=0" in term.wait_exit(20)
    finally:
        term.kill()
