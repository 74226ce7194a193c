"""Series: bounded memory with min/max decimation, resampling for charts, time queries."""

from __future__ import annotations

import bisect
import math

import pytest

from gputui.monitor.series import Series, envelope


def test_capacity_below_eight_is_refused():
    with pytest.raises(ValueError):
        Series(4)


def test_48h_at_1hz_stays_within_capacity_and_keeps_the_newest_points():
    series = Series(1024)
    n = 48 * 3600
    for t in range(n):
        series.append(float(t), float(t % 100))
        assert len(series) <= series.capacity
    assert len(series) > series.capacity // 2  # thinning halves the old part, it does not empty it
    assert len(series.times) == len(series.values) == len(series)
    assert series.times == sorted(series.times)
    assert series.times[0] < 600  # the start of the run is still represented
    # the newest points are at full resolution
    assert series.times[-10:] == [float(t) for t in range(n - 10, n)]
    assert series.last == float((n - 1) % 100)


def test_a_single_spike_and_a_single_dip_survive_decimation():
    series = Series(64)
    spike_t, dip_t = 1000.0, 2500.0
    for t in range(20_000):
        if t == spike_t:
            value = 1000.0
        elif t == dip_t:
            value = -1000.0
        else:
            value = 50.0
        series.append(float(t), value)
    assert len(series) <= 64
    assert spike_t in series.times and dip_t in series.times
    assert max(series.values) == 1000.0
    assert min(series.values) == -1000.0
    # the extremes keep their own times
    assert series.values[series.times.index(spike_t)] == 1000.0
    assert series.values[series.times.index(dip_t)] == -1000.0


def test_thinning_keeps_group_min_and_max_in_time_order():
    series = Series(8)
    for t, v in enumerate([5, 1, 9, 3, 4, 4, 4, 4, 7]):
        series.append(float(t), float(v))
    # 9 points > capacity 8: all but the newest 2 (8 // 4) go to the older part in groups of 4, each kept
    # as its min and max in time order; the last group (4, 4, 4) stays open, its one value twice
    assert series.times == [1.0, 2.0, 4.0, 4.0, 7.0, 8.0]
    assert series.values == [1.0, 9.0, 4.0, 4.0, 4.0, 7.0]
    assert series.first == (0.0, 5.0)


def exp_decay(step: float) -> float:
    return 3 + 8 * math.exp(-step / 600)


def interpolated(series: Series, x: float) -> float:
    times, values = series.times, series.values
    j = bisect.bisect_left(times, x)
    j = min(max(j, 1), len(times) - 1)
    (t0, t1), (v0, v1) = times[j - 1 : j + 1], values[j - 1 : j + 1]
    return v0 if t1 == t0 else v0 + (v1 - v0) * (x - t0) / (t1 - t0)


def test_every_stretch_of_a_long_run_keeps_the_same_resolution():
    """20,000 steps of a decaying loss: the series drawn as a line stays within 1 % of the
    curve's range everywhere, the first thousand steps included (the old decimation thinned the oldest
    half at every overflow and drew them as one straight line)."""
    series = Series(1024)
    for step in range(1, 20_001):
        series.append(float(step), exp_decay(step))
        assert len(series) <= 1024
    for step in range(1, 20_001, 97):  # within 1 % of the curve's range of 8
        assert interpolated(series, step) == pytest.approx(exp_decay(step), abs=0.08), step
    early = [t for t in series.times if t <= 2_000]
    assert len(early) >= 25  # the first tenth keeps its share: 2 points per 128 steps (the old scheme: 1)


def test_memory_stays_bounded_for_a_million_points():
    series = Series(64)
    for t in range(1_000_000):
        series.append(float(t), float(t % 7))
        assert len(series) <= 64
    assert series.first == (0.0, 0.0) and series.last == float(999_999 % 7)


def test_envelope_keeps_each_stretch_extremes_in_x_order():
    xs = [float(x) for x in range(1000)]
    ys = [float(x % 10) for x in xs]
    ys[500] = 99.0
    out_x, out_y = envelope(xs, ys, 50)
    assert len(out_x) <= 102 and out_x == sorted(out_x)
    assert out_x[0] == 0.0 and out_x[-1] == 999.0  # from the first point to the last
    assert 99.0 in out_y and out_x[out_y.index(99.0)] == 500.0
    assert min(out_y) == 0.0
    assert envelope(xs[:10], ys[:10], 50) == (xs[:10], ys[:10])  # few points: all of them


def test_envelope_of_unevenly_spaced_points_covers_every_stretch():
    """Dense at the end, sparse at the start (a catch-up's samples, then every step): picking every n-th
    point would take nearly all from the dense end; the envelope keeps the sparse start's shape."""
    xs = [float(x) for x in range(0, 10_000, 100)] + [float(x) for x in range(10_000, 12_000)]
    ys = [exp_decay(x) for x in xs]
    out_x, _ = envelope(xs, ys, 40)
    assert sum(x < 10_000 for x in out_x) >= 30


def test_resampled_has_the_width_and_each_bucket_is_its_maximum():
    series = Series(1024)
    for t in range(100):
        series.append(float(t), 42.0 if t == 55 else 1.0)  # one high value in the bucket of t in [50, 60)
    series.append(100.0, 1.0)
    out = series.resampled(10)
    assert len(out) == 10
    assert out[5] == 42.0
    assert all(v == 1.0 for i, v in enumerate(out) if i != 5)


def test_resampled_empty_buckets_are_none_and_window_limits():
    series = Series(64)
    series.append(0.0, 3.0)
    series.append(10.0, 7.0)
    out = series.resampled(5)
    assert out == [3.0, None, None, None, 7.0]
    # a window that leaves out the first point
    assert series.resampled(4, start=5.0, end=13.0) == [None, None, 7.0, None]
    assert series.resampled(0) == []
    assert Series(8).resampled(10) == []


def test_since_returns_values_at_or_after_the_start():
    series = Series(64)
    for t in range(10):
        series.append(float(t), float(t * 10))
    assert series.since(7.0) == [70.0, 80.0, 90.0]
    assert series.since(6.5) == [70.0, 80.0, 90.0]
    assert series.since(-1.0) == [float(t * 10) for t in range(10)]
    assert series.since(100.0) == []


def test_tail_and_last():
    series = Series(16)
    assert series.last is None
    assert series.tail(3) == []
    series.extend([(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)])
    assert series.tail(2) == [2.0, 3.0]
    assert series.tail(0) == []
    assert series.last == 3.0
