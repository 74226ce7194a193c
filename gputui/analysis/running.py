"""Exact running figures of one printed series: every value counted, in bounded memory.

A run prints a loss, a step time or a rate at every step, millions of them. Means over the run are kept
as exact sums (each value counted once: an aggregate record of a catch-up read stands for ``count``
values); the recent window and the trend are read from buckets of steps, each holding the exact sum
of its values, whose width doubles when there are too many (so a window's mean is exact to one bucket
at its edge). A weight (the step time beside a rate) makes a mean a weighted one: tokens over seconds.
"""

from __future__ import annotations

MAX_BUCKETS = 1024


class Running:
    """Sums of a series of (step, value) with weights; the first and last point."""

    __slots__ = ("buckets", "first", "last", "total", "weights", "width")

    def __init__(self) -> None:
        self.weights = 0.0  # sum of weights (values counted, or seconds)
        self.total = 0.0  # sum of weight × value
        self.first: tuple[int, float] | None = None
        self.last: tuple[int, float] | None = None
        self.width = 1  # steps per bucket
        self.buckets: dict[int, list[float]] = {}  # step // width → [weights, weight × value, weight × step]

    def add(self, step: int, value: float, weight: float = 1.0, first: int | None = None) -> None:
        """A value at ``step``, or the mean of values printed from step ``first`` to ``step`` (an aggregate
        record: its weight spread evenly over the buckets those steps fall in)."""
        if weight <= 0 or value != value:
            return
        if first is not None and first < step and first // self.width != step // self.width:
            self._spread(first, step, value, weight)
            return
        self.weights += weight
        self.total += weight * value
        if self.first is None:
            self.first = (step, value)
        self.last = (step, value)
        key = step // self.width
        bucket = self.buckets.get(key)
        if bucket is None:
            self.buckets[key] = [weight, weight * value, weight * step]
            if len(self.buckets) > MAX_BUCKETS:
                self._widen()
        else:
            bucket[0] += weight
            bucket[1] += weight * value
            bucket[2] += weight * step

    def _spread(self, first: int, step: int, value: float, weight: float) -> None:
        span = step - first + 1
        at = first
        while at <= step:
            end = min(step, (at // self.width + 1) * self.width - 1)
            self.add(end, value, weight * (end - at + 1) / span)
            at = end + 1

    def _widen(self) -> None:
        merged: dict[int, list[float]] = {}
        for key, (w, s, t) in self.buckets.items():
            into = merged.setdefault(key // 2, [0.0, 0.0, 0.0])
            into[0] += w
            into[1] += s
            into[2] += t
        self.buckets, self.width = merged, self.width * 2

    def __bool__(self) -> bool:
        return self.weights > 0

    def mean(self) -> float | None:
        return self.total / self.weights if self.weights else None

    def mean_since(self, step: int) -> float | None:
        """The mean of the values after ``step`` (to one bucket's width); the last value if none."""
        w = s = 0.0
        for key, (bw, bs, _) in self.buckets.items():
            if (key + 1) * self.width - 1 > step:
                w += bw
                s += bs
        if w:
            return s / w
        return self.last[1] if self.last is not None else None

    def points(self, since: int | None = None) -> list[tuple[float, float]]:
        """(step, mean) per bucket (its values' mean step), in step order; from the last bucket at or before
        ``since`` on (so that a history printed sparsely still spans the window)."""
        keys = sorted(self.buckets)
        if since is not None:
            before = [k for k in keys if k * self.width <= since]
            start = before[-1] if before else keys[0] if keys else 0
            keys = [k for k in keys if k >= start]
        out = []
        for key in keys:
            w, s, t = self.buckets[key]
            out.append((t / w, s / w))
        return out
