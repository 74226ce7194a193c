"""Energy of a run: kWh per run, joules per epoch and per step (``docs/analysis.md``, "Energy").

Per GPU, :class:`~gputui.analysis.run.GpuStats` integrates the energy once (the driver's cumulative
counter where sampled, else ``power_w`` over time) and keeps its running total at each sample in an
:class:`EnergyTrace`; this module reads those traces:

- the run: the sum of the GPUs' totals (an MI250X package's power is on one GCD only: counted once);
- an epoch: the sum over the GPUs of the energy between the previous epoch's end (the first: its printed
  epoch time before its end, else the start of training) and its end, where the rows' end times are a
  clock's (:func:`~gputui.analysis.run.clocked_rows`) and every GPU with energy data was sampled over
  :data:`COVERED` of the span (the rest at the mean power of the part sampled); a power gap over
  :data:`~gputui.analysis.run.MAX_GAP_S` inside it: unknown;
- a step: the energy between two clocked steps of the recent window over the steps done between them;
  else the recent power of all GPUs × the recent step time.

Unknown is ``None`` (no power sampled, epochs without a clock), never 0.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from gputui.logs.epochs import EpochRow

MAX_POINTS = 4096
COVERED = 0.9  # a GPU's samples must span this share of an epoch for its energy to count
RECENT_S = 60.0  # the window of the recent power (J per step without clocked steps)
J_PER_KWH = 3.6e6


class GpuEnergy(Protocol):
    """What :func:`run_energy` reads of a GPU (:class:`~gputui.analysis.run.GpuStats`, which imports
    this module: a protocol, not an import)."""

    energy_j: float | None
    energy_source: str | None

    def energy_trace(self) -> EnergyTrace: ...


@dataclass
class EnergyTrace:
    """A GPU's energy so far (joules since its first sample) at its sample times, bounded: once full,
    every other point is dropped (linear in between: exact for a steady power); the spans where power was
    not integrated (gaps) are kept apart."""

    times: list[float] = field(default_factory=list)
    joules: list[float] = field(default_factory=list)
    gaps: list[tuple[float, float]] = field(default_factory=list)

    def add(self, t: float, joules: float) -> None:
        if self.times and t < self.times[-1]:
            return  # out of order: the trace only goes forward
        if len(self.times) >= MAX_POINTS:
            last_t, last_j = self.times[-1], self.joules[-1]
            self.times, self.joules = self.times[::2], self.joules[::2]
            if self.times[-1] != last_t:
                self.times.append(last_t)
                self.joules.append(last_j)
        self.times.append(t)
        self.joules.append(joules)

    def gap(self, t0: float, t1: float) -> None:
        if len(self.gaps) < MAX_POINTS:
            self.gaps.append((t0, t1))

    def at(self, t: float) -> float:
        """The energy so far at ``t`` (inside the trace), linear between samples."""
        i = bisect_left(self.times, t)
        if i < len(self.times) and self.times[i] == t:
            return self.joules[i]
        if i == 0:
            return self.joules[0]
        if i == len(self.times):
            return self.joules[-1]
        t0, t1, j0, j1 = self.times[i - 1], self.times[i], self.joules[i - 1], self.joules[i]
        return j0 + (j1 - j0) * (t - t0) / (t1 - t0)

    def between(self, t0: float, t1: float) -> float | None:
        """Joules from ``t0`` to ``t1``; None where the samples do not span it or a gap falls inside."""
        if len(self.times) < 2 or t1 <= t0:
            return None
        lo, hi = max(t0, self.times[0]), min(t1, self.times[-1])
        if hi <= lo or (hi - lo) < COVERED * (t1 - t0):
            return None
        if any(g0 < hi and g1 > lo for g0, g1 in self.gaps):
            return None
        return (self.at(hi) - self.at(lo)) * (t1 - t0) / (hi - lo)


@dataclass
class EpochEnergy:
    epoch: int | float
    joules: float | None


@dataclass
class RunEnergy:
    """A run's energy; every figure None where unknown."""

    total_j: float | None = None
    source: str | None = None  # "counter" | "power" | "counter and power"
    gpus_with_energy: int = 0
    gaps: int = 0  # spans of over MAX_GAP_S without power samples (not integrated)
    epochs: list[EpochEnergy] = field(default_factory=list)
    per_epoch_j: float | None = None  # mean over the epochs whose energy is known
    per_step_j: float | None = None

    @property
    def kwh(self) -> float | None:
        return None if self.total_j is None else self.total_j / J_PER_KWH

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "total_j": self.total_j,
            "kwh": self.kwh,
            "source": self.source,
            "gpus_with_energy": self.gpus_with_energy,
            "gaps": self.gaps,
            "per_epoch_j": self.per_epoch_j,
            "per_step_j": self.per_step_j,
            "epochs": [{"epoch": e.epoch, "energy_j": e.joules} for e in self.epochs],
        }


def run_energy(
    gpus: list[GpuEnergy],
    rows: list[EpochRow],
    *,
    clocked_rows: bool,
    start: float | None = None,
    steps: tuple[tuple[int, float], tuple[int, float]] | None = None,
    step_time_s: float | None = None,
    last: int | None = None,
) -> RunEnergy:
    """The run's energy from its GPUs' traces. ``rows``: one rank's epoch rows; ``clocked_rows``: their
    end times are a clock's; ``start``: when training started (the first epoch's start where it has no
    printed time); ``steps``: two (step, time) points of the recent window; ``step_time_s``: the recent
    time per step (used with the recent power where ``steps`` is None); ``last``: only the last so many
    epochs (the dashboard's refresh)."""
    out = RunEnergy()
    measured = [g for g in gpus if g.energy_j is not None]
    if not measured:
        return out
    out.total_j = sum(g.energy_j for g in measured)  # type: ignore[misc]
    out.gpus_with_energy = len(measured)
    kinds = {g.energy_source for g in measured}
    out.source = " and ".join(sorted(k for k in kinds if k))
    traces = [g.energy_trace() for g in measured]
    out.gaps = sum(len(t.gaps) for t in traces)
    if clocked_rows:
        spans = _spans(rows, start)[-last:] if last else _spans(rows, start)
        out.epochs = [EpochEnergy(row.epoch, _sum(traces, t0, t1)) for row, (t0, t1) in spans]
        known = [e.joules for e in out.epochs if e.joules is not None]
        out.per_epoch_j = sum(known) / len(known) if known else None
    out.per_step_j = _per_step(traces, steps, step_time_s)
    return out


def _spans(rows: list[EpochRow], start: float | None) -> list[tuple[EpochRow, tuple[float, float]]]:
    spans = []
    previous: float | None = None
    for row in rows:
        end = row.end_time
        begin = previous
        if begin is None and row.epoch_time_s:
            begin = end - row.epoch_time_s
        if begin is None:
            begin = start
        if begin is not None and end > begin:
            spans.append((row, (begin, end)))
        previous = end
    return spans


def _sum(traces: list[EnergyTrace], t0: float, t1: float) -> float | None:
    parts = [trace.between(t0, t1) for trace in traces]
    return None if any(p is None for p in parts) else sum(parts)  # type: ignore[arg-type]


def _per_step(
    traces: list[EnergyTrace],
    steps: tuple[tuple[int, float], tuple[int, float]] | None,
    step_time_s: float | None,
) -> float | None:
    if steps is not None:
        (s0, t0), (s1, t1) = steps
        joules = _sum(traces, t0, t1) if s1 > s0 else None
        if joules is not None:
            return joules / (s1 - s0)
    if step_time_s is None:
        return None
    power = 0.0
    for trace in traces:
        if len(trace.times) < 2:
            return None
        t1 = trace.times[-1]
        t0 = max(trace.times[0], t1 - RECENT_S)
        joules = trace.between(t0, t1)
        if joules is None:
            return None
        power += joules / (t1 - t0)
    return power * step_time_s


# ---------------------------------------------------------------------------- text


def joules_text(joules: float | None) -> str:
    """``850 J``, ``120 kJ``, ``1.25 kWh`` (from 0.1 kWh); ``unknown`` for None."""
    if joules is None:
        return "unknown"
    if joules >= 3.6e5:
        return f"{_three(joules / J_PER_KWH)} kWh"
    if joules >= 1e3:
        return f"{_three(joules / 1e3)} kJ"
    return f"{_three(joules)} J"


def _three(value: float) -> str:
    """About three significant digits, never in exponent form: ``1,234``, ``56.7``, ``0.123``."""
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}" if value >= 0.1 else f"{value:.3g}"
