"""The loss chart of a long step-based run follows the log's values at every stretch (issue 22).

A 20,000-step log with loss = 3 + 8·e^(−step/600): the points the training pane draws (the metric's
series against its step, cut to the envelope at the plot's width) must be, at any step, within the
plot's resolution of the value the log prints there — read in one go (catch-up), replayed, and followed
as it grows (attach). The old decimation drew steps 1 to ~7,000 as one straight line.
"""

from __future__ import annotations

import bisect
import math
from pathlib import Path

import pytest

from gputui.config import Config
from gputui.logs.follower import LogFollower
from gputui.monitor.series import envelope
from gputui.monitor.state import DashboardState, JobInfo
from gputui.sources.base import Feed
from gputui.sources.replay import ReplaySource

STEPS = 20_000
PLOT_CELLS = 100  # a 100-column chart: 200 braille dots across
PLOT_ROWS = 20  # 80 braille dots down
# one braille dot of a chart whose y axis spans the curve's range (11 → 3)
RESOLUTION = 8 / (PLOT_ROWS * 4)


def loss_at(step: float) -> float:
    return 3 + 8 * math.exp(-step / 600)


@pytest.fixture(scope="module")
def long_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("long") / "train.log"
    with path.open("w") as fh:
        for step in range(1, STEPS + 1):
            fh.write(f"step {step}/{STEPS} | loss {loss_at(step):.4f} | lr 3.0e-04 | dt: 312.5ms\n")
    return path


def drawn(state: DashboardState) -> tuple[list[float], list[float]]:
    """What the training pane plots for the loss: its x axis is the step, cut to the plot's width."""
    axis, points = state.training.metrics["loss"].x_axis()
    assert axis == "step"
    return envelope(points.times, points.values, PLOT_CELLS)


def assert_follows_the_log(xs: list[float], ys: list[float]) -> None:
    assert xs[0] <= 200 and xs[-1] == STEPS
    for step in (300, 600, 1_200, 2_500, 5_000, STEPS // 2, 15_000, 19_900):
        j = min(max(bisect.bisect_left(xs, step), 1), len(xs) - 1)
        (x0, x1), (y0, y1) = xs[j - 1 : j + 1], ys[j - 1 : j + 1]
        line = y0 + (y1 - y0) * (step - x0) / (x1 - x0)
        assert line == pytest.approx(loss_at(step), abs=RESOLUTION), f"step {step}: chart {line:.3f}"


def test_replay_of_a_long_log_draws_the_logs_curve(long_log: Path) -> None:
    source = ReplaySource([str(long_log)], follow=False)
    feed = Feed()
    state = source.new_state(Config().alerts)
    source.run_to_end(feed)
    assert_follows_the_log(*drawn(feed.apply(state)))


def test_catch_up_of_a_long_log_draws_the_logs_curve(long_log: Path) -> None:
    """The whole file behind at once (attach to a job that has run for hours): read in catch-up mode."""
    state = DashboardState(JobInfo(kind="attach", title="catch-up", job_id="1"))
    follower = LogFollower(long_log)
    while records := follower.poll():
        state.ingest(records)
    state.ingest(follower.finish())
    assert_follows_the_log(*drawn(state))


def test_following_a_growing_log_draws_the_logs_curve(long_log: Path, tmp_path: Path) -> None:
    """Attach from the start: the log grows a block at a time and is polled after each."""
    lines = long_log.read_bytes().splitlines(keepends=True)
    growing = tmp_path / "growing.log"
    growing.write_bytes(b"")
    state = DashboardState(JobInfo(kind="attach", title="attach", job_id="1"))
    follower = LogFollower(growing)
    with growing.open("ab") as out:
        for start in range(0, len(lines), 500):
            out.write(b"".join(lines[start : start + 500]))
            out.flush()
            state.ingest(follower.poll())
    state.ingest(follower.finish())
    assert_follows_the_log(*drawn(state))
