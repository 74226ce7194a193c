"""Chart ticks a person reads at a glance: 1-2-5 spacing, elapsed time as ``m:ss`` / ``h:mm:ss``, steps as
integers with thousands separators, values with only the decimals their spacing needs.

Pure functions, no Textual and no plotext: each returns ``(positions, labels)`` for a chart's
``xticks``/``yticks``. The rule: the tick spacing is the smallest "nice" step that keeps the ticks at or
under ``most`` (for plain numbers 1, 2 or 5 times a power of ten; for time also the clock's own steps, 15 s,
30 s, 15 min, 30 min, 3 h, 6 h, 12 h, 1 day), and the ticks are the multiples of that step inside the range.
"""

from __future__ import annotations

import math

Ticks = tuple[list[float], list[str]]
FLAT = 1e-3  # a value range narrower than this share of its values is one value (no ticks of its noise)

#: Elapsed-time tick steps in seconds: 1-2-5 within the clock's units, plus its usual quarters and halves.
TIME_STEPS_S = (
    1, 2, 5, 10, 15, 30,
    60, 120, 300, 600, 900, 1800,
    3600, 7200, 10800, 21600, 43200, 86400,
)  # fmt: skip


def nice_step(span: float, most: int) -> float:
    """The smallest of 1, 2, 5 × 10^k that cuts ``span`` into at most ``most`` intervals."""
    most = max(1, most)
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / most
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        step = factor * power
        if step >= raw * (1 - 1e-9):
            return step
    return 10 * power  # (not reached: factor 10 always fits)


def _two_at_least(lo: float, hi: float, most: int, smallest: float = 0.0) -> float:
    """The nice step for ``most`` intervals, made finer until at least two ticks fall in [lo, hi] (a
    narrow range such as 0.265-0.274 would otherwise get one tick)."""
    step = max(smallest, nice_step(hi - lo, most))
    for finer in (2, 4, 8):
        if len(_multiples(lo, hi, step)) >= 2:
            break
        step = max(smallest, nice_step(hi - lo, most * finer))
    return step


def _multiples(lo: float, hi: float, step: float) -> list[float]:
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    return [float(f"{k * step:.12g}") for k in range(first, last + 1)]  # 0.3, not 0.30000000000000004


def value_ticks(lo: float, hi: float, most: int = 5) -> Ticks:
    """Ticks for a value axis (loss, s/step): labels with as many decimals as the step needs (``0.27``,
    never ``0.269200``); thousands as ``12k`` / ``1.5M``."""
    if hi < lo:
        lo, hi = hi, lo
    if hi - lo <= FLAT * max(abs(lo), abs(hi)):  # flat (0.517400-0.517420 is noise): one tick, 3 digits
        mid = (lo + hi) / 2
        return [mid], [value_label(mid, max(0, 2 - math.floor(math.log10(abs(mid))))) if mid else "0"]
    step = _two_at_least(lo, hi, most)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    positions = _multiples(lo, hi, step)
    return positions, [value_label(p, decimals) for p in positions]


def value_label(value: float, decimals: int) -> str:
    """``value`` with ``decimals`` decimals, large values shortened (``12k``, ``1.5M``); no ``-0``."""
    size = abs(value)
    for limit, unit, suffix in ((1e9, 1e9, "G"), (1e6, 1e6, "M"), (1e4, 1e3, "k")):
        if size >= limit:
            return _trim(f"{value / unit:.2f}") + suffix
    text = f"{value:.{decimals}f}"
    return "0" if float(text) == 0 else text


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def step_ticks(lo: float, hi: float, most: int = 5) -> Ticks:
    """Ticks for a step (or epoch) axis: whole numbers only, ``12,000`` style (never ``4768.8``)."""
    if hi < lo:
        lo, hi = hi, lo
    step = _two_at_least(lo, hi, most, smallest=1.0)
    positions = _multiples(lo, hi, step) or [float(round(lo))]
    return positions, [f"{round(p):,}" for p in positions]


def time_ticks(start: float, end: float, most: int = 5) -> Ticks:
    """Ticks for an elapsed-time axis in seconds from the chart's start: ``m:ss`` while under an hour,
    ``h:mm:ss`` from an hour on, with a clock-friendly step from :data:`TIME_STEPS_S` (whole days beyond)."""
    if end < start:
        start, end = end, start
    step = time_step(end - start, most)
    positions = [float(p) for p in _multiples(start, end, step)] or [float(start)]
    hours = end >= 3600
    return positions, [elapsed(p, hours=hours) for p in positions]


def time_step(span: float, most: int) -> float:
    """The elapsed-time tick step for ``span`` seconds: the first of :data:`TIME_STEPS_S` that keeps the
    ticks at or under ``most`` (whole days, 1-2-5, beyond)."""
    most = max(1, most)
    step = next((s for s in TIME_STEPS_S if span / s <= most), None)
    return float(step) if step is not None else 86400 * nice_step(span / 86400, most)


def time_axis_end(span: float, most: int) -> float:
    """Where an elapsed-time axis showing ``span`` seconds ends: ``span`` rounded up to its tick step (at
    least one step), so the last tick is the axis' end and the axis stays put while the data grows, until
    it crosses that tick. :func:`time_ticks` over ``[0, end]`` picks the same step (``end / step`` is at
    most ``most``), so the ticks do not change meanwhile either."""
    step = time_step(max(span, 0.0), most)
    return step * max(1, math.ceil(span / step - 1e-9))


def elapsed(seconds: float, *, hours: bool = False) -> str:
    """``m:ss``, or ``h:mm:ss`` when ``hours`` (or when it is an hour or more); ``d-hh:mm:ss`` from a day
    on (Slurm's way of writing days)."""
    total = round(max(0.0, seconds))
    days, total = divmod(total, 86400)
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    if days:
        return f"{days}-{h:02d}:{m:02d}:{s:02d}"
    if hours or h:
        return f"{h}:{m:02d}:{s:02d}"
    return f"{m}:{s:02d}"


def tick_room(width: int, label_width: int) -> int:
    """How many ticks fit a ``width``-cell axis when each label needs ``label_width`` cells plus a gap."""
    return max(2, width // (label_width + 3))
