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

from gputui.analysis.running import Running
from gputui.stream.names import SAMPLES, STEP_TIMES, TOKENS
from gputui.stream.records import Record

LOSS_NAMES = ("loss", "lm_loss", "loss_step")
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
    throughput_mean: float | None = None  # over the run: weighted by the step times where printed
    elapsed_s: float | None = None  # the printed step times over the steps they stand for
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


def _slope(points: list[tuple[int, float]]) -> float | None:
    n = len(points)
    if n < 2:
        return None
    mx = sum(s for s, _ in points) / n
    my = sum(v for _, v in points) / n
    sxx = sum((s - mx) ** 2 for s, _ in points)
    return None if sxx == 0 else sum((s - mx) * (v - my) for s, v in points) / sxx


class StepTracker:
    """Feed records with :meth:`add`; :meth:`summary` reads them. Every printed value counts (an
    aggregate record of a catch-up read, ``count`` > 1, for as many: ``docs/records.md``)."""

    def __init__(self) -> None:
        self.rank: int | None = None
        self.epochs = False  # a record with an epoch: the run's views are its epochs
        self.run = 0
        self._reset()

    def _reset(self) -> None:
        self.first: int | None = None
        self.last: int | None = None
        self.planned: int | None = None
        self.loss: dict[str, Running] = {}
        self.times = Running()  # printed step times, the first step's left out
        self.first_time: float | None = None
        self.elapsed = 0.0  # the printed step times over the steps they stand for
        self._time_step: int | None = None  # the step of the latest step time
        self.clock: list[tuple[int, float]] = []  # (step, record time) where the time is a clock's
        self.rates: dict[str, Running] = {}  # unit → the rates as printed
        self.rates_timed: dict[str, Running] = {}  # unit → the rates weighted by the step times beside them
        self._pair: list = [None, None, None]  # the latest step, its step time, its (unit, rate)
        self.timed: dict[str, float] = {}  # unit → how many rates were weighted by a step time
        self._first_gap: int | None = None  # steps between the first two step times
        self.mfu = Running()

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
        first = f.get("step_first", step)
        if self.first is None:
            self.first = first if isinstance(first, int) else step
        if self.last is None or step > self.last:
            self.last = step
            if f.get("time_source") in ("printed", "emitted"):
                self.clock.append((step, when))  # a clock's time: step time from the records
                if len(self.clock) > MAX_POINTS:
                    self.clock[1:] = self.clock[2::2]
        total = f.get("steps_total")
        if isinstance(total, int) and total > 0:
            self.planned = total
        name, value = f.get("name"), f.get("value")
        if not isinstance(value, int | float) or value != value or not isinstance(name, str):
            return
        count = f.get("count", 1)
        since = first if count > 1 and isinstance(first, int) else None  # an aggregate's steps
        if name in LOSS_NAMES:
            self.loss.setdefault(name, Running()).add(step, float(value), count, since)
        elif name in STEP_TIMES:
            self._step_time_value(step, value * STEP_TIMES[name], count, since)
        elif name in TOKENS or name in SAMPLES:
            unit = "tokens/s" if name in TOKENS else "samples/s"
            self.rates.setdefault(unit, Running()).add(step, float(value), count, since)
            weight, timed = f.get("weight_s"), f.get("timed")
            if isinstance(weight, int | float) and isinstance(timed, int | float):
                self.rates_timed.setdefault(unit, Running()).add(step, float(timed), weight, since)
                self.timed[unit] = self.timed.get(unit, 0) + count
            else:
                self._pair_rate(step, unit, float(value))
        elif name in MFU:
            self.mfu.add(step, value * 100 if name == "mfu" and value <= 1 else float(value), count, since)

    def _step_time_value(self, step: int, seconds: float, count: int, since: int | None) -> None:
        """A printed step time (or the mean of ``count`` of them, up to ``step``): the mean, the elapsed
        time (each time standing for the steps since the previous one), the pairing with a rate."""
        if self._time_step is None:
            self.first_time = seconds  # start-up and compilation: out of the mean, in the elapsed
            self.elapsed += seconds
            if count > 1:
                self.times.add(step, seconds, count - 1, since)
        else:
            if self._first_gap is None:
                self._first_gap = max(1, (step - self._time_step) // count)
            self.times.add(step, seconds, count, since)
            self.elapsed += seconds * max(count, step - self._time_step)
        self._time_step = step
        if count == 1:
            pair = self._pair
            if pair[0] == step and pair[2] is not None:
                unit, rate = pair[2]
                self.rates_timed.setdefault(unit, Running()).add(step, rate, seconds)
                self.timed[unit] = self.timed.get(unit, 0) + 1
                pair[2] = None
            else:
                pair[0], pair[1], pair[2] = step, seconds, None

    def _pair_rate(self, step: int, unit: str, rate: float) -> None:
        """A rate printed at a step: weighted by the step time printed on the same step."""
        pair = self._pair
        if pair[0] == step and pair[1] is not None:
            self.rates_timed.setdefault(unit, Running()).add(step, rate, pair[1])
            self.timed[unit] = self.timed.get(unit, 0) + 1
        else:
            pair[0], pair[1], pair[2] = step, None, (unit, rate)

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
                plain, timed = self.rates[unit], self.rates_timed.get(unit)
                whole = timed if timed and self.timed.get(unit, 0) >= 0.9 * plain.weights else None
                out.throughput, out.throughput_unit = plain.mean_since(since), unit
                out.throughput_mean = (whole or plain).mean()
                break
        if self.mfu:
            out.mfu_pct = self.mfu.mean_since(since)
        if self._time_step is not None and self.first_time is not None:
            # the first printed step stands for one printing interval, at most its own number (as the
            # replay's clock, gputui.sources.log_clock): Megatron's iteration 100 for 100
            first_span = max(1, min(first, self._first_gap or 1))
            out.elapsed_s = self.elapsed + self.first_time * (first_span - 1)
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
        series = self.loss[name]
        assert series.first is not None and series.last is not None
        out.loss_name, out.loss_first, out.loss_last = name, series.first[1], series.last[1]
        slope = _slope(series.points(since))
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
        if self.times or self.first_time is not None:
            out.step_time_s = self.times.mean() if self.times else self.first_time
            out.step_time_recent_s = self.times.mean_since(since) if self.times else self.first_time
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


def clock(seconds: float) -> str:
    """``2:37:40``, ``1 day, 2:03:04``: a duration as H:MM:SS."""
    s = round(max(0.0, seconds))
    days, s = divmod(s, 86400)
    text = f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{days} day{'s' if days > 1 else ''}, {text}" if days else text


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
        whole = f"{s.throughput_mean:,.0f} over the run, " if s.throughput_mean is not None else ""
        rows.append((str(s.throughput_unit), f"{whole}{s.throughput:,.0f} recent"))
    if s.elapsed_s is not None:
        rows.append(("elapsed", f"{clock(s.elapsed_s)} (the printed step times)"))
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
