"""Per-node utilisation lines (GpuBoard.node_lines): one point per second per node, bounded memory, and
the mean resampling the heatmap draws from."""

from __future__ import annotations

from test_state import T0, new_state, tick

from gputui.monitor.gpus import GpuBoard
from gputui.monitor.series import Series


def test_each_node_has_its_own_line_of_per_second_means():
    state = new_state()
    for k in range(5):
        tick(state, {"node1": [20, 40], "node2": [90, 100]}, T0 + k + 0.25)
        tick(state, {"node1": [20, 40], "node2": [90, 100]}, T0 + k + 0.75)
    lines = state.board.node_lines()
    assert list(lines) == ["node1", "node2"]
    assert lines["node1"].times == [float(int(T0) + k) for k in range(4)]
    assert lines["node1"].values == [30.0] * 4 and lines["node2"].values == [95.0] * 4
    assert state.board.line().values == [62.5] * 4  # the job-wide line is unchanged


def test_node_lines_stay_bounded_over_a_long_job():
    board = GpuBoard(history_points=256)
    state = new_state()
    state.board = board
    for k in range(5000):
        tick(state, {"node1": [50.0 + k % 7], "node2": [10.0]}, T0 + k)
    lines = board.node_lines()
    assert all(len(line) <= 256 // 8 for line in lines.values())
    assert lines["node2"].first == (T0, 10.0)  # the start is still there after thinning


def test_resampled_mean_versus_max():
    series = Series(64)
    for t, v in [(0, 10.0), (1, 30.0), (2, 90.0), (3, 100.0)]:
        series.append(t, v)
    assert series.resampled(2, 0, 3) == [30.0, 100.0]
    assert series.resampled(2, 0, 3, mean=True) == [20.0, 95.0]
    assert series.resampled(4, 0, 7, mean=True) == [20.0, 95.0, None, None]
