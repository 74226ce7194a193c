"""A time series in bounded memory: min/max decimation keeps the extremes of a 48 h run at 1 Hz.

:class:`Series` holds at most ``capacity`` points. When it is full, the oldest half is thinned: each group
of four points becomes two (the group's minimum and maximum, in time order), so spikes and dips survive
and the newest points stay at full resolution. Memory is O(capacity) whatever the run's length.
"""

from __future__ import annotations

from collections.abc import Iterable


class Series:
    """Points ``(time, value)`` in time order (appends with an older time are placed at the end anyway)."""

    __slots__ = ("capacity", "times", "values")

    def __init__(self, capacity: int = 1024) -> None:
        if capacity < 8:
            raise ValueError("a series needs a capacity of at least 8 points")
        self.capacity = capacity
        self.times: list[float] = []
        self.values: list[float] = []

    def __len__(self) -> int:
        return len(self.values)

    def append(self, time: float, value: float) -> None:
        self.times.append(time)
        self.values.append(value)
        if len(self.values) > self.capacity:
            self._thin()

    def extend(self, points: Iterable[tuple[float, float]]) -> None:
        for time, value in points:
            self.append(time, value)

    def _thin(self) -> None:
        """Halve the oldest half by min/max decimation (groups of 4 → 2)."""
        half = (len(self.values) // 2) // 4 * 4
        times, values = self.times, self.values
        new_t: list[float] = []
        new_v: list[float] = []
        for i in range(0, half, 4):
            group = range(i, i + 4)
            lo = min(group, key=values.__getitem__)
            hi = max(group, key=values.__getitem__)
            for j in sorted({lo, hi}):
                new_t.append(times[j])
                new_v.append(values[j])
        self.times = new_t + times[half:]
        self.values = new_v + values[half:]

    @property
    def last(self) -> float | None:
        return self.values[-1] if self.values else None

    def since(self, start: float) -> list[float]:
        """Values with a time at or after ``start``."""
        times = self.times
        lo, hi = 0, len(times)
        while lo < hi:
            mid = (lo + hi) // 2
            if times[mid] < start:
                lo = mid + 1
            else:
                hi = mid
        return self.values[lo:]

    def tail(self, n: int) -> list[float]:
        return self.values[-n:] if n > 0 else []

    def resampled(
        self, width: int, start: float | None = None, end: float | None = None
    ) -> list[float | None]:
        """``width`` buckets over [start, end] (default: the whole series), each the bucket's maximum;
        None where a bucket has no point. What a chart ``width`` cells wide needs, no more."""
        if not self.values or width <= 0:
            return []
        start = self.times[0] if start is None else start
        end = self.times[-1] if end is None else end
        span = max(end - start, 1e-9)
        out: list[float | None] = [None] * width
        for t, v in zip(self.times, self.values, strict=True):
            if t < start or t > end:
                continue
            k = min(width - 1, int((t - start) / span * width))
            cur = out[k]
            out[k] = v if cur is None or v > cur else cur
        return out
