"""Step progress of a run that counts steps and no epochs (how language models are trained): one model for
``gputui parse``, ``gputui report``, the headless summary and the dashboard (``docs/analysis.md``).

Feed metric records in stream order to :meth:`StepTracker.add`; :meth:`StepTracker.summary` gives a
:class:`StepSummary`, or ``None`` for a run that has epochs (its epoch views stay) or no step at all.

- **done / planned**: the latest step printed; the planned total from ``steps_total`` on step records
  without an epoch (a ``step N/M`` counter, a printed ``max_steps``-style setting, a bar's total);
  a 0-based counter (its first step is 0) has done ``last + 1`` steps.
- **loss**: ``loss``, else Megatron's ``lm_loss``, else Lightning's ``loss_step``; first → last, and its
  trend: the least-squares slope over the last 10 % of the steps seen (from the latest point at or before
  that window's start, so a sampled history still spans it), said as falling / flat / rising with the
  change it makes over the window (flat: under 1 % of the latest loss).
- **step time**: a printed per-step time (:data:`STEP_TIMES`), mean over the run with the first step left
  out (start-up, compilation) and recent (mean over the last 10 % of the steps); else, where the records
  carry a clock (printed timestamps, emitted records), the time between steps; read times never.
- **throughput** (tokens/s or samples/s, :data:`TOKENS` / :data:`SAMPLES`) and **MFU** when printed, as
  recent means (``mfu`` printed as a fraction ≤ 1 is shown in %).
- **ETA**: steps left × recent step time.
- One voice: the lowest rank seen (or the unlabelled stream). A step counter that goes back starts a new
  run (a relaunch appended to the file): the summary is the latest run's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from gputui.stream.records import Record

LOSS_NAMES = ("loss", "lm_loss", "loss_step")
#: Per-step times as the parsers name them, and the factor to seconds.
STEP_TIMES = {
    "step_time_s": 1.0,
    "dt_s": 1.0,
    "time_s": 1.0,
    "iter_time_s": 1.0,
    "iteration_time_s": 1.0,
    "batch_time_s": 1.0,
    "time_per_step_s": 1.0,
    "step_time_ms": 1e-3,
    "elapsed_time_per_iteration_ms": 1e-3,  # Megatron: "elapsed time per iteration (ms): 850.2"
    "time_ms": 1e-3,
    "dt_ms": 1e-3,
}
TOKENS = frozenset({"tokens_per_s", "tok/sec", "tok/s", "tokens_per_sec", "tokens_per_second", "tps"})
SAMPLES = frozenset(
    {"samples_per_s", "samples/sec", "samples_per_sec", "images_per_s", "global_images_per_s"}
)
MFU = ("mfu_pct", "mfu")
MAX_POINTS = 4096
WINDOW = 0.1  # the last 10 % of the steps seen
FLAT = 0.01  # a change under 1 % of the latest loss


@dataclass
class StepSummary:
    """What a step-based run has done and how fast (every field ``None`` where the log does not say)."""

    first_step: int
    last_step: int
    done: int  # steps done: last + 1 for a counter from 0
    planned: int | None = None
    loss_name: str | None = None
    loss_first: float | None = None
    loss_last: float | None = None
    trend: str | None = None  # falling | flat | rising
    trend_change: float | None = None  # change of the loss over ``trend_steps`` at the fitted slope
    trend_steps: int | None = None
    step_time_s: float | None = None  # mean, first step left out
    step_time_recent_s: float | None = None
    step_time_source: str | None = None  # printed | clock
    throughput: float | None = None  # recent mean
    throughput_unit: str | None = None  # tokens/s | samples/s
    mfu_pct: float | None = None
    eta_s: float | None = None
    run: int = 0

    @property
    def left(self) -> int | None:
        return None if self.planned is None else max(0, self.planned - self.done)

    def to_json_dict(self) -> dict[str, Any]:
        """The fields that have a value; means to 12 significant digits (no float noise: 38.2, not
        38.199999999999996)."""
        return {
            k: float(f"{v:.12g}") if isinstance(v, float) else v
            for k, v in asdict(self).items()
            if v is not None
        }


def _thin(points: list[tuple[int, float]]) -> None:
    """Keep memory bounded: every other point once full (the first one stays; the caller appends the last)."""
    if len(points) >= MAX_POINTS:
        points[:] = points[::2]


def _add(points: list[tuple[int, float]], step: int, value: float) -> None:
    _thin(points)
    points.append((step, value))


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _recent(points: list[tuple[int, float]], since: int) -> list[float]:
    return [v for s, v in points if s > since] or [points[-1][1]]


def _slope(points: list[tuple[int, float]]) -> float | None:
    n = len(points)
    if n < 2:
        return None
    mx = sum(s for s, _ in points) / n
    my = sum(v for _, v in points) / n
    sxx = sum((s - mx) ** 2 for s, _ in points)
    return None if sxx == 0 else sum((s - mx) * (v - my) for s, v in points) / sxx


class StepTracker:
    """Feed records with :meth:`add`; :meth:`summary` reads them."""

    def __init__(self) -> None:
        self.rank: int | None = None
        self.epochs = False  # a record with an epoch: the run's views are its epochs
        self.run = 0
        self._reset()

    def _reset(self) -> None:
        self.first: int | None = None
        self.last: int | None = None
        self.planned: int | None = None
        self.loss: dict[str, list[tuple[int, float]]] = {}
        self.times: list[tuple[int, float]] = []
        self.clock: list[tuple[int, float]] = []  # (step, record time) where the time is a clock's
        self.rates: dict[str, list[tuple[int, float]]] = {}
        self.mfu: list[tuple[int, float]] = []

    def add_all(self, records: list[Record]) -> StepTracker:
        for record in records:
            self.add(record)
        return self

    def add(self, rec: Record) -> None:
        if rec.kind != "metric":
            return
        f = rec.fields
        if f.get("epoch") is not None:
            self.epochs = True
            return
        step, rank = f.get("step"), f.get("rank")
        if not isinstance(step, int) or isinstance(step, bool):
            return
        if isinstance(rank, int):
            if self.rank is not None and rank > self.rank:
                return
            if self.rank is None or rank < self.rank:
                if self.rank is not None:
                    self._reset()  # a lower rank speaks for the job from now on
                self.rank = rank
        elif self.rank is not None:
            return
        if self.last is not None and step < self.last - max(1, self.last // 100):
            self.run += 1  # the counter went back (a relaunch, a resume from a checkpoint): a new run
            self._reset()
        self._note(step, f, rec.time)

    def _note(self, step: int, f: dict, when: float) -> None:
        if self.first is None:
            self.first = step
        if self.last is None or step > self.last:
            self.last = step
            if f.get("time_source") in ("printed", "emitted"):
                _add(self.clock, step, when)  # a clock's time: step time from the records
        total = f.get("steps_total")
        if isinstance(total, int) and total > 0:
            self.planned = total
        name, value = f.get("name"), f.get("value")
        if not isinstance(value, int | float) or value != value or not isinstance(name, str):
            return
        if name in LOSS_NAMES:
            _add(self.loss.setdefault(name, []), step, float(value))
        elif name in STEP_TIMES:
            _add(self.times, step, value * STEP_TIMES[name])
        elif name in TOKENS or name in SAMPLES:
            _add(self.rates.setdefault("tokens/s" if name in TOKENS else "samples/s", []), step, float(value))
        elif name in MFU:
            _add(self.mfu, step, value * 100 if name == "mfu" and value <= 1 else float(value))

    def summary(self) -> StepSummary | None:
        if self.epochs or self.first is None or self.last is None:
            return None
        first, last = self.first, self.last
        done = last + 1 if first == 0 else last
        out = StepSummary(first, last, done, planned=self.planned, run=self.run)
        since = last - max(1, round(WINDOW * (last - first)))
        self._loss(out, since)
        self._step_time(out, since)
        for unit in ("tokens/s", "samples/s"):
            if unit in self.rates:
                out.throughput, out.throughput_unit = _mean(_recent(self.rates[unit], since)), unit
                break
        if self.mfu:
            out.mfu_pct = _mean(_recent(self.mfu, since))
        if out.step_time_recent_s is not None and out.left is not None:
            out.eta_s = out.left * out.step_time_recent_s
        return out

    def recent_clock(self) -> tuple[tuple[int, float], tuple[int, float]] | None:
        """Two (step, time) points spanning the recent window (the last 10 % of the steps), where the
        records carry a clock: the energy per step is taken between them."""
        clock, last, first = self.clock, self.last, self.first
        if len(clock) < 2 or last is None or first is None:
            return None
        since = last - max(1, round(WINDOW * (last - first)))
        back = max((p for p in clock if p[0] <= since), default=clock[0])
        return (back, clock[-1]) if clock[-1][0] > back[0] else None

    def _loss(self, out: StepSummary, since: int) -> None:
        name = next((n for n in LOSS_NAMES if n in self.loss), None)
        if name is None:
            return
        points = self.loss[name]
        out.loss_name, out.loss_first, out.loss_last = name, points[0][1], points[-1][1]
        start = max((i for i, (s, _) in enumerate(points) if s <= since), default=0)
        window = points[start:]
        slope = _slope(window)
        if slope is None:
            return
        steps = out.last_step - since
        change = slope * steps
        out.trend_change, out.trend_steps = change, steps
        if abs(change) < FLAT * abs(out.loss_last or 0.0) or change == 0:
            out.trend = "flat"
        else:
            out.trend = "falling" if change < 0 else "rising"

    def _step_time(self, out: StepSummary, since: int) -> None:
        times = self.times
        if times:
            steady = times[1:] if len(times) > 1 and times[0][0] == self.first else times
            out.step_time_s = _mean([v for _, v in steady])
            out.step_time_recent_s = _mean(_recent(times, since))
            out.step_time_source = "printed"
            return
        clock = self.clock
        if len(clock) < 3:
            return
        (s0, t0), (s1, t1) = clock[1], clock[-1]  # the first step left out
        if s1 > s0 and t1 > t0:
            out.step_time_s = (t1 - t0) / (s1 - s0)
            back = max((p for p in clock[1:] if p[0] <= since), default=clock[1])
            if s1 > back[0] and t1 > back[1]:
                out.step_time_recent_s = (t1 - back[1]) / (s1 - back[0])
            else:
                out.step_time_recent_s = out.step_time_s
            out.step_time_source = "clock"


# ---------------------------------------------------------------------------- text


def span(seconds: float) -> str:
    """A duration in words' length: ``45s``, ``36m 50s``, ``5h 12m``, ``2d 3h``."""
    s = round(max(0.0, seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    return f"{s // 86400}d {s % 86400 // 3600}h"


ARROWS = {"falling": "↓", "flat": "→", "rising": "↑"}


def progress_text(s: StepSummary) -> str:
    """``step 12,000/19,073 (63 %)``."""
    if s.planned is None:
        return f"step {s.last_step:,}"
    return f"step {s.last_step:,}/{s.planned:,} ({100 * s.done // max(1, s.planned)} %)"


def trend_text(s: StepSummary) -> str | None:
    """``falling ↓ -0.6 per 1,200 steps``."""
    if s.trend is None or s.trend_change is None or s.trend_steps is None:
        return None
    return f"{s.trend} {ARROWS[s.trend]} {s.trend_change:+.3g} per {s.trend_steps:,} steps"


def step_rows(s: StepSummary, *, ended: bool = False) -> list[tuple[str, str]]:
    """(what, value) rows of a step summary: the text of ``gputui parse``, ``report`` and the headless
    summary (the dashboard formats the same fields itself). ``ended``: the run has an outcome, so no
    ETA (a run that stopped before its planned steps says where it stopped)."""
    rows = [("steps", progress_text(s) + (f" (run {s.run + 1})" if s.run else ""))]
    if s.loss_name is not None:
        trend = trend_text(s)
        loss = f"{s.loss_first:.4g} → {s.loss_last:.4g}" + (f"; {trend} (last 10 %)" if trend else "")
        rows.append((s.loss_name, loss))
    if s.step_time_s is not None:
        how = "printed" if s.step_time_source == "printed" else "between step times"
        recent = s.step_time_recent_s if s.step_time_recent_s is not None else s.step_time_s
        rows.append(("step time", f"{_seconds(s.step_time_s)} mean, {_seconds(recent)} recent ({how})"))
    if s.throughput is not None:
        rows.append((str(s.throughput_unit), f"{s.throughput:,.0f} (recent)"))
    if s.mfu_pct is not None:
        rows.append(("MFU", f"{s.mfu_pct:.1f} %"))
    if ended:
        if s.planned is not None and s.left:
            rows.append(("ended", f"at step {s.last_step:,} of {s.planned:,} planned ({s.left:,} not run)"))
    elif s.eta_s is not None and s.planned is not None:
        rows.append(("ETA", f"{span(s.eta_s)} to step {s.planned:,} ({s.left:,} steps left)"))
    return rows


def _seconds(value: float) -> str:
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.3g} s"
