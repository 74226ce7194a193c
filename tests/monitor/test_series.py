"""Series: bounded memory with min/max decimation, resampling for charts, time queries."""

from __future__ import annotations

import pytest

from gputui.monitor.series import Series


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
    # 9 points > capacity 8: the oldest 4 (5, 1, 9, 3) become their min and max, in time order
    assert series.times[:2] == [1.0, 2.0]
    assert series.values[:2] == [1.0, 9.0]
    assert series.times[2:] == [4.0, 5.0, 6.0, 7.0, 8.0]
    assert len(series) == 7


def test_resampled_has_the_width_and_each_bucket_is_its_maximum():
    series = Series(1024)
    for t in range(100):
        series.append(float(t), 1.0)
    series.append(100.0, 1.0)
    # one high value inside the bucket of t in [50, 60)
    series.values[55] = 42.0
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
