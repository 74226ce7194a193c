"""A run report on a small hand-computed fixture: every number below was worked out by hand from the
records (not by the code under test)."""

from __future__ import annotations

import pytest

from gputui.analysis import RunAnalysis, compare
from gputui.analysis.run import RunReport
from gputui.config import VerdictSettings
from gputui.monitor.verdicts import scale_diagnosis
from gputui.stream.records import event, gpu_sample, metric

T0 = 1_795_000_000.0


def _fixture() -> list:
    records = [event("train_started", time=T0, epochs=3, world_size=2)]
    # GPU A: util 0, 50, 100, 90 at t = 0, 10, 20, 30 s; power 100, 200, 300, 300 W (no energy counter)
    for i, (util, power, mem) in enumerate(
        [(0, 100, 1 << 30), (50, 200, 3 << 30), (100, 300, 2 << 30), (90, 300, 2 << 30)]
    ):
        records.append(
            gpu_sample(
                host="n1",
                gpu_id="GPU-A",
                vendor="nvidia",
                source="nvml",
                time=T0 + 10 * i,
                util_gpu_pct=util,
                power_w=power,
                mem_used_bytes=mem,
            )
        )
    # GPU B: util 2, 4, 80; a cumulative energy counter 1000 → 1600 → reset → 250 J; a 120 s gap in power
    for t, util, energy, power in [(0, 2, 1000.0, 50), (10, 4, 1600.0, 50), (130, 80, 250.0, 400)]:
        records.append(
            gpu_sample(
                host="n1",
                gpu_id="GPU-B",
                vendor="nvidia",
                source="nvml",
                time=T0 + t,
                util_gpu_pct=util,
                energy_j=energy,
                power_w=power,
                mem_used_bytes=5 << 30,
            )
        )
    # three epochs: 40 s (start-up), 20 s, 30 s; 6000 samples each; accuracy rising
    for epoch, seconds, acc in [(1, 40.0, 0.5), (2, 20.0, 0.7), (3, 30.0, 0.8)]:
        common = {"epoch": epoch, "epoch_base": 1, "rank": 0, "scope": "epoch", "time": T0 + 100 * epoch}
        records.append(metric("epoch_time_s", seconds, samples=6000, **common))
        records.append(metric("val_accuracy", acc, **common))
        records.append(metric("loss", 1.0 / epoch, **common))
    records.append(event("outcome", time=T0 + 400, outcome="completed", evidence="training done"))
    return records


def test_the_fixture_report_holds_the_hand_computed_numbers() -> None:
    report = RunAnalysis("fixture", idle_pct=5.0).add_all(_fixture()).report()
    assert report.world_size == 2 and report.world_size_source == "train_started"
    a, b = report.gpus
    assert (a.gpu_id, b.gpu_id) == ("GPU-A", "GPU-B")
    assert a.util_mean == pytest.approx(60.0)  # (0 + 50 + 100 + 90) / 4
    assert a.util_peak == 100
    assert a.idle_share == pytest.approx(0.25)  # one sample of four under 5 %
    assert a.mem_peak_bytes == 3 << 30
    # trapezoids: (100+200)/2*10 + (200+300)/2*10 + (300+300)/2*10 = 1500 + 2500 + 3000
    assert a.energy_j == pytest.approx(7000.0)
    # counter: 1600 - 1000 = 600, then a reset: 250 counted from zero → 850 (power is not used)
    assert b.energy_j == pytest.approx(850.0)
    assert b.idle_share == pytest.approx(2 / 3)
    assert report.util_mean == pytest.approx((60.0 + 86 / 3) / 2)
    assert report.energy_j == pytest.approx(7850.0)
    assert len(report.epochs) == 3
    assert report.first_epoch_left_out
    assert report.epoch_time_s == pytest.approx(25.0)  # (20 + 30) / 2: the 40 s first epoch left out
    assert report.throughput_unit == "images/s"
    assert report.throughput == pytest.approx((6000 / 20 + 6000 / 30) / 2)  # 250
    assert report.final == {"val_accuracy": 0.8, "loss": pytest.approx(1 / 3)}
    assert report.outcome == "completed"


def _run(
    name: str, gpus: int, epoch_s: float, rate: float, util: float | None, acc: float = 0.9
) -> RunReport:
    report = RunReport(
        name, world_size=gpus, epoch_time_s=epoch_s, throughput=rate, throughput_unit="images/s"
    )
    report.final = {"val_accuracy": acc}
    if util is not None:
        report.gpus = []
        analysis = RunAnalysis(name, idle_pct=5.0)
        analysis.add(
            gpu_sample(host="n", gpu_id="G", vendor="nvidia", source="sim", time=T0, util_gpu_pct=util)
        )
        report.gpus = analysis.report().gpus
    return report


def _diagnose(report, inefficient):
    """`gputui scale`'s diagnosis with the default thresholds (gputui.monitor.verdicts)."""
    return scale_diagnosis(inefficient, report.util_mean, VerdictSettings())


def test_strong_scaling_bsc_course_figures() -> None:
    """BSC's ResNet50V2 on CIFAR-10: 45 s per epoch on 1 GPU, 24 s on 2, 12 s on 4."""
    runs = [_run("4", 4, 12, 4000, 95), _run("1", 1, 45, 1100, 97), _run("2", 2, 24, 2050, 96)]
    points = compare(runs, diagnose=_diagnose)
    assert [p.gpus for p in points] == [1, 2, 4]
    assert [p.speedup for p in points] == pytest.approx([1.0, 45 / 24, 45 / 12])
    assert [p.efficiency for p in points] == pytest.approx([1.0, 45 / 24 / 2, 45 / 12 / 4])
    assert all(p.diagnosis is None for p in points)  # 94 % efficient: nothing to explain
    assert points[2].accuracy == 0.9 and points[2].accuracy_name == "val_accuracy"


def test_weak_scaling_uses_throughput_per_gpu_and_says_why_it_stalls() -> None:
    points = compare(
        [_run("1", 1, 30, 1000, 95), _run("8", 8, 60, 4000, 30), _run("2", 2, 31, 1800, 90)],
        scaling="weak",
        diagnose=_diagnose,
    )
    assert [p.speedup for p in points] == pytest.approx([1.0, 1.8, 4.0])
    assert [p.efficiency for p in points] == pytest.approx([1.0, 0.9, 0.5])
    assert points[1].diagnosis is None
    assert "input pipeline" in points[2].diagnosis  # 50 % efficient at 30 % utilisation
    busy = compare([_run("1", 1, 30, 1000, 95), _run("4", 4, 20, 2000, 92)], diagnose=_diagnose)
    assert busy[1].efficiency == pytest.approx(30 / 20 / 4)
    assert "communication" in busy[1].diagnosis
    with pytest.raises(ValueError):
        compare([], scaling="sideways")


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        (["completed", "unknown"], "completed"),  # rank 0 finished; rank 1's log has no end line
        (["unknown", "completed"], "completed"),
        (["truncated", "completed", "unknown"], "completed"),
        (["completed", "oom", "nccl_error"], "oom"),  # the first failure: the root cause
        (["unknown", "truncated"], "truncated"),
    ],
)
def test_one_outcome_from_several_outputs(outcomes: list[str], expected: str) -> None:
    from gputui.monitor.state import DashboardState, JobInfo

    records = [event("outcome", time=T0 + i, outcome=o, evidence=f"rank {i}") for i, o in enumerate(outcomes)]
    assert RunAnalysis("r", idle_pct=5.0).add_all(records).report().outcome == expected
    state = DashboardState(JobInfo(kind="local", title="demo"))
    state.ingest(records)
    assert state.final_outcome()[0] == expected  # the dashboard and the report agree


def test_the_idle_threshold_is_the_callers() -> None:
    """No threshold of its own: a sample is idle under the ``idle_pct`` given (the settings' value)."""
    a, b = RunAnalysis("fixture", idle_pct=3.0).add_all(_fixture()).report().gpus
    assert a.idle_share == pytest.approx(0.25)  # util 0 only
    assert b.idle_share == pytest.approx(1 / 3)  # util 2 only (4 is not under 3)
    a, b = RunAnalysis("fixture", idle_pct=60.0).add_all(_fixture()).report().gpus
    assert (a.idle_share, b.idle_share) == (pytest.approx(0.5), pytest.approx(2 / 3))
