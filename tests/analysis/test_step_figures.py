"""Derived figures from every printed value, in one computation (issue 30): step time, tokens/s and the
elapsed time of a long step-based run are the log's own, whether it is read whole or caught up (a
catch-up read sums the lines it skips: aggregate records), and ``report``, ``parse`` and the replay agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import step_logs

from gputui.analysis.running import Running
from gputui.analysis.steps import StepTracker
from gputui.cli import main
from gputui.logs import parse_bytes
from gputui.sources.log_clock import place

TRUTH = step_logs.build_nanogpt_truth()


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return step_logs.build_nanogpt(tmp_path_factory.mktemp("nano") / "train.log")


@pytest.mark.parametrize("thin", [False, True], ids=["whole", "catch-up"])
def test_the_summary_is_the_logs_own(log: Path, thin: bool) -> None:
    records = parse_bytes(log.read_bytes(), thin=thin)
    s = StepTracker().add_all(records).summary()
    assert s is not None
    assert s.step_time_s == pytest.approx(TRUTH["step_time_s"], rel=1e-9)
    assert s.elapsed_s == pytest.approx(TRUTH["elapsed_s"], rel=1e-9)
    assert s.throughput_mean == pytest.approx(TRUTH["tokens_per_s"], rel=1e-9)
    assert place(records).total_s == pytest.approx(TRUTH["elapsed_s"], rel=1e-9)  # the replay's clock


def test_catch_up_counts_every_skipped_line(log: Path) -> None:
    records = parse_bytes(log.read_bytes(), thin=True)
    dts = [r for r in records if r.kind == "metric" and r.get("name") == "dt_s"]
    assert len(dts) < 600  # most lines were read in stretches
    assert sum(r.get("count", 1) for r in dts) == 6000
    aggregate = next(r for r in dts if r.get("count", 1) > 1)
    assert aggregate.get("min") <= aggregate.get("value") <= aggregate.get("max")
    assert aggregate.get("step") - aggregate.get("step_first") + 1 == aggregate.get("count")
    rate = next(r for r in records if r.get("name") == "tokens_per_s" and r.get("count", 1) > 1)
    assert rate.get("weight_s") > 0 and rate.get("timed") > 0  # tokens over the stretch's seconds


def test_report_and_parse_say_the_same(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--json", str(log)]) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert steps["step_time_s"] == pytest.approx(TRUTH["step_time_s"], rel=1e-9)
    assert steps["elapsed_s"] == pytest.approx(TRUTH["elapsed_s"], rel=1e-9)
    assert steps["throughput_mean"] == pytest.approx(TRUTH["tokens_per_s"], rel=1e-9)
    assert main(["parse", str(log)]) == 0
    out = capsys.readouterr().out
    ms = TRUTH["step_time_s"] * 1000
    assert f"step time  {ms:.1f} ms mean" in out
    assert f"tokens/s   {TRUTH['tokens_per_s']:,.0f} over the run" in out


def test_running_figures_are_exact_in_bounded_memory() -> None:
    r = Running()
    for step in range(100_000):
        r.add(step, float(step % 10))
    assert r.mean() == pytest.approx(4.5)
    assert len(r.buckets) <= 1024
    assert r.mean_since(90_000) == pytest.approx(4.5, abs=0.01)  # to a bucket's width
    spread = Running()
    spread.add(0, 1.0)
    spread.add(99, 3.0, weight=99, first=1)  # an aggregate: 99 values of mean 3 at steps 1..99
    assert spread.mean() == pytest.approx((1 + 3 * 99) / 100)
