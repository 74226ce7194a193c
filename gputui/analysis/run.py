"""One run's report from its record stream: GPUs used and how busy, epochs, epoch times, throughput,
final metrics, outcome (``docs/analysis.md``). The CLI (``gputui report``, ``gputui scale``) and the TUI
use this one module; it reads records only (log files go through the project's log parser first).

Rules:

- per GPU (keyed by host and ``gpu_id``): mean and peak utilisation over its samples, the share of
  samples under ``idle_pct`` % (idle: the caller passes the settings' ``[alerts] idle_util_pct``, the
  threshold of the dashboard's classifier, :func:`gputui.monitor.conditions.is_idle`), peak memory
  used, energy: the driver's cumulative counter (last minus first, resets counted from zero) where
  sampled, else power integrated over time (trapezoids; gaps over :data:`MAX_GAP_S` are not integrated);
- epochs from :class:`~gputui.logs.epochs.EpochTable` (the same rows as ``gputui parse`` and the
  dashboard); the mean epoch time and throughput **leave out the first epoch** (start-up, compilation,
  caches) when there is more than one, and say so;
- throughput: images/s from the epoch rows; else the last-epoch mean of a stated throughput metric
  (``global_images_per_s``, ``images_per_s``, ``samples_per_s``, ``tokens_per_s``, ``steps_per_s``);
  else steps/s from the rows' step counts and times;
- ranks: the trainers' ``train_started`` world size; else the ranks seen on metrics; else the GPUs
  sampled;
- a run that counts steps and no epochs: its :class:`~gputui.analysis.steps.StepSummary` (steps done and
  planned, loss and its trend, step time, throughput, MFU, ETA) in ``steps``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from gputui.analysis.energy import EnergyTrace, RunEnergy, run_energy
from gputui.analysis.steps import StepSummary, StepTracker
from gputui.logs.epochs import EpochRow, EpochTable
from gputui.logs.outcome import merge_outcome
from gputui.stream.records import Record

MAX_GAP_S = 60.0
READ_APART_S = 1.0
CLOCKS = ("printed", "emitted")  # record times that are a clock's, not the time a line was read
THROUGHPUTS = ("global_images_per_s", "images_per_s", "samples_per_s", "tokens_per_s", "steps_per_s")


@dataclass
class GpuStats:
    host: str
    gpu_id: str
    idle_pct: float = field(kw_only=True)  # a sample under this utilisation % is idle
    name: str | None = None
    samples: int = 0
    util_sum: float = 0.0
    util_peak: float | None = None
    util_samples: int = 0
    idle_samples: int = 0
    mem_peak_bytes: int | None = None
    energy_j: float | None = None
    simulated: bool = False
    _counter: float | None = field(default=None, repr=False)  # last cumulative energy reading
    _power: tuple[float, float] | None = field(default=None, repr=False)  # (time, watts) of the last sample
    _integrated: float = field(default=0.0, repr=False)
    _counted: float = field(default=0.0, repr=False)
    _counter_trace: EnergyTrace = field(default_factory=EnergyTrace, repr=False)
    _power_trace: EnergyTrace = field(default_factory=EnergyTrace, repr=False)

    @property
    def energy_source(self) -> str | None:
        """Where :attr:`energy_j` comes from: ``counter``, ``power`` or None (no energy known)."""
        if self.energy_j is None:
            return None
        return "counter" if self._counter is not None and self._counted else "power"

    def energy_trace(self) -> EnergyTrace:
        """The energy so far at each sample, from the same source as :attr:`energy_j`."""
        return self._counter_trace if self.energy_source == "counter" else self._power_trace

    @property
    def util_mean(self) -> float | None:
        return self.util_sum / self.util_samples if self.util_samples else None

    @property
    def idle_share(self) -> float | None:
        return self.idle_samples / self.util_samples if self.util_samples else None

    def add(self, rec: Record) -> None:
        f = rec.fields
        self.samples += 1
        self.name = self.name or f.get("name")
        self.simulated = self.simulated or bool(f.get("simulated"))
        util = f.get("util_gpu_pct")
        if isinstance(util, int | float):
            self.util_samples += 1
            self.util_sum += util
            self.util_peak = util if self.util_peak is None else max(self.util_peak, util)
            self.idle_samples += util < self.idle_pct
        mem = f.get("mem_used_bytes")
        if isinstance(mem, int | float):
            peak = self.mem_peak_bytes
            self.mem_peak_bytes = int(mem) if peak is None else max(peak, int(mem))
        counter = f.get("energy_j")
        if isinstance(counter, int | float):
            if self._counter is not None:
                step = counter - self._counter
                self._counted += step if step >= 0 else counter  # a reset: counted again from zero
            self._counter = counter
            self._counter_trace.add(rec.time, self._counted)
        power = f.get("power_w")
        if isinstance(power, int | float):
            if self._power is not None:
                t0, p0 = self._power
                dt = rec.time - t0
                if 0 < dt <= MAX_GAP_S:
                    self._integrated += (p0 + power) / 2 * dt
                elif dt > MAX_GAP_S:
                    self._power_trace.gap(t0, rec.time)
            self._power = (rec.time, power)
            self._power_trace.add(rec.time, self._integrated)
        if self._counter is not None and self._counted:
            self.energy_j = self._counted
        elif self._integrated:
            self.energy_j = self._integrated


@dataclass
class RunReport:
    name: str
    world_size: int | None = None
    world_size_source: str | None = None
    gpus: list[GpuStats] = field(default_factory=list)
    epochs: list[EpochRow] = field(default_factory=list)
    epoch_time_s: float | None = None  # mean, first epoch left out when there are several
    first_epoch_left_out: bool = False
    throughput: float | None = None
    throughput_unit: str | None = None  # images/s, samples/s, tokens/s, steps/s
    throughput_note: str | None = None  # how it was taken: "first epoch left out", "last epoch, as stated"
    final: dict[str, float] = field(default_factory=dict)
    outcome: str | None = None
    outcome_evidence: str | None = None
    steps: StepSummary | None = None  # a run with steps and no epochs
    records: int = 0
    simulated: bool = False
    ranks: int | None = None  # the ranks, where known: train_started's world size, else the ranks seen
    ranks_source: str | None = None
    energy: RunEnergy = field(default_factory=RunEnergy)

    @property
    def nodes_seen(self) -> int:
        """Hosts with GPU samples."""
        return len({g.host for g in self.gpus})

    def usage_dict(self) -> dict:
        """GPUs and nodes seen, ranks and energy, for ``--json``."""
        return {
            "gpus_seen": len(self.gpus),
            "nodes_seen": self.nodes_seen,
            "ranks": self.ranks,
            "ranks_source": self.ranks_source,
            "energy": self.energy.to_json_dict(),
        }

    @property
    def util_mean(self) -> float | None:
        means = [g.util_mean for g in self.gpus if g.util_mean is not None]
        return sum(means) / len(means) if means else None

    @property
    def energy_j(self) -> float | None:
        values = [g.energy_j for g in self.gpus if g.energy_j is not None]
        return sum(values) if values else None

    @property
    def gpu_count(self) -> int | None:
        """GPUs (or ranks) the run used: the trainers' world size, else the GPUs sampled, else the ranks
        seen in the log."""
        return self.world_size or (len(self.gpus) or None)


class RunAnalysis:
    """Feed records in stream order (:meth:`add`), then :meth:`report`."""

    def __init__(
        self, name: str, *, idle_pct: float, batch_size: int | None = None, table: EpochTable | None = None
    ) -> None:
        """``idle_pct``: the settings' ``[alerts] idle_util_pct`` (one threshold with the dashboard's
        classifier and the verdicts); ``table``: an epoch table the caller already feeds (the
        dashboard's), used instead of a copy."""
        self.name = name
        self.idle_pct = idle_pct
        self.own_table = table is None
        self.table = EpochTable(batch_size=batch_size) if table is None else table
        self.steps = StepTracker()
        self.gpus: dict[tuple[str, str], GpuStats] = {}
        self.world_size: int | None = None
        self.ranks: set[int] = set()
        self.throughputs: dict[str, list[tuple[int | float | None, float]]] = {}
        self.outcome: Record | None = None
        self.records = 0
        self.started: float | None = None  # training's start: train_started, else the first clocked metric

    def add_all(self, records: Iterable[Record]) -> RunAnalysis:
        for record in records:
            self.add(record)
        return self

    def add(self, rec: Record) -> None:
        self.records += 1
        kind, f = rec.kind, rec.fields
        if kind == "gpu":
            key = (str(f.get("host")), str(f.get("gpu_id")))
            stats = self.gpus.get(key)
            if stats is None:
                stats = self.gpus[key] = GpuStats(*key, idle_pct=self.idle_pct)
            stats.add(rec)
        elif kind == "metric":
            if self.started is None and (self.table.measure or f.get("time_source") in CLOCKS):
                self.started = rec.time
            if self.own_table:
                self.table.add(rec)
            self.steps.add(rec)
            if isinstance(f.get("rank"), int):
                self.ranks.add(f["rank"])
            name, value = f.get("name"), f.get("value")
            if name in THROUGHPUTS and isinstance(value, int | float):
                self.throughputs.setdefault(name, []).append((f.get("epoch"), float(value)))
        elif kind == "event":
            if f.get("event") == "train_started":
                self.started = rec.time
                if isinstance(f.get("world_size"), int):
                    self.world_size = f["world_size"]
            elif f.get("event") == "outcome":
                self.outcome = merge_outcome(self.outcome, rec)
            elif self.own_table:
                self.table.add(rec)

    def energy_j(self) -> float | None:
        """The run's energy so far over its GPUs (None: no power sampled)."""
        values = [g.energy_j for g in self.gpus.values() if g.energy_j is not None]
        return sum(values) if values else None

    def energy(
        self, rows: list[EpochRow] | None = None, steps: StepSummary | None = None, last: int | None = None
    ) -> RunEnergy:
        """kWh of the run, J per epoch and per step (:mod:`gputui.analysis.energy`); ``rows``: the
        epochs the report shows (default: the lowest rank's); ``last``: only the last so many epochs."""
        if rows is None:
            rows = _one_rank(self.table.rows())
        if steps is None:
            steps = self.steps.summary()
        clocked = clocked_rows(rows, live=self.table.measure)
        recent = self.steps.recent_clock() if steps is not None else None
        step_time = steps.step_time_recent_s if steps is not None else None
        gpus = sorted(self.gpus.values(), key=lambda g: (g.host, g.gpu_id))
        return run_energy(
            gpus,
            rows,
            clocked_rows=clocked,
            start=self.started,
            steps=recent,
            step_time_s=step_time,
            last=last,
        )

    def report(self) -> RunReport:
        rows = _one_rank(self.table.rows())
        out = RunReport(self.name, gpus=sorted(self.gpus.values(), key=lambda g: (g.host, g.gpu_id)))
        out.records, out.epochs = self.records, rows
        out.simulated = any(g.simulated for g in out.gpus)
        if self.world_size:
            out.world_size, out.world_size_source = self.world_size, "train_started"
            out.ranks, out.ranks_source = self.world_size, "train_started"
        elif self.gpus:
            out.world_size, out.world_size_source = len(self.gpus), "GPUs sampled"
        elif self.ranks:
            out.world_size, out.world_size_source = max(self.ranks) + 1, "ranks in the log"
        if out.ranks is None and self.ranks and max(self.ranks) > 0:
            out.ranks, out.ranks_source = max(self.ranks) + 1, "ranks in the log"
        timed = [r for r in rows if r.epoch_time_s]
        if len(timed) > 1:
            timed, out.first_epoch_left_out = timed[1:], True
        if timed:
            out.epoch_time_s = sum(r.epoch_time_s for r in timed) / len(timed)  # type: ignore[misc]
        out.steps = self.steps.summary()
        if not rows and out.steps is not None and out.steps.throughput_mean is not None:
            # a step run: the step summary's figure, the one every view shows (every printed value)
            out.throughput, out.throughput_unit = out.steps.throughput_mean, out.steps.throughput_unit
            out.throughput_note = "over the run"
        else:
            out.throughput, out.throughput_unit, out.throughput_note = _throughput(
                rows, self.throughputs, out.first_epoch_left_out
            )
        if rows:
            out.final = {k: v for k, v in rows[-1].values.items() if k != "epoch_time_s"}
        out.energy = self.energy(rows, out.steps)
        if self.outcome is not None:
            out.outcome = str(self.outcome.get("outcome"))
            out.outcome_evidence = str(self.outcome.get("evidence") or "")
        return out


def clocked_rows(rows: list[EpochRow], *, live: bool) -> bool:
    """Whether the rows' end times tell when each epoch ended: printed or emitted times; or read as the
    log grew (the dashboard, ``live``; a record file of ``attach --output`` or ``demo --record``, whose
    rows were read at least :data:`READ_APART_S` apart). A log parsed afterwards reads its rows within
    moments of each other, after the GPU samples: no epoch's energy from those times. A replay's
    estimated times never."""
    if any(r.end_time_estimated for r in rows):
        return False
    if live or all(r.end_time_printed for r in rows):
        return True
    ends = [r.end_time for r in rows]
    return all(b - a >= READ_APART_S for a, b in pairwise(ends))


def _one_rank(rows: list[EpochRow]) -> list[EpochRow]:
    """Where ranks are kept apart, the lowest rank's rows: it speaks for the run (as on the dashboard)."""
    ranks = [r.rank for r in rows if r.rank is not None]
    return [r for r in rows if r.rank == min(ranks)] if ranks else rows


def _throughput(
    rows: list[EpochRow], stated: dict[str, list[tuple[int | float | None, float]]], skip_first: bool
) -> tuple[float | None, str | None, str | None]:
    """(value, unit, how it was taken)."""
    rated = [r.images_per_s for r in rows if r.images_per_s]
    left_out = "first epoch left out" if len(rated) > 1 and skip_first else None
    if left_out:
        rated = rated[1:]
    if rated:
        return sum(rated) / len(rated), "images/s", left_out
    for name in THROUGHPUTS:
        values = stated.get(name)
        if values:
            epochs = [e for e, _ in values if e is not None]
            last = max(epochs) if epochs else None
            chosen = [v for e, v in values if e == last] if last is not None else [v for _, v in values]
            unit = name.removeprefix("global_").replace("_per_s", "/s")
            note = "last epoch, as stated" if last is not None else "as stated"
            return sum(chosen) / len(chosen), unit, note
    stepped = [(r.steps, r.epoch_time_s) for r in rows if r.steps and r.epoch_time_s]
    left_out = "first epoch left out" if len(stepped) > 1 and skip_first else None
    if left_out:
        stepped = stepped[1:]
    if stepped:
        return sum(s / t for s, t in stepped) / len(stepped), "steps/s", left_out  # type: ignore[operator]
    return None, None, None
