"""Where a replayed log's records go on the timeline when its lines print no time of day.

A log that prints how long each step took (``dt: 312.50ms``, ``step_time``, Megatron's ``elapsed time per
iteration (ms)``: the names of :data:`gputui.analysis.steps.STEP_TIMES`) or each epoch (``epoch_time_s``:
Keras ``12s``, tqdm's elapsed field, ``Epoch 3 took 41.2s``) says how long it ran. Its records are placed
by those durations: each step (epoch) at the sum of the printed durations since the run began, so the
elapsed time on screen is the log's own. The placement is still an estimate (records stay
``time_source: "estimated"``: no epoch time is measured from it):

- epochs first (their times cover validation and everything between the steps), else steps;
- a step (epoch) without a printed duration counts the mean of the printed ones; a stretch of steps that
  were not printed (a log that prints every 10th) counts as many steps at the duration printed at its end
  (Megatron prints the mean over its logging interval), and a run's first printed step stands for one
  printing interval, at most its own number (Megatron's first line at iteration 100 stands for 100
  iterations, nanoGPT's step 0 for one, a run resumed at step 5,000 for one interval);
- a counter that goes back (a relaunch appended to the file) goes on from where the previous run ended;
- records with no step (epoch) number sit with the latest one before them (those before the first at
  the start).

A log that prints neither times nor durations has no clock at all: its records are laid out one second
apart (an order, not a time) and :attr:`Placement.by` is ``None``, so the dashboard says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from gputui.analysis.steps import STEP_TIMES
from gputui.logs.epochs import restarts
from gputui.stream.records import Record

EPOCH_TIMES = {"epoch_time_s": 1.0}  # the name every parser gives a printed epoch time


@dataclass
class Placement:
    offsets: list[float]  # seconds from the run's start, one per record, in the records' order
    total_s: float  # the run's length: from its start to its last record
    by: str | None  # "epoch" | "step": placed by printed durations; None: no clock in the log


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _seconds(rec: Record, names: dict[str, float]) -> float | None:
    """The duration a record prints, in seconds (None when it prints none)."""
    f = rec.fields
    name, value = f.get("name"), f.get("value")
    if rec.kind != "metric" or name not in names or not isinstance(value, int | float):
        return None
    seconds = float(value) * names[name]
    return seconds if math.isfinite(seconds) and seconds > 0 else None


def _step_goes_back(last: int, step: int) -> bool:
    return step < last - max(1, last // 100)  # as StepTracker: a lagging rank is not a relaunch


def _units(
    records: list[Record],
    number: Callable[[Record], int | None],
    names: dict[str, float],
    goes_back: Callable[[int, int], bool],
) -> tuple[list[int | None], list[int], dict[int, float]]:
    """Each record's unit (its step or epoch, in order of appearance; None before the first), each unit's
    count of steps (epochs) since the previous one (for a run's first, minus its number: decided later)
    and the duration printed for it."""
    index: dict[tuple[int, int], int] = {}
    unit_of: list[int | None] = []
    gaps: list[int] = []
    printed: dict[int, float] = {}
    run, last, current = 0, None, None
    for rec in records:
        n = number(rec)
        if n is not None:
            if last is not None and goes_back(last, n):
                run, last = run + 1, None
            unit = index.get((run, n))
            if unit is None and (last is None or n > last):
                unit = index[(run, n)] = len(gaps)
                gaps.append(n - last if last is not None else -max(n, 1))
                last, current = n, unit
            if unit is not None:
                seconds = _seconds(rec, names)
                if seconds is not None:
                    printed.setdefault(unit, seconds)
                unit_of.append(unit)
                continue
        unit_of.append(current)
    return unit_of, gaps, printed


def _place(
    by: str,
    records: list[Record],
    number: Callable[[Record], int | None],
    names: dict[str, float],
    goes_back: Callable[[int, int], bool],
) -> Placement:
    unit_of, gaps, printed = _units(records, number, names, goes_back)
    mean = sum(printed.values()) / len(printed)
    ends: list[float] = []
    total = 0.0
    for unit, gap in enumerate(gaps):
        if gap < 0:  # a run's first unit: one printing interval (its run's next gap), at most its number
            following = gaps[unit + 1] if unit + 1 < len(gaps) and gaps[unit + 1] > 0 else 1
            gap = min(following, -gap)
        total += gap * printed.get(unit, mean)
        ends.append(total)
    offsets = [0.0 if unit is None else ends[unit] for unit in unit_of]
    return Placement(offsets, total, by)


def place(records: list[Record]) -> Placement:
    """The records' offsets from the run's start by the durations the log prints (see the module)."""
    for by, names, goes_back in (("epoch", EPOCH_TIMES, restarts), ("step", STEP_TIMES, _step_goes_back)):

        def number(rec: Record, by: str = by) -> int | None:
            return _int(rec.get(by))

        if any(_seconds(r, names) is not None and number(r) is not None for r in records):
            return _place(by, records, number, names, goes_back)
    return Placement([float(i + 1) for i in range(len(records))], float(len(records)), None)
