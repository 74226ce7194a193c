"""DashboardState: what the record stream makes of GPUs, nodes, training and alerts."""

from __future__ import annotations

import math

import pytest

from gputui.config import AlertThresholds
from gputui.monitor.state import DashboardState, JobInfo
from gputui.stream.records import event, gpu_sample, host_sample, metric

GIB = 1024**3
T0 = 1_800_000_000.0


def new_state(state: str = "RUNNING", **thresholds: float) -> DashboardState:
    return DashboardState(JobInfo(kind="attach", title="job 1", state=state), AlertThresholds(**thresholds))


def gpu(host: str, index: int, util: float | None, t: float, **values):
    values.setdefault("mem_used_bytes", 10 * GIB)
    values.setdefault("mem_total_bytes", 40 * GIB)
    return gpu_sample(
        host=host,
        gpu_id=f"GPU-{host}-{index}",
        vendor="nvidia",
        source="nvml",
        time=t,
        index=index,
        util_gpu_pct=util,
        **values,
    )


def tick(state: DashboardState, utils: dict[str, list[float]], t: float, **values) -> None:
    state.ingest([gpu(host, i, u, t, **values) for host, us in utils.items() for i, u in enumerate(us)])


def kinds(state: DashboardState) -> set[str]:
    return {a.kind for a in state.alerts.active.values()}


# ---------------------------------------------------------------------------- GPUs and nodes


def test_two_hosts_four_gpus_summary():
    state = new_state()
    tick(state, {"node1": [10, 20, 30, 40], "node2": [50, 60, 70, 80]}, T0)
    summary = state.board.summary()
    assert summary["gpus"] == 8
    assert summary["util_min"] == 10
    assert summary["util_median"] == 45
    assert summary["util_max"] == 80
    assert summary["mem_pct"] == pytest.approx(25.0)
    assert summary["nodes"] == 2
    assert summary["nodes_reporting"] == 2
    assert state.records == 8
    assert state.last_time == T0
    assert [g.index for g in state.board.nodes["node1"].ordered()] == [0, 1, 2, 3]
    assert state.board.nodes["node2"].mean_util() == pytest.approx(65.0)


def test_latest_values_win_and_version_moves():
    state = new_state()
    tick(state, {"node1": [10, 20, 30, 40]}, T0)
    version = state.version
    tick(state, {"node1": [90, 90, 90, 90]}, T0 + 1)
    assert state.version > version
    assert state.board.summary()["util_min"] == 90
    assert len(state.board.gpus) == 4  # same GPUs, not new ones
    assert list(state.board.nodes["node1"].ordered()[0].recent) == [10, 90]


def test_same_gpu_id_on_two_hosts_stays_two_gpus():
    state = new_state()
    state.ingest(
        [
            gpu_sample(host=h, gpu_id="GPU-same", vendor="nvidia", source="sim", time=T0, util_gpu_pct=50)
            for h in ("a", "b")
        ]
    )
    assert state.board.summary()["gpus"] == 2


def test_host_record_updates_the_node():
    state = new_state()
    state.ingest([host_sample(host="node1", time=T0, cpu_pct=12.5, mem_used_bytes=1, mem_total_bytes=4)])
    node = state.board.nodes["node1"]
    assert node.cpu_pct == 12.5
    assert node.mem_total == 4


def test_job_wide_util_line_has_one_point_per_second():
    state = new_state()
    for k in range(5):
        tick(state, {"node1": [20, 40], "node2": [60, 80]}, T0 + k + 0.25)
        tick(state, {"node1": [20, 40], "node2": [60, 80]}, T0 + k + 0.75)
    line = state.board.line()
    # the last second is still in progress (flushed by the next bucket)
    assert line.times == [float(int(T0) + k) for k in range(4)]
    assert line.values == [50.0] * 4


def test_node_lost_then_probe_started_revives_it():
    state = new_state()
    tick(state, {"node1": [90] * 4, "node2": [90] * 4}, T0)
    state.ingest([event("node_lost", message="node2 stopped responding", time=T0 + 5, host="node2")])
    node = state.board.nodes["node2"]
    assert node.lost == "node2 stopped responding"
    assert node.lost_time == T0 + 5
    assert state.board.summary()["nodes_reporting"] == 1
    alert = state.alerts.active["node_lost:node2"]
    assert alert.severity == "error"
    assert "node2" in alert.message
    assert state.alerts.latest() is alert
    assert state.notes[-1].level == "error"

    state.ingest([event("probe_started", message="probe on node2", time=T0 + 9, host="node2")])
    assert node.lost is None and node.lost_time is None
    assert state.board.summary()["nodes_reporting"] == 2
    assert "node_lost:node2" not in state.alerts.active
    assert any(a.kind == "node_lost" and not a.active for a in state.alerts.history)


def test_probe_started_for_another_host_does_not_revive():
    state = new_state()
    state.ingest([event("node_lost", message="gone", time=T0, host="node2")])
    state.ingest([event("probe_started", message="probe", time=T0 + 1, host="node1")])
    assert state.board.nodes["node2"].lost == "gone"
    assert "node_lost:node2" in state.alerts.active


# ---------------------------------------------------------------------------- alerts


def test_nan_loss_raises_loss_nonfinite():
    state = new_state()
    state.ingest([metric("loss", 0.5, step=1, epoch=1, time=T0)])
    assert not state.alerts.active
    state.ingest([metric("loss", float("nan"), step=2, epoch=1, time=T0 + 1)])
    alerts = [a for a in state.alerts.active.values() if a.kind == "loss_nonfinite"]
    assert len(alerts) == 1
    assert alerts[0].severity == "error"
    assert "nan" in alerts[0].message and "step 2" in alerts[0].message
    assert state.training.metrics["loss"].nonfinite == "nan"
    assert state.training.metrics["loss"].last == 0.5  # NaN is not charted
    assert state.training.metrics["loss"].by_step.values == [0.5]


def test_inf_in_another_metric_is_not_a_loss_alert():
    state = new_state()
    state.ingest([metric("grad_norm", math.inf, step=1, time=T0)])
    assert "loss_nonfinite" not in kinds(state)
    assert state.training.metrics["grad_norm"].nonfinite == "inf"


def test_idle_gpu_in_a_busy_job_raises_gpu_idle_after_the_threshold_and_clears():
    state = new_state(gpu_idle_minutes=1)
    busy = {"node1": [95, 95, 95, 95], "node2": [95, 95, 95, 95]}
    one_idle = {"node1": [95, 95, 95, 95], "node2": [95, 2, 95, 95]}
    tick(state, busy, T0)
    tick(state, one_idle, T0 + 10)  # idle from T0 + 10
    state.check(now=T0 + 40)
    assert "gpu_idle" not in kinds(state)  # 30 s < 1 min
    tick(state, one_idle, T0 + 71)
    state.check(now=T0 + 71)
    idle = [a for a in state.alerts.active.values() if a.kind == "gpu_idle"]
    assert len(idle) == 1
    assert "node2" in idle[0].message and "GPU 1" in idle[0].message
    assert idle[0].key == "gpu_idle:node2:GPU-node2-1"
    # checked again: not raised twice
    state.check(now=T0 + 80)
    assert sum(1 for a in state.alerts.history if a.kind == "gpu_idle") == 1

    tick(state, busy, T0 + 90)
    state.check(now=T0 + 90)
    assert "gpu_idle" not in kinds(state)
    assert not idle[0].active
    assert idle[0] in state.alerts.history


def test_idle_gpu_is_not_an_alert_when_the_job_is_not_running_or_not_busy():
    stopped = new_state("COMPLETED", gpu_idle_minutes=1)
    tick(stopped, {"node1": [95, 95, 95, 2]}, T0)
    stopped.check(now=T0 + 600)
    assert "gpu_idle" not in kinds(stopped)

    quiet = new_state(gpu_idle_minutes=1)  # the whole job is idle: nothing stands out
    tick(quiet, {"node1": [2, 2, 2, 2]}, T0)
    quiet.check(now=T0 + 600)
    assert "gpu_idle" not in kinds(quiet)


def test_idle_gpu_alert_survives_a_sample_without_utilisation():
    state = new_state(gpu_idle_minutes=1)
    tick(state, {"node1": [95, 95, 95, 1]}, T0)
    state.ingest(
        [gpu_sample(host="node1", gpu_id="GPU-node1-3", vendor="nvidia", source="nvml", time=T0 + 30,
                    index=3, missing={"util_gpu_pct": "error"})]
    )  # fmt: skip
    state.check(now=T0 + 90)  # must not raise on the missing value
    idle = [a for a in state.alerts.active.values() if a.kind == "gpu_idle"]
    assert len(idle) == 1
    assert "util ?%" in idle[0].evidence


def test_memory_nearly_full_raises_mem_high_and_clears():
    state = new_state(mem_high_pct=90)
    state.ingest([gpu("node1", 0, 90, T0, mem_used_bytes=39 * GIB, mem_total_bytes=40 * GIB)])
    state.ingest([gpu("node1", 1, 90, T0, mem_used_bytes=20 * GIB, mem_total_bytes=40 * GIB)])
    state.check(now=T0)
    mem = [a for a in state.alerts.active.values() if a.kind == "mem_high"]
    assert [a.key for a in mem] == ["mem_high:node1:GPU-node1-0"]
    assert "98%" in mem[0].message
    state.ingest([gpu("node1", 0, 90, T0 + 1, mem_used_bytes=10 * GIB, mem_total_bytes=40 * GIB)])
    state.check(now=T0 + 1)
    assert "mem_high" not in kinds(state)


def test_hot_gpu_raises_hot():
    state = new_state(hot_temp_c=80)
    state.ingest([gpu("node1", 0, 90, T0, temp_c=86.0), gpu("node1", 1, 90, T0, temp_c=60.0)])
    state.check(now=T0)
    assert [a.key for a in state.alerts.active.values()] == ["hot:node1:GPU-node1-0"]


def test_straggler_node():
    state = new_state(straggler_gap_pct=30)
    tick(state, {"node1": [95] * 4, "node2": [94] * 4, "node3": [40] * 4}, T0)
    state.check(now=T0)
    stragglers = [a for a in state.alerts.active.values() if a.kind == "straggler"]
    assert [a.key for a in stragglers] == ["straggler:node3"]
    assert "node3" in stragglers[0].message
    # node3 catches up: the alert clears
    tick(state, {"node1": [95] * 4, "node2": [94] * 4, "node3": [90] * 4}, T0 + 1)
    state.check(now=T0 + 1)
    assert "straggler" not in kinds(state)


def test_a_lost_node_is_not_a_straggler():
    state = new_state()
    tick(state, {"node1": [95] * 4, "node2": [94] * 4, "node3": [10] * 4}, T0)
    state.ingest([event("node_lost", message="gone", time=T0, host="node3")])
    state.check(now=T0)
    assert "straggler" not in kinds(state)


def test_no_output_for_a_while_raises_no_output():
    state = new_state(no_output_minutes=1)
    state.text("rank-0.out", b"epoch 1\n", now=T0)
    state.check(now=T0 + 30)
    assert "no_output" not in kinds(state)
    state.check(now=T0 + 61)
    assert "no_output" in kinds(state)
    state.text("rank-0.out", b"epoch 2\n", now=T0 + 62)
    state.check(now=T0 + 62)
    assert "no_output" not in kinds(state)


def test_oom_outcome_raises_an_error_alert():
    state = new_state()
    state.ingest(
        [
            event(
                "outcome",
                outcome="oom",
                message="CUDA out of memory on rank 3",
                evidence="torch.OutOfMemoryError: CUDA out of memory.",
                time=T0,
            )
        ]
    )
    assert state.outcome is not None and state.outcome.get("outcome") == "oom"
    alert = state.alerts.active["outcome:oom"]
    assert alert.kind == "oom" and alert.severity == "error"
    assert "out of memory" in alert.message
    assert state.alerts.latest() is alert


def test_completed_outcome_raises_no_alert():
    state = new_state()
    state.ingest([event("outcome", outcome="completed", message="finished", time=T0)])
    assert state.outcome is not None
    assert not state.alerts.active


def test_error_event_with_a_signal_raises_once_per_rank():
    state = new_state()
    nccl = {"signal": "nccl_error", "host": "node1", "time": T0}
    state.ingest(
        [
            event("error", message="NCCL error 1", rank=0, **nccl),
            event("error", message="NCCL error 2", rank=0, **nccl),
            event("error", message="NCCL error 3", rank=1, **nccl),
        ]
    )
    assert sorted(a.key for a in state.alerts.active.values()) == ["nccl_error:node1:0", "nccl_error:node1:1"]
    assert all(a.severity == "error" for a in state.alerts.active.values())


def test_errors_come_before_warnings_in_the_banner():
    state = new_state(mem_high_pct=50)
    state.ingest([gpu("node1", 0, 90, T0 + 100, mem_used_bytes=39 * GIB)])
    state.ingest([event("node_lost", message="node2 gone", time=T0, host="node2")])
    state.check(now=T0 + 100)
    latest = state.alerts.latest()
    assert latest is not None and latest.kind == "node_lost"


def test_job_state_event_sets_the_state_and_end_time():
    state = new_state()
    state.ingest([event("job_state", state="COMPLETED", message="done", time=T0 + 5)])
    assert state.job.state == "COMPLETED"
    assert state.job.ended == T0 + 5
    assert not state.job.running


# ---------------------------------------------------------------------------- training


def epoch_end(epoch: int, seconds: float, t: float, rank: int | None = None):
    return metric("epoch_time_s", seconds, epoch=epoch, epoch_base=1, rank=rank, time=t, scope="epoch")


def test_train_started_gives_epochs_total_and_eta():
    state = new_state()
    state.ingest([event("train_started", message="training", epochs=10, world_size=8, time=T0)])
    assert state.training.epochs_total == 10
    assert state.training.world_size == 8
    assert state.training.eta_s() is None  # no epoch finished yet
    state.ingest(
        [
            epoch_end(1, 30.0, T0 + 30),  # the first epoch (start-up) is left out of the mean
            epoch_end(2, 10.0, T0 + 40),
            epoch_end(3, 12.0, T0 + 52),
        ]
    )
    assert state.training.epoch_times() == [30.0, 10.0, 12.0]
    assert state.training.epoch_display() == 3
    assert state.training.eta_s() == pytest.approx(7 * 11.0)


def test_eta_beyond_the_time_limit():
    state = new_state()
    state.job.started = T0
    state.job.time_limit_s = 100.0
    state.clock = T0 + 50
    state.ingest([event("train_started", message="training", epochs=10, time=T0)])
    state.ingest([epoch_end(1, 10.0, T0 + 10), epoch_end(2, 10.0, T0 + 20)])
    assert state.training.eta_s() == pytest.approx(80.0)
    assert state.elapsed_s() == pytest.approx(50.0)
    assert state.eta_beyond_limit()  # 50 s elapsed + 80 s to go > 100 s limit
    state.job.time_limit_s = 200.0
    assert not state.eta_beyond_limit()


def test_metrics_by_step_epoch_and_names():
    state = new_state()
    state.ingest(
        [
            metric("loss", 2.0, step=1, epoch=1, time=T0),
            metric("loss", 1.5, step=2, epoch=1, time=T0 + 1),
            metric("acc", 0.3, step=2, epoch=1, time=T0 + 1),
            metric("val_loss", 1.7, epoch=1, time=T0 + 2, scope="epoch"),
        ]
    )
    training = state.training
    assert training.names() == ["loss", "val_loss", "accuracy"]
    axis, series = training.metrics["loss"].x_axis()
    assert axis == "step" and series.times == [1.0, 2.0] and series.values == [2.0, 1.5]
    assert training.metrics["val_loss"].x_axis()[0] == "epoch"
    assert training.step == 2


def test_the_lowest_rank_speaks_for_the_job():
    state = new_state()
    # rank 1 prints first; rank 0 then speaks and rank 1 is no longer charted
    state.ingest([metric("loss", 9.0, step=1, epoch=1, rank=1, time=T0)])
    assert state.training.rank == 1
    state.ingest(
        [
            metric("loss", 1.0, step=1, epoch=1, rank=0, time=T0 + 1),
            metric("loss", 9.5, step=2, epoch=1, rank=1, time=T0 + 2),
            metric("loss", 0.9, step=2, epoch=1, rank=0, time=T0 + 3),
            metric("loss", 9.9, step=3, epoch=1, rank=1, time=T0 + 4),
        ]
    )
    loss = state.training.metrics["loss"]
    assert state.training.rank == 0
    assert loss.last == 0.9
    assert loss.by_step.values == [1.0, 0.9]
    assert loss.by_time.values == [1.0, 0.9]
    assert state.training.step == 2  # rank 1's step 3 is not the job's


def test_a_nan_from_a_silent_rank_still_alerts():
    state = new_state()
    state.ingest(
        [
            metric("loss", 1.0, step=1, rank=0, time=T0),
            metric("loss", float("nan"), step=1, rank=3, time=T0),
        ]
    )
    assert "loss_nonfinite" in kinds(state)
    assert state.training.metrics["loss"].nonfinite is None  # the chart of rank 0 is clean


def test_unlabelled_values_speak_only_until_a_rank_does():
    state = new_state()
    state.ingest([metric("loss", 5.0, step=1, time=T0)])  # e.g. a banner parsed before any rank spoke
    assert state.training.rank is None
    assert state.training.metrics["loss"].last == 5.0
    state.ingest(
        [
            metric("loss", 1.0, step=2, rank=0, time=T0 + 1),
            metric("loss", 7.0, step=3, time=T0 + 2),  # unlabelled again: no longer the job's voice
            metric("loss", 0.8, step=3, rank=0, time=T0 + 3),
        ]
    )
    assert state.training.rank == 0
    assert state.training.metrics["loss"].last == 0.8
    assert 7.0 not in state.training.metrics["loss"].by_step.values


def test_a_lost_nodes_last_values_count_in_no_summary_and_raise_no_idle_alert():
    """node2 went idle, then was lost: its stale 0 % is not the job's minimum and is no idle GPU."""
    state = new_state(gpu_idle_minutes=1)
    for t in range(0, 200, 10):
        tick(state, {"node1": [95.0, 95.0], **({"node2": [0.0, 0.0]} if t < 30 else {})}, T0 + t)
    state.ingest([event("node_lost", message="probe silent", time=T0 + 40, host="node2")])
    state.check(now=T0 + 200)
    summary = state.board.summary()
    assert (summary["util_min"], summary["util_max"], summary["nodes_reporting"]) == (95.0, 95.0, 1)
    assert "gpu_idle" not in kinds(state)
    assert "node_lost" in kinds(state)


def test_lightning_loss_names_are_the_training_loss():
    """Lightning logs ``train_loss_step``/``train_loss_epoch`` (canonical ``loss_step``/``loss_epoch``):
    the summary and the jobs list show them as the loss."""
    from gputui.monitor.summary import job_figures, summary_lines

    state = DashboardState(JobInfo(kind="replay", title="lightning"))
    state.ingest([metric("loss_epoch", 2.0, epoch=0, epoch_base=0, scope="epoch", time=1.0)])
    state.ingest([metric("loss_epoch", 0.5, epoch=1, epoch_base=0, scope="epoch", time=2.0)])
    assert "; loss 2.0000 → 0.5000" in summary_lines(state)[2]
    assert job_figures(state)[1] == 0.5
    state.ingest([metric("loss_step", 0.7, step=40, time=3.0)])
    assert job_figures(state)[1] == 0.7  # the per-step value is the newer view of the loss
