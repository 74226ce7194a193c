"""The one classifier of GPU, node and output conditions, on generated samples: each rule's boundaries."""

from __future__ import annotations

import pytest

from gputui.config import AlertThresholds
from gputui.monitor.conditions import Condition, Level, classify, util_level, worst
from gputui.monitor.gpus import GpuBoard
from gputui.monitor.logtext import LogText
from gputui.stream.records import gpu_sample

GIB = 1024**3
T0 = 1_800_000_000.0
TH = AlertThresholds()  # the defaults: idle 2 min under 5 %, busy from 30 %, mem 95 %, hot 85 °C, gap 30


def sample(host: str, index: int, util: float | None, t: float = T0, **values):
    values.setdefault("mem_used_bytes", 10 * GIB)
    values.setdefault("mem_total_bytes", 40 * GIB)
    values.setdefault("temp_c", 60.0)
    return gpu_sample(
        host=host, gpu_id=f"GPU-{host}-{index}", vendor="nvidia", source="nvml", time=t, index=index,
        util_gpu_pct=util, **values,
    )  # fmt: skip


def board_of(utils: dict[str, list[float]], t: float = T0, **values) -> GpuBoard:
    board = GpuBoard(idle_util_pct=TH.idle_util_pct)
    feed(board, utils, t, **values)
    return board


def feed(board: GpuBoard, utils: dict[str, list[float]], t: float, **values) -> None:
    for host, us in utils.items():
        for index, util in enumerate(us):
            board.add_gpu(sample(host, index, util, t, **values))


def found(
    board: GpuBoard, now: float = T0, running: bool = True, th: AlertThresholds = TH
) -> list[Condition]:
    return list(classify(board, th, now, running))


def test_healthy_gpus_give_no_condition():
    board = board_of({"node1": [95, 90, 88, 99], "node2": [91, 93, 97, 89]})
    assert found(board, now=T0 + 3600) == []
    assert found(board, running=False) == []


def test_idle_gpu_is_a_notice_from_30_s_and_a_warning_from_gpu_idle_minutes():
    board = board_of({"node1": [95, 95, 95, 95]})
    feed(board, {"node1": [95, 95, 95, 0]}, T0 + 10)  # idle since T0 + 10

    def idle_at(seconds: float) -> list[tuple[Level, str]]:
        return [(c.level, c.label) for c in found(board, now=T0 + 10 + seconds) if c.kind == "gpu_idle"]

    assert idle_at(29.9) == []
    assert idle_at(30) == [(Level.NOTICE, "idle 30s")]
    assert idle_at(90) == [(Level.NOTICE, "idle 2m")]
    assert idle_at(119.9) == [(Level.NOTICE, "idle 2m")]
    assert idle_at(120) == [(Level.WARNING, "idle 2m")]
    (condition,) = [c for c in found(board, now=T0 + 10 + 210) if c.kind == "gpu_idle"]
    assert condition.key == "gpu_idle:node1:GPU-node1-3"
    assert condition.reason == "node1 GPU 3 idle for 4 min while the job runs"
    assert condition.evidence == "util 0% since 210 s; job median 95%"
    assert found(board, now=T0 + 600, running=False) == []  # an ended job's GPUs idle by nature


def test_idle_counts_only_while_the_median_gpu_is_busy():
    at_busy = board_of({"node1": [30, 30, 30, 0]})  # median exactly busy_util_pct
    assert [c.kind for c in found(at_busy, now=T0 + 600)] == ["gpu_idle"]
    below = board_of({"node1": [29.9, 29.9, 29.9, 0]})
    assert found(below, now=T0 + 600) == []


@pytest.mark.parametrize(("used_gib", "level"), [(37.9, None), (38.0, Level.WARNING), (40.0, Level.WARNING)])
def test_memory_is_high_from_mem_high_pct(used_gib: float, level: Level | None):
    board = board_of({"node1": [90]}, mem_used_bytes=int(used_gib * GIB))  # 38 of 40 GiB = 95 %
    conditions = found(board)
    assert [c.level for c in conditions] == ([level] if level else [])
    if level:
        assert (conditions[0].kind, conditions[0].label) == ("mem_high", "mem")
        assert conditions[0].reason == f"node1 GPU 0 memory {100 * used_gib / 40:.0f}% full"


@pytest.mark.parametrize(("temp", "hot"), [(84.9, False), (85.0, True), (95.0, True)])
def test_a_gpu_is_hot_from_hot_temp_c(temp: float, hot: bool):
    conditions = found(board_of({"node1": [90]}, temp_c=temp))
    assert [(c.kind, c.level) for c in conditions] == ([("hot", Level.WARNING)] if hot else [])


@pytest.mark.parametrize(("slow", "straggler"), [(65.1, False), (65.0, True), (10.0, True)])
def test_a_node_is_a_straggler_from_straggler_gap_pct_below_the_median(slow: float, straggler: bool):
    board = board_of({"node1": [95] * 4, "node2": [95] * 4, "node3": [slow] * 4})  # median 95
    conditions = found(board)
    assert [(c.kind, c.subject) for c in conditions] == ([("straggler", "node3")] if straggler else [])
    if straggler:
        assert conditions[0].evidence == f"node mean {slow:.0f}% vs job median 95%"


def test_a_recorded_runs_straggler_counts_but_one_node_or_an_idle_job_has_none():
    lagging = board_of({"node1": [95] * 4, "node2": [95] * 4, "node3": [40] * 4})
    assert [c.kind for c in found(lagging, running=False)] == ["straggler"]  # the samples say it ran
    assert found(board_of({"node1": [95, 95, 95, 95, 95, 0, 0]})) == []  # one node: nobody to lag
    assert found(board_of({"node1": [20] * 4, "node2": [20] * 4, "node3": [0] * 4})) == []  # not busy


def test_a_lost_node_is_lost_and_nothing_else():
    board = board_of(
        {"node1": [95] * 2, "node2": [95] * 2, "node3": [0] * 2}, mem_used_bytes=40 * GIB, temp_c=99.0
    )
    board.lose_node("node3", "probe silent", T0)
    conditions = found(board, now=T0 + 600)
    lost = [c for c in conditions if c.subject.startswith("node3")]
    assert {(c.kind, c.level, c.label) for c in lost} == {("lost", Level.CRITICAL, "LOST")}
    assert len(lost) == 3  # the node and its two GPUs
    assert {c.kind for c in conditions if not c.subject.startswith("node3")} == {"mem_high", "hot"}


def test_no_output_from_no_output_minutes_while_the_job_runs():
    log = LogText("rank-0.out")
    log.feed(b"epoch 1\n", T0)
    board = GpuBoard()
    quiet = lambda s, running=True: list(classify(board, TH, T0 + s, running, [log]))  # noqa: E731
    assert quiet(599.9) == []
    (condition,) = quiet(600)
    assert (condition.kind, condition.level, condition.key) == (
        "no_output",
        Level.WARNING,
        "no_output:rank-0.out",
    )
    assert quiet(3600, running=False) == []


def test_utilisation_levels_and_worst():
    assert [util_level(u) for u in (None, 0, 19.9, 20, 59.9, 60, 100)] == [
        Level.WARNING, Level.WARNING, Level.WARNING, Level.NOTICE, Level.NOTICE, Level.OK, Level.OK,
    ]  # fmt: skip
    board = board_of({"node1": [95, 95]}, temp_c=90.0)
    assert worst(found(board)) is Level.WARNING
    assert worst([]) is Level.OK
