"""A time series in bounded memory whose every stretch keeps the same resolution.

:class:`Series` holds at most ``capacity`` points in two parts: the *recent* points as they came, and the
*older* points as groups of ``stride`` raw points, each group kept as its minimum and maximum in time
order (so spikes and dips survive). When the series is full, the older recent points are grouped at the
current stride and moved to the older part; when the older part holds more than half the capacity,
neighbouring groups are merged and the stride doubles. Every group of the older part stands for the same
number of raw points (but the newest, which may be still filling), so a chart of a 20,000-step run
follows the log's values at its start as well as at its end (an earlier scheme thinned the oldest half
again at every overflow and collapsed the first thousands of steps into a straight line). Memory is
O(capacity) whatever the run's length.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class Series:
    """Points ``(time, value)`` in time order (appends with an older time are placed at the end anyway)."""

    __slots__ = ("_old_t", "_old_v", "_raw_old", "_recent_t", "_recent_v", "capacity", "first", "stride")

    def __init__(self, capacity: int = 1024) -> None:
        if capacity < 8:
            raise ValueError("a series needs a capacity of at least 8 points")
        self.capacity = capacity
        self.stride = 4  # raw points per group of the older part (each kept as 2 points)
        self.first: tuple[float, float] | None = None  # the very first point, never thinned away
        self._raw_old = 0  # raw points the older part stands for
        self._old_t: list[float] = []
        self._old_v: list[float] = []
        self._recent_t: list[float] = []
        self._recent_v: list[float] = []

    def __len__(self) -> int:
        return len(self._old_v) + len(self._recent_v)

    @property
    def times(self) -> list[float]:
        return self._old_t + self._recent_t

    @property
    def values(self) -> list[float]:
        return self._old_v + self._recent_v

    def append(self, time: float, value: float) -> None:
        if self.first is None:
            self.first = (time, value)
        self._recent_t.append(time)
        self._recent_v.append(value)
        if len(self) > self.capacity:
            self._thin()

    def extend(self, points: Iterable[tuple[float, float]]) -> None:
        for time, value in points:
            self.append(time, value)

    def _thin(self) -> None:
        """Move all but the newest quarter of the capacity to the older part, in groups of ``stride`` raw
        points (the last group may stay open, to be filled by the next move); merge neighbouring groups
        while the older part is over half the capacity."""
        moved = len(self._recent_v) - self.capacity // 4
        if moved <= 0:
            return
        times, values = self._recent_t[:moved], self._recent_v[:moved]
        del self._recent_t[:moved], self._recent_v[:moved]
        open_count = self._raw_old % self.stride
        if open_count:  # fill the open group first: its two points and the new ones, folded again
            take = min(self.stride - open_count, moved)
            t, v = _min_max_groups(
                self._old_t[-2:] + times[:take], self._old_v[-2:] + values[:take], take + 2
            )
            self._old_t[-2:], self._old_v[-2:] = t, v
            times, values = times[take:], values[take:]
        t, v = _min_max_groups(times, values, self.stride)
        self._old_t += t
        self._old_v += v
        self._raw_old += moved
        while len(self._old_v) > self.capacity // 2:
            self._old_t, self._old_v = _min_max_groups(self._old_t, self._old_v, 4)
            self.stride *= 2

    @property
    def last(self) -> float | None:
        if self._recent_v:
            return self._recent_v[-1]
        return self._old_v[-1] if self._old_v else None

    def since(self, start: float) -> list[float]:
        """Values with a time at or after ``start``."""
        times, values = self.times, self.values
        lo, hi = 0, len(times)
        while lo < hi:
            mid = (lo + hi) // 2
            if times[mid] < start:
                lo = mid + 1
            else:
                hi = mid
        return values[lo:]

    def tail(self, n: int) -> list[float]:
        return self.values[-n:] if n > 0 else []

    def resampled(
        self, width: int, start: float | None = None, end: float | None = None, *, mean: bool = False
    ) -> list[float | None]:
        """``width`` buckets over [start, end] (default: the whole series), each the bucket's maximum (or
        with ``mean``, the mean of its points); None where a bucket has no point. What a chart ``width``
        cells wide needs, no more."""
        times, values = self.times, self.values
        if not values or width <= 0:
            return []
        start = times[0] if start is None else start
        end = times[-1] if end is None else end
        span = max(end - start, 1e-9)
        out: list[float | None] = [None] * width
        counts = [0] * width
        for t, v in zip(times, values, strict=True):
            if t < start or t > end:
                continue
            k = min(width - 1, int((t - start) / span * width))
            cur = out[k]
            counts[k] += 1
            if mean:
                out[k] = v if cur is None else cur + v
            else:
                out[k] = v if cur is None or v > cur else cur
        if mean:
            return [None if v is None else v / n for v, n in zip(out, counts, strict=True)]
        return out


def _min_max_groups(
    times: Sequence[float], values: Sequence[float], size: int
) -> tuple[list[float], list[float]]:
    """Each group of ``size`` points as two: its minimum and maximum in time order (the same point twice
    when they coincide, so every group has two points and groups can be merged by position)."""
    out_t: list[float] = []
    out_v: list[float] = []
    for i in range(0, len(values), size):
        group = range(i, min(i + size, len(values)))
        lo = min(group, key=values.__getitem__)
        hi = max(group, key=values.__getitem__)
        a, b = (lo, hi) if lo <= hi else (hi, lo)
        out_t += (times[a], times[b])
        out_v += (values[a], values[b])
    return out_t, out_v


def envelope(xs: Sequence[float], ys: Sequence[float], buckets: int) -> tuple[list[float], list[float]]:
    """At most ``2 * buckets + 2`` points that draw like all of them: the first and the last, and per equal
    stretch of x its minimum and maximum in x order (a chart picking every n-th point instead would skip
    the stretches where the points are sparse and draw lines the data does not hold)."""
    if len(xs) <= 2 * buckets or buckets <= 0:
        return list(xs), list(ys)
    start, span = xs[0], max(xs[-1] - xs[0], 1e-12)
    out_x: list[float] = []
    out_y: list[float] = []
    lo = hi = None
    current = 0

    def flush() -> None:
        if lo is None or hi is None:
            return
        for j in sorted({lo, hi}):
            out_x.append(xs[j])
            out_y.append(ys[j])

    for i, x in enumerate(xs):
        k = min(buckets - 1, int((x - start) / span * buckets))
        if k != current:
            flush()
            lo = hi = None
            current = k
        if lo is None or ys[i] < ys[lo]:
            lo = i
        if hi is None or ys[i] > ys[hi]:
            hi = i
    flush()
    if out_x[0] != xs[0] or out_y[0] != ys[0]:  # the chart starts at the first point and ends at the last
        out_x.insert(0, xs[0])
        out_y.insert(0, ys[0])
    if out_x[-1] != xs[-1] or out_y[-1] != ys[-1]:
        out_x.append(xs[-1])
        out_y.append(ys[-1])
    return out_x, out_y
