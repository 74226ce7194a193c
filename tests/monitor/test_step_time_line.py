"""The timeline's s/step line is the log's own step time, never the replay's guess (issue 22).

A replayed log without times is placed on the timeline at estimated times; the time per step computed
from those was drawn as if measured (5.8 s/step for a log printing ``dt: 312.50ms``). A printed step time
is the line; without one and without times there is no line.
"""

from __future__ import annotations

from pathlib import Path

from gputui.config import Config
from gputui.sources.base import Feed
from gputui.sources.replay import ReplaySource


def replayed_step_times(path: Path) -> list[float]:
    source = ReplaySource([str(path)], follow=False)
    feed = Feed()
    state = source.new_state(Config().alerts)
    source.run_to_end(feed)
    return feed.apply(state).training.step_time.values


def test_a_printed_step_time_is_the_line(tmp_path: Path) -> None:
    log = tmp_path / "nano.log"
    log.write_text("".join(f"step {s}/500 | loss {3 + 1 / s:.4f} | dt: 312.50ms\n" for s in range(1, 501)))
    values = replayed_step_times(log)
    assert values and all(v == 0.3125 for v in values)


def test_estimated_times_give_no_step_time(tmp_path: Path) -> None:
    log = tmp_path / "plain.log"
    log.write_text("".join(f"step {s}/500 | loss {3 + 1 / s:.4f}\n" for s in range(1, 501)))
    assert replayed_step_times(log) == []


def test_printed_times_still_give_a_step_time_from_the_clock(tmp_path: Path) -> None:
    log = tmp_path / "timed.log"
    lines = [f"2026-01-01 10:00:{s:02d} step {s * 2} loss {3 + 1 / (s + 1):.4f}\n" for s in range(0, 50)]
    log.write_text("".join(lines))
    values = replayed_step_times(log)
    assert values and all(abs(v - 0.5) < 1e-9 for v in values)  # 2 steps a second
