"""A replayed log without printed times is placed on the timeline by the durations it prints (issue 25,
"true text"): the elapsed time on screen is the log's own, not one second per record.

- nanoGPT-style ``dt: 312.50ms`` for steps 0..12,000: 12,001 × 0.3125 s ≈ 1:02:30 (it read 20:00:05);
- a Keras log's printed epoch times (``12s``, ``11s``, ``11s``): 34 s, still no epoch time measured;
- a Megatron log printing every 10th iteration: 300 iterations × 850 ms (each printed mean stands for its
  interval), and a relaunch appended to the file goes on after the first run;
- a log with neither: no elapsed time at all (``no clock in the log``);
- a log with printed timestamps: its times as printed (the step times it also prints do not move them);
- lines appended while following get the time they are read.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import keras_log
import pytest
import step_logs

from gputui.config import Config
from gputui.logs.catchup import PREVIEW_MIN_BYTES
from gputui.monitor.state import DashboardState
from gputui.sources.base import Feed
from gputui.sources.replay import ReplaySource
from gputui.tui.widgets.header import header_text

MTIME = 1_800_000_000.0


def replayed(path: Path) -> DashboardState:
    """The dashboard state of ``gputui replay PATH`` once everything is read (the cursor at the end)."""
    os.utime(path, (MTIME, MTIME))
    source = ReplaySource([str(path)], follow=False)
    feed = Feed()
    source.run_to_end(feed)
    return feed.apply(source.new_state(Config().alerts))


def write(path: Path, lines: Sequence[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def megatron_untimed(iterations: range) -> list[str]:
    return [
        f" iteration {it:8d}/ 500 | elapsed time per iteration (ms): 850.0 | lm loss: {9 - it / 100:.4f} |"
        for it in iterations
    ]


def test_a_nanogpt_log_lasts_its_printed_step_times(tmp_path: Path) -> None:
    state = replayed(step_logs.nanogpt(tmp_path / "nano.log"))
    elapsed = state.elapsed_s()
    assert elapsed is not None and abs(elapsed - 12_001 * 0.3125) <= 0.3125  # ±1 step
    assert state.now() == MTIME  # the last step ends at the file's mtime
    assert " RECORDED 01:02:30 " in header_text(state).plain
    line = state.training.step_time  # the timeline's time axis: the steps' own times
    assert abs((line.times[-1] - line.times[0]) - 12_000 * 0.3125) < 1e-6
    assert not state.clockless


def test_a_large_log_read_thinned_still_lasts_its_step_times(tmp_path: Path) -> None:
    """A log over 16 MiB is read in catch-up mode, which keeps only some steps: the steps between them
    still count (250,001 steps at 312.5 ms, not the kept ones only, nor a first step standing for 128)."""
    path = step_logs.nanogpt(tmp_path / "big.log", last=250_000, planned=300_000)
    assert path.stat().st_size >= PREVIEW_MIN_BYTES
    state = replayed(path)
    assert state.elapsed_s() == pytest.approx(250_001 * 0.3125)


def test_a_keras_log_lasts_its_printed_epoch_times_and_they_stay_printed(tmp_path: Path) -> None:
    state = replayed(write(tmp_path / "keras.log", keras_log.LINES))
    assert state.elapsed_s() == pytest.approx(12 + 11 + 11)
    assert " RECORDED 00:00:34 " in header_text(state).plain
    rows = state.training.epochs.rows()
    assert [r.epoch_time_s for r in rows] == [12, 11, 11]
    assert {r.epoch_time_source for r in rows} == {"printed"}


def test_steps_printed_every_tenth_count_their_interval_and_a_relaunch_goes_on(tmp_path: Path) -> None:
    state = replayed(write(tmp_path / "megatron.log", megatron_untimed(range(10, 301, 10))))
    assert state.elapsed_s() == pytest.approx(300 * 0.85)
    first = megatron_untimed(range(10, 301, 10))
    again = megatron_untimed(range(200, 301, 10))  # resumed from a checkpoint at 200
    state = replayed(write(tmp_path / "relaunched.log", first + again))
    assert state.elapsed_s() == pytest.approx((300 + 110) * 0.85)


def test_a_log_without_times_or_durations_shows_no_elapsed_time(tmp_path: Path) -> None:
    lines = [f"step {s}/500 | loss {3 + 1 / s:.4f}" for s in range(1, 501)]
    state = replayed(write(tmp_path / "plain.log", lines))
    assert state.clockless and state.elapsed_s() is None
    header = header_text(state).plain
    assert " RECORDED · no clock in the log " in header
    assert "⏸ 100 % " in header and "00:" not in header  # no time invented anywhere in it


def test_printed_timestamps_are_used_as_printed(tmp_path: Path) -> None:
    state = replayed(step_logs.megatron(tmp_path / "megatron.log"))  # one second apart, 850 ms printed
    assert state.elapsed_s() == pytest.approx(299.0)  # 10:00:01 → 10:04:60, not 300 × 0.85
    assert state.now() == time.mktime(time.strptime("2024-01-01 10:05:00", "%Y-%m-%d %H:%M:%S"))
    assert " RECORDED 00:04:59 " in header_text(state).plain


def test_lines_appended_while_following_get_the_time_they_are_read(tmp_path: Path) -> None:
    log = write(tmp_path / "keras.log", keras_log.LINES[:4])
    os.utime(log, (MTIME, MTIME))
    source = ReplaySource([str(log)])
    feed = Feed()
    worker = threading.Thread(target=source.run_to_end, args=(feed,), daemon=True)
    worker.start()
    state = source.new_state(Config().alerts)
    try:
        state = wait(feed, state, lambda s: s.training.current_epoch() == 2)
        assert state.elapsed_s() == pytest.approx(12 + 11)
        appended = time.time()
        with log.open("a") as f:
            f.write("\n".join(keras_log.LINES[4:]) + "\n")
        state = wait(feed, state, lambda s: len(s.training.epochs.rows()) == 3)
    finally:
        source.stop()
        worker.join(10)
    assert state.last_time >= appended  # read now, not squeezed before the file's old mtime
    assert [r.epoch_time_s for r in state.training.epochs.rows()] == [12, 11, 11]


def wait(feed: Feed, state: DashboardState, done, timeout: float = 20.0) -> DashboardState:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = feed.apply(state)
        if done(state):
            return state
        time.sleep(0.05)
    raise AssertionError("the replay did not get there in time")
