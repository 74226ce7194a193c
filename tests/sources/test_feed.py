"""Feed: the thread-safe hand-over from a record source to the dashboard state."""

from __future__ import annotations

import threading
import time

from gputui.monitor.state import DashboardState, JobInfo
from gputui.sources.base import Feed
from gputui.stream.records import gpu_sample, metric

T0 = 1_800_000_000.0


def new_state(title: str = "job 1") -> DashboardState:
    return DashboardState(JobInfo(kind="attach", title=title))


def sample(i: int, t: float = T0):
    return gpu_sample(host="n1", gpu_id=f"GPU-{i}", vendor="nvidia", source="sim", time=t, util_gpu_pct=50)


def test_apply_moves_everything_into_the_state():
    feed = Feed()
    state = new_state()
    feed.records([sample(0), sample(1)])
    feed.record(metric("loss", 0.5, step=1, time=T0))
    feed.text("rank-0.out", b"hello\nwor")
    feed.text("rank-0.out", b"ld\n")
    feed.job(name="train", state="RUNNING", time_limit_s=3600.0)
    feed.say("warning", "probe slow")
    version = state.version

    assert feed.apply(state) is state
    assert state.records == 3
    assert len(state.board.gpus) == 2
    assert state.training.metrics["loss"].last == 0.5
    assert state.logs["rank-0.out"].view() == ["hello", "world"]
    assert state.job.name == "train"
    assert state.job.state == "RUNNING"
    assert state.job.time_limit_s == 3600.0
    assert state.status is not None
    assert (state.status.level, state.status.message) == ("warning", "probe slow")
    assert state.notes[-1].message == "probe slow"
    assert state.version > version
    # drained: a second apply changes nothing
    version = state.version
    feed.apply(state)
    assert state.version == version
    assert state.records == 3


def test_job_final_state_stamps_the_end():
    feed = Feed()
    state = new_state()
    feed.job(state="COMPLETED")
    feed.apply(state)
    assert state.job.state == "COMPLETED"
    assert state.job.ended is not None


def test_text_reset_marks_the_log():
    feed = Feed()
    state = new_state()
    feed.text("out", b"before\n")
    feed.text_reset("out", "truncated")
    feed.text("out", b"after\n")
    feed.apply(state)
    view = state.logs["out"].view()
    assert view[0] == "before"
    assert "truncated" in view[1]
    assert view[2] == "after"


def test_empty_inputs_are_not_queued():
    calls = []
    feed = Feed(lambda: calls.append(1))
    feed.records([])
    feed.text("out", b"")
    assert feed.drain() == []
    assert calls == []


def test_notify_once_per_empty_to_non_empty_transition():
    calls = []
    feed = Feed(lambda: calls.append(1))
    for i in range(50):
        feed.record(sample(i))
    feed.say("info", "x")
    feed.text("out", b"abc")
    assert len(calls) == 1
    feed.apply(new_state())
    assert len(calls) == 1
    feed.record(sample(99))
    feed.record(sample(100))
    assert len(calls) == 2


def test_replace_state_swaps_the_state():
    feed = Feed()
    old, new = new_state("old"), new_state("replay at 12:00")
    feed.record(sample(0))
    feed.replace_state(new)
    feed.record(sample(1, T0 + 1))
    result = feed.apply(old)
    assert result is new
    assert old.records == 1  # what came before the swap went to the old state
    assert new.records == 1  # what came after it goes to the new one
    assert list(new.board.gpus) == ["n1\0GPU-1"]


def test_back_pressure_blocks_the_producer_until_the_consumer_drains():
    feed = Feed(max_pending=2)
    done = threading.Event()

    def produce() -> None:
        for i in range(6):
            feed.record(sample(i))
        done.set()

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    # 3 records are pending (> 2): the 4th waits
    assert not done.wait(0.5)
    assert thread.is_alive()
    state = new_state()
    deadline = time.monotonic() + 5
    while not done.is_set() and time.monotonic() < deadline:
        feed.apply(state)
        time.sleep(0.02)
    assert done.is_set()
    thread.join(5)
    feed.apply(state)
    assert state.records == 6


def test_closed_releases_a_blocked_producer():
    feed = Feed(max_pending=1)
    feed.records([sample(0), sample(1)])  # 2 pending > 1
    done = threading.Event()

    def produce() -> None:
        feed.record(sample(2))
        done.set()

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    assert not done.wait(0.5)
    feed.closed.set()
    assert done.wait(5)
    thread.join(5)
    assert len(feed.drain()) == 2  # the record was still queued, nobody waits any more
