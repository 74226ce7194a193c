"""The verdict rules on generated jobs: each unhealthy job gets exactly its finding (where, span, the
numbers), the healthy 1-node and 2-node runs get none; thresholds come from the settings; the engine's
memory stays bounded on a long job."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from gputui.config import AlertThresholds, VerdictSettings, load_config
from gputui.home.settings_text import settings_text
from gputui.monitor.conditions import Level
from gputui.monitor.verdicts import VerdictEngine, judge
from gputui.monitor.verdicts.findings import hms
from gputui.monitor.verdicts.windows import MAX_WINDOWS
from gputui.stream.records import gpu_sample

sys.path.insert(0, str(Path(__file__).resolve().parent))
import verdict_jobs as jobs
from verdict_jobs import T0


def only(records, kind: str):
    found = judge(records)
    assert [f.kind for f in found] == [kind], [f.line() for f in found]
    return found[0]


@pytest.mark.parametrize("make", [jobs.healthy_one_node, jobs.healthy_two_nodes])
def test_healthy_runs_get_no_verdict(make) -> None:
    assert judge(make()) == []


def test_straggler_node_names_the_node_its_numbers_and_its_three_minutes() -> None:
    found = only(jobs.straggler_node(), "straggler_node")
    assert found.where == "node2" and found.level is Level.WARNING
    assert (found.start, found.end) == (T0 + 120, T0 + 300)
    assert found.evidence.startswith("GPUs 30 % vs 94 % on node1")
    assert found.line().startswith("node2 straggler: GPUs 30 % vs 94 % on node1")
    assert found.line().endswith("(0:03:00)")


def test_straggler_node_threshold_comes_from_the_settings() -> None:
    wide_gap = AlertThresholds(straggler_gap_pct=70)
    assert [f.kind for f in judge(jobs.straggler_node(), wide_gap)] == []
    longer = VerdictSettings(sustain_minutes=4)
    assert judge(jobs.straggler_node(), settings=longer) == []


def test_straggler_gpu() -> None:
    found = only(jobs.straggler_gpu(), "straggler_gpu")
    assert found.where == "node1 GPU 2" and (found.start, found.end) == (T0 + 180, T0 + 420)
    assert found.evidence.startswith("40 % vs 94 %")


def test_idle_gpu_the_job_holds() -> None:
    found = only(jobs.idle_gpu(), "idle_gpu")
    assert found.where == "node1 GPU 3" and found.what == "idle all along"
    assert found.evidence == "0 % vs 94 % on the other GPUs"


def test_straggler_rank_from_megatron_min_max_lines() -> None:
    found = only(jobs.straggler_rank_megatron(), "straggler_rank")
    assert found.where == "rank 5"
    assert "slowest in 40 of 40 min/max lines" in found.evidence and "rank_step_time_ms 410" in found.evidence


def test_straggler_rank_from_per_rank_step_times() -> None:
    found = only(jobs.straggler_rank_means(), "straggler_rank")
    assert (
        found.where == "rank 3"
        and "step_time_s 0.8" in found.evidence
        and "0.5 on the other 7" in found.evidence
    )


def test_straggler_rank_from_nccl_inspector_is_the_one_the_others_wait_for() -> None:
    found = only(jobs.straggler_rank_nccl(), "straggler_rank")
    assert found.where == "rank 6 of DP Group 0" and "1500 µs vs 9000 µs" in found.evidence


def test_input_bound_from_bursts_while_the_cpu_is_saturated() -> None:
    found = only(jobs.input_bound_bursts(), "input_bound")
    assert (
        found.where == "node1" and "50 % of samples" in found.evidence and "CPU is at 98 %" in found.evidence
    )


def test_input_bound_from_the_data_time_share() -> None:
    found = only(jobs.input_bound_data_time(), "input_bound")
    assert found.where == "job" and "data_time_s is 45 % of the step time" in found.evidence
    assert judge(jobs.input_bound_data_time(), settings=VerdictSettings(input_share_pct=50)) == []


def test_communication_bound_from_busy_gpus_at_low_power_on_two_nodes() -> None:
    found = only(jobs.comm_bound(), "comm_bound")
    assert "85 % busy at 30 % of their power limit on 2 nodes" in found.evidence


def test_communication_bound_from_the_nccl_share() -> None:
    found = only(jobs.comm_bound_nccl(), "comm_bound")
    assert "NCCL collectives 60 % of the wall time" in found.evidence


@pytest.mark.parametrize(("util", "says"), [(0.0, "GPUs idle (0 %)"), (100.0, "GPUs pinned at 100 %")])
def test_hang_says_whether_the_gpus_are_idle_or_pinned(util: float, says: str) -> None:
    records = jobs.hang(util)
    found = only(records, "hang")
    assert found.level is Level.CRITICAL and says in found.evidence
    last_step = max(r.time for r in records if r.kind == "metric")
    assert found.start == last_step and found.end == max(r.time for r in records)
    assert f"no new metric for {hms(found.end - found.start)}" in found.evidence


def test_no_hang_once_the_job_ended_or_while_its_output_grows() -> None:
    engine = VerdictEngine().add_all(jobs.hang(0.0))
    assert [f.kind for f in engine.findings(running=False)] == []
    end = max(r.time for r in jobs.hang(0.0))
    engine.output_grew(end - 60)  # the job still prints (a long evaluation without metrics)
    assert [f.kind for f in engine.findings(now=end, running=True)] == []
    assert [f.kind for f in engine.findings(now=end + 11 * 60, running=True)] == ["hang"]


def test_memory_creep() -> None:
    found = only(jobs.memory_creep(), "memory_creep")
    assert (
        found.where == "node1 GPUs 0, 1" and "of 80 GiB" in found.evidence and "full in ~" in found.evidence
    )


def test_throttled_clock_while_busy() -> None:
    found = only(jobs.throttled_clock(), "throttle_clock")
    assert found.where == "node1 GPU 1" and (found.start, found.end) == (T0 + 180, T0 + 480)
    assert "SM clock 900 MHz vs 1410 MHz" in found.evidence


def test_hot_gpu_uses_the_alerts_hot_threshold() -> None:
    found = only(jobs.hot_gpu(), "throttle_hot")
    assert found.where == "node1 GPU 0" and "88°C" in found.evidence
    assert judge(jobs.hot_gpu(), AlertThresholds(hot_temp_c=90)) == []


def test_power_at_the_limit_is_a_notice() -> None:
    found = only(jobs.power_capped(), "throttle_power")
    assert found.level is Level.NOTICE and found.where == "node1 GPUs 0, 1"


def test_memory_stays_bounded_on_a_month_long_job() -> None:
    engine = VerdictEngine()
    for i in range(0, 30 * 86400, 30):
        engine.add(
            gpu_sample(host="n", gpu_id="G", vendor="nvidia", source="nvml", time=T0 + i, util_gpu_pct=90)
        )
    windows = engine.windows.gpus[("n", "G")].windows or {}
    assert len(windows) <= MAX_WINDOWS and engine.windows.width >= 30 * 86400 / MAX_WINDOWS
    assert sum(w.util_n for w in windows.values()) == 30 * 86400 // 30  # merged, nothing lost
    assert engine.findings() == []


def test_the_verdict_section_of_the_settings_file(tmp_path: Path) -> None:
    path = tmp_path / "gputui.toml"
    path.write_text("[verdict]\nsustain_minutes = 5\nrank_gap_pct = 50\n", encoding="utf-8")
    config = load_config({"GPUTUI_CONFIG": str(path)})
    assert config.verdict == replace(VerdictSettings(), sustain_minutes=5.0, rank_gap_pct=50.0)
    shown = settings_text(config).splitlines()  # the S screen lists them with the rest
    assert shown[shown.index("[verdict]") + 2] == "sustain_minutes = 5"
    path.write_text("[verdict]\ncpu_busy_pct = 150\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"gputui.toml:2: verdict.cpu_busy_pct must be from 0 to 100 %"):
        load_config({"GPUTUI_CONFIG": str(path)})


def test_input_bound_when_the_data_time_grows_without_a_step_time() -> None:
    data = [jobs.metric("data_time", 0.05 * (1 + s // 10), step=s, time=T0 + 10 * s + 1) for s in range(60)]
    found = only(jobs.job(1, 4, 10, data=data), "input_bound")
    assert found.evidence == "data_time grew from 0.05 to 0.3"


def test_straggler_rank_from_a_rate_is_the_lowest_one() -> None:
    rates = [
        jobs.metric("images_per_s", 700.0 if rank == 2 else 1000.0, step=s, rank=rank, time=T0 + 10 * s + 2)
        for s in range(30)
        for rank in range(4)
    ]
    found = only(jobs.job(1, 4, 10, rates=rates), "straggler_rank")
    assert found.where == "rank 2" and found.evidence.startswith("images_per_s 700 vs 1000")
