"""Reading a followed log again once a pattern is taught (issue 22.5): the follower's re-read hook and the
local-run source (a real command as two ranks) that uses it.

The log is in a format the extractor does not read (``[120] => 0.5213 @ 310ms``, the log of
``tests/logs/test_taught.py``): before the pattern its lines are counted as unread, after it every value
is read at its step, once; the text is not given to the log pane a second time.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_local_source import python_spec, start

from gputui.logs.follower import LogFollower
from gputui.logs.formats import taught
from gputui.monitor.state import DashboardState
from gputui.sources.local import LocalRunSource

sys.path.insert(0, str(Path(__file__).parent.parent / "logs"))
from test_taught import PATTERN, STEPS, _loss, write_log

DEADLINE = 20.0


@pytest.fixture(autouse=True)
def no_patterns() -> Iterator[None]:
    taught.TEACHING.configure([])
    yield
    taught.TEACHING.configure([])


def teach() -> None:
    taught.TEACHING.add(taught.Taught(taught.compile_pattern(PATTERN)))


def losses(records) -> dict[int, float]:
    return {r["step"]: r["value"] for r in records if r.kind == "metric" and r["name"] == "loss"}


@pytest.mark.parametrize("max_bytes", [1 << 20, 4096])  # one read, and a catch-up in many
def test_reread_parses_what_was_read_again_with_the_pattern_and_shows_no_text_twice(
    tmp_path: Path, max_bytes: int
) -> None:
    log = write_log(tmp_path / "train.log")
    shown: list[bytes] = []
    counts: list[tuple] = []
    follower = LogFollower(log, max_bytes=max_bytes, on_data=shown.append, on_unread=counts.append)
    assert losses(follower.poll(max_rounds=10_000)) == {}
    lines, shapes, examples = counts[-1]
    assert (lines, shapes, examples) == (STEPS, 1, ((STEPS, "[1] => 4.9960 @ 310ms"),))
    text = b"".join(shown)

    teach()
    records = follower.reread()
    assert all(r["time_source"] == "estimated" for r in records if r.kind == "metric")
    again = losses(records)
    if max_bytes > len(text):
        assert again == {step: _loss(step) for step in range(1, STEPS + 1)}
    else:  # caught up in catch-up mode, as a first read of it: fewer steps, each the log's value
        assert again == {step: _loss(step) for step in again} and {1, STEPS} <= set(again)
    assert counts[-1] == (0, 0, ()) and b"".join(shown) == text

    with log.open("a") as f:  # what comes next is read with the pattern too, once
        f.write("[3001] => 2.9000 @ 300ms\n[3002] => 2.8000 @ 300ms")  # the last line unfinished
    assert losses(follower.poll()) == {3001: 2.9}
    assert losses(follower.finish()) == {3002: 2.8}
    assert b"".join(shown) == log.read_bytes()


def test_a_local_run_reads_its_output_again_when_a_pattern_is_taught(tmp_path: Path) -> None:
    """Each rank prints the log, then waits for a file: the pattern is taught while the run goes on."""
    go = tmp_path / "go"
    code = (
        "import os, sys, time\n"
        f"sys.stdout.write(open({str(write_log(tmp_path / 'train.log'))!r}).read())\n"
        "sys.stdout.flush()\n"
        f"while not os.path.exists({str(go)!r}):\n"
        "    time.sleep(0.05)\n"
        "print('[3001] => 2.9000 @ 300ms', flush=True)\n"
    )
    source = LocalRunSource(python_spec(code, ranks=1), simulated=True, interval=0.2, folder=tmp_path)
    state = source.new_state()
    feed, thread, errors = start(source)

    def wait(condition, what: str) -> DashboardState:
        nonlocal state
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            state = feed.apply(state)
            if condition():
                return state
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}")

    try:
        wait(lambda: state.training.unread_total() == (STEPS, 1), "the unread count")
        assert state.training.metrics == {}
        text = state.logs[str(tmp_path / "rank-0.out")].view()
        teach()
        assert source.relearn("read again")
        wait(lambda: state.training.step == STEPS, "the output read again")
        assert state.training.unread == {} and state.status.message == "read again"
        assert state.training.metrics["loss"].last == _loss(STEPS)
        assert state.logs[str(tmp_path / "rank-0.out")].view() == text
        go.touch()
        thread.join(DEADLINE)
        assert not thread.is_alive() and not errors
        state = feed.apply(state)
        assert state.job.state == "COMPLETED" and state.training.step == 3001
        assert state.analysis.steps.summary().done == 3001
        assert not source.relearn()  # the run has ended: nothing follows its output any more
    finally:
        go.touch()
        source.stop()
