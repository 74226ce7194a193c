"""The spikes of a run's step time, and what they are where the log says.

A run that evaluates every 250 steps prints 20 s steps among its 0.45 s ones: drawn to the highest, the
typical step is a line along the bottom and the chart a barcode. A step time above four times the median
is a spike; the chart's axis then ends at 1.5 times the largest of the other step times (the spikes are
cut at its top, the title says to what) and the spikes are named from what the log printed at their
steps: ``evaluation`` where validation or test values were printed within one step of them,
``first step`` (start-up, compilation) for the run's first. Others are ``spikes``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

SPIKE = 4.0  # a spike: above this many times the median step time
HEADROOM = 1.5  # the axis ends this much above the largest typical step
NEAR = 1  # steps between a spike and the evaluation it is


@dataclass(frozen=True)
class Spikes:
    top: float  # where the step-time axis ends
    highest: float  # the largest spike, in seconds
    what: str  # "evaluation", "first step", "evaluation, first step", "spikes"
    every: int | None  # steps between spikes, where regular


def spikes(steps: Sequence[float], seconds: Sequence[float], evaluated: set[int]) -> Spikes | None:
    """The spikes among step times ``seconds`` at ``steps`` (``evaluated``: steps with validation values)."""
    if len(seconds) < 8:
        return None
    ordered = sorted(seconds)
    median = ordered[len(ordered) // 2]
    if median <= 0:
        return None
    at = [(s, v) for s, v in zip(steps, seconds, strict=True) if v > SPIKE * median]
    if not at or len(at) > len(seconds) // 4:
        return None
    typical = max((v for v in seconds if v <= SPIKE * median), default=median)
    first = min(steps)
    kinds = []
    rest = [s for s, _ in at if s != first]
    if len(rest) < len(at):
        kinds.append("first step")
    near = [s for s in rest if any(int(s) + d in evaluated for d in range(-NEAR, NEAR + 1))]
    if rest:
        kinds.insert(0, "evaluation" if 2 * len(near) >= len(rest) else "spikes")
    ordered_steps = sorted(rest)
    gaps = {round(b - a) for a, b in itertools.pairwise(ordered_steps)}
    every = gaps.pop() if len(gaps) == 1 else None
    return Spikes(typical * HEADROOM, max(v for _, v in at), ", ".join(kinds), every)


def spikes_text(found: Spikes) -> str:
    """``spikes to 21.3 s cut: evaluation every 250 steps``."""
    every = f" every {found.every:,} steps" if found.every else ""
    return f"spikes to {found.highest:.3g} s cut: {found.what}{every}"
