"""Megatron-LM ``--log-straggler`` lines → per-rank metric records (``docs/log-formats.md``)."""

from __future__ import annotations

import io
import random
import re
import time
from pathlib import Path

import pytest
from per_rank_gen import QUANTITIES, iteration_line, random_report, rank_list_lines, straggler_line

from gputui.commands import parse as parse_cmd
from gputui.logs.parser import LogParser
from gputui.monitor.training import TrainingState
from gputui.sources.inputs import run_records
from gputui.stream.records import Record

EXAMPLE = Path(__file__).parent / "per_rank" / "megatron_straggler_srun.log"


def records_of(text: str, thin: bool = False) -> list[Record]:
    parser = LogParser()
    parser.thin = thin
    return parser.feed(text.encode(), now=0.0) + parser.finish(now=0.0)


def straggler(records: list[Record]) -> list[Record]:
    return [r for r in records if r.get("source") == "megatron_straggler"]


def local(stamp: str) -> float:
    return time.mktime(time.strptime(stamp, "%Y-%m-%d %H:%M:%S"))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("prefix", ["", "{rank}: ", "{rank}: [default0]:"])
def test_generated_reports_give_every_value_with_its_rank(seed: int, prefix: str) -> None:
    rng = random.Random(seed)
    world = rng.choice([8, 16, 64, 512])
    milliwatts = seed % 2 == 0  # NVIDIA: torch.cuda.power_draw() is mW; AMD (amdsmi): W
    lines, reports = [], []
    for index in range(rng.randint(2, 5)):
        iteration = 10 * (index + 1)
        stamp = f"2026-03-14 23:{index:02d}:{rng.randrange(60):02d}"
        report = random_report(rng, world, stamp, milliwatts=milliwatts)
        reports.append(report)
        last = prefix.format(rank=world - 1)
        lines.append(last + iteration_line(stamp, iteration, 1000, 3460.2, 6.0 - index / 10))
        lines.append(prefix.format(rank=0) + straggler_line(report))
    got = straggler(records_of("\n".join(lines) + "\n"))
    expected = []
    for report in reports:
        for what, _unit, name in QUANTITIES:
            for extreme, (value, rank) in zip(("min", "max"), report.values[what], strict=True):
                if what == "Pwr" and milliwatts:
                    value = value / 1000
                expected.append((local(report.stamp), name, pytest.approx(value), rank, extreme))
    assert [(r.time, r["name"], r["value"], r["rank"], r["extreme"]) for r in got] == expected
    for record in got:
        assert record.get("step") is None  # the line names no iteration
        assert (record["scope"], record["time_source"]) == ("step", "printed")


def test_the_readme_example_with_whole_numbers_and_the_rank_lists() -> None:
    """``megatron/core/README_STRAGGLER.md`` prints whole numbers; ``--straggler-minmax-count 4``."""
    text = (
        " 0: INFO:megatron.core.utils:[2024-03-14 23:07:56] | "
        "MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3468.20ms/0 | "
        "MnPwr/Rnk: 601796W/8 | MxPwr/Rnk: 683801W/18 | MnTmp/Rnk: 52C/0 | MxTmp/Rnk: 65C/21 | "
        "MnUtl/Rnk: 97%/8 | MxUtl/Rnk: 100%/6 | MnClk/Rnk: 1950MHz/28 | MxClk/Rnk: 1980MHz/0 | "
        "MnDRtt/Rnk: 14.27ms/23 | MxDRtt/Rnk: 34.65ms/3 | MnEtpt/Rnk: 296.02TF/0 | MxEtpt/Rnk: 297.32TF/8\n"
    )
    rng = random.Random(3)
    etpt = sorted((round(rng.uniform(296, 297.4), 2), r) for r in range(32))
    text += "".join(f" 0: {line}\n" for line in rank_list_lines(etpt, 4))
    got = straggler(records_of(text))
    pairs = [(r["name"], r["value"], r["rank"], r["extreme"]) for r in got[:14]]
    assert pairs == [
        ("rank_step_time_ms", 3453.08, 8, "min"),
        ("rank_step_time_ms", 3468.20, 0, "max"),
        ("rank_power_w", 601.796, 8, "min"),
        ("rank_power_w", 683.801, 18, "max"),
        ("rank_temp_c", 52.0, 0, "min"),
        ("rank_temp_c", 65.0, 21, "max"),
        ("rank_util_pct", 97.0, 8, "min"),
        ("rank_util_pct", 100.0, 6, "max"),
        ("rank_clock_mhz", 1950.0, 28, "min"),
        ("rank_clock_mhz", 1980.0, 0, "max"),
        ("rank_data_time_ms", 14.27, 23, "min"),
        ("rank_data_time_ms", 34.65, 3, "max"),
        ("rank_tflops", 296.02, 0, "min"),
        ("rank_tflops", 297.32, 8, "max"),
    ]
    lists = [(r["value"], r["rank"], r["extreme"]) for r in got[14:]]
    assert lists == [(v, rank, "bottom") for v, rank in etpt[:4]] + [
        (v, rank, "top") for v, rank in etpt[-4:]
    ]
    assert {r.time for r in got} == {local("2024-03-14 23:07:56")}  # the lists take the report's time


def test_iteration_lines_read_as_before() -> None:
    """The iteration lines' records are the same with the straggler lines between them as without."""
    rng = random.Random(7)
    plain, mixed = [], []
    for index in range(4):
        stamp = f"2026-03-14 10:00:{10 * index:02d}"
        line = "7: " + iteration_line(stamp, 10 * (index + 1), 100, 700.0 + index, 9.0 - index)
        plain.append(line)
        mixed += [line, "0: " + straggler_line(random_report(rng, 8, stamp))]
    before = records_of("\n".join(plain) + "\n")
    after = records_of("\n".join(mixed) + "\n")
    assert len(straggler(after)) == 4 * 14
    metrics = [r for r in after if r.kind == "metric" and r.get("source") != "megatron_straggler"]
    assert metrics == [r for r in before if r.kind == "metric"]
    assert {r["name"] for r in metrics} >= {"lm_loss", "elapsed_time_per_iteration_s"}
    outcomes = [[r["outcome"] for r in records if r.get("event") == "outcome"] for records in (before, after)]
    assert outcomes == [["truncated"], ["truncated"]]


@pytest.mark.parametrize(
    "line",
    [
        "INFO:megatron.core.utils:[2024-03-14 23:07:56] | MnRtt/Rnk: 3453.08W/8",  # wrong unit
        "see MnRtt/Rnk: in the README",
        "INFO:megatron.core.utils:^^^^ Bottom 4 Ranks with lowest",
        "Etpt(TF): is estimated throughput",
        "INFO:megatron.core.utils:[2024-03-14 23:07:56] | MnRtt/Rnk: 1.00ms/" + "9" * 5000,  # no such rank
        "INFO:megatron.core.utils:^^^^ Top    4 Ranks with highest Etpt(TF): 1.0/" + "9" * 5000 + ",",
    ],
)
def test_lines_that_only_look_alike_give_nothing(line: str) -> None:
    assert straggler(records_of(line + "\n")) == []


def test_parse_lists_the_rank_metrics_of_the_example() -> None:
    """``gputui parse`` of a Megatron log with straggler lines (the real formats under ``srun --label``):
    the step summary as without them, and the per-rank values listed."""
    out = io.StringIO()
    assert parse_cmd.run([str(EXAMPLE)], out=out) == 0
    text = out.getvalue()
    assert "step 50/100" in text
    assert "per-rank values (megatron_straggler, ranks " in text
    line = next(x for x in text.splitlines() if "rank_step_time_ms" in x)
    assert re.search(r"highest 70\d\.\d+ on rank 5, lowest 6\d\d\.\d+ on rank \d", line), line
    assert re.search(r"max on rank 5 in (\d) of \1 reports", line), line  # rank 5 is the slow one
    records = straggler(records_of(EXAMPLE.read_text()))
    assert len(records) == 5 * (14 + 4)
    assert {r["rank"] for r in records if r["extreme"] == "max" and r["name"] == "rank_step_time_ms"} == {5}


@pytest.mark.parametrize("labelled", [True, False])
def test_the_training_model_keeps_the_rank_that_prints(labelled: bool) -> None:
    """The ranks a report names were measured, not the one printing: the dashboard's training model
    still follows the iteration lines (rank 7's under ``srun --label``, the unlabelled stream's else)."""
    text = EXAMPLE.read_text()
    if not labelled:
        text = re.sub(r"(?m)^\d+: ", "", text)
    state, records = TrainingState(), records_of(text)
    assert len(straggler(records)) == 5 * (14 + 4)
    for record in records:
        if record.kind == "metric":
            state.add_metric(record)
    assert (state.rank, state.step) == ((7, 50) if labelled else (None, 50))
    assert "lm_loss" in state.metrics and not any(n.startswith("rank_") for n in state.metrics)


def test_catch_up_reads_every_report() -> None:
    """Catch-up mode (``report``, ``parse``'s table) samples long runs of same-shape lines; the straggler
    reports are never sampled: the verdicts count them report by report."""
    rng = random.Random(11)
    lines = ["0: using world size: 16"]
    for index in range(400):
        stamp = f"2026-03-14 {10 + index // 60:02d}:{index % 60:02d}:00"
        lines.append("15: " + iteration_line(stamp, 10 * (index + 1), 4000, 700.0, 9.0 - index / 100))
        lines.append("0: " + straggler_line(random_report(rng, 16, stamp)))
    text = "\n".join(lines) + "\n"
    full, thin = records_of(text), records_of(text, thin=True)
    assert len(straggler(full)) == 400 * 14
    assert straggler(thin) == straggler(full)
    assert len(run_records_of(text)) == 400 * 14


def run_records_of(text: str) -> list[Record]:
    """The straggler records ``gputui report`` reads from a log holding ``text``."""
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".out") as fh:
        fh.write(text)
        fh.flush()
        return straggler(list(run_records(fh.name)))
