"""Training progress from metric records: series per metric, epochs, rates, ETA.

One rank speaks for the job (the lowest rank seen, or the unlabelled stream), so curves of several ranks
are not interleaved. Points are kept against the step when the source gives one, else the epoch, and
against time for the shared time axis. Epoch rows (epoch time, images/s) come from the project's one
:class:`~gputui.logs.epochs.EpochTable`, so the TUI and ``gputui parse`` agree; a run that counts steps
and no epochs is summarised by :class:`~gputui.analysis.steps.StepTracker` (the model of ``gputui parse``
and ``gputui report`` too): no epoch is shown for it, and its ETA is the steps'. Per followed log, the
lines that look like metrics but gave no record (:mod:`gputui.logs.unread`), as its source counted them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gputui.analysis.steps import STEP_TIMES, StepSummary, StepTracker
from gputui.logs.epochs import EpochRow, EpochTable
from gputui.logs.per_rank import is_per_rank
from gputui.monitor.series import Series
from gputui.monitor.spikes import Spikes, spikes
from gputui.stream.records import Record

# Metrics worth a chart, in the order the `m` key cycles through (then anything else seen).
PREFERRED = ("loss", "loss_step", "loss_epoch", "val_loss", "accuracy", "val_accuracy", "learning_rate")
PREFERRED += ("grad_norm",)
#: The training loss, by the names frameworks give it (Lightning logs ``train_loss_step``/``_epoch``).
LOSS_NAMES = ("loss", "loss_step", "loss_epoch")
SKIP = frozenset({"batch_size", "global_batch_size", "param_checksum", "param_crc32"})
MAX_EVALUATED = 65536  # evaluation steps remembered (spike names)


@dataclass
class MetricSeries:
    name: str
    by_step: Series = field(default_factory=lambda: Series(1024))
    by_epoch: Series = field(default_factory=lambda: Series(1024))
    by_time: Series = field(default_factory=lambda: Series(1024))
    last: float | None = None
    nonfinite: str | None = None  # "nan"/"inf" once such a value was seen

    def x_axis(self) -> tuple[str, Series]:
        if len(self.by_step) >= 2:
            return "step", self.by_step
        if len(self.by_epoch) >= 1:
            return "epoch", self.by_epoch
        return "time", self.by_time


@dataclass(frozen=True)
class UnreadLog:
    """A log's lines that look like metrics but gave no record: how many, in how many shapes, and per
    shape (most lines first) its line count and an example line."""

    path: str
    lines: int
    shapes: int
    examples: tuple[tuple[int, str], ...] = ()


class TrainingState:
    def __init__(self) -> None:
        self.metrics: dict[str, MetricSeries] = {}
        self.unread: dict[str, UnreadLog] = {}  # log path → its unread lines (only logs that have some)
        self.epochs = EpochTable(measure=True)
        self.steps = StepTracker()
        self.rank: int | None = None  # the rank that speaks for the job (None: unlabelled)
        self.epochs_total: int | None = None
        self.epoch_base: int | None = None
        self.epoch_now: float | None = None  # latest epoch position (fractional inside an epoch)
        self.epoch_printed: int | None = None  # the latest whole epoch number a line stated (1-based)
        self.step: int | None = None
        self.step_time = Series(2048)  # seconds per step over record time: the stall detector's line
        self.step_time_steps = Series(2048)  # printed seconds per step over the step (spikes.spikes)
        self.evaluated: set[int] = set()  # steps at which validation or test values were printed
        self._printed_step_time = False  # the log prints its step time (dt, step_time): the line is that
        self._last_step: tuple[float, int] | None = None
        self.first_time: float | None = None
        self.last_time: float | None = None
        self.world_size: int | None = None
        self.nonfinite: list[Record] = []
        self.ended = False  # the run is over (its outcome, train_finished, an ended job)
        self.recorded = False  # a replay: what the files state, no epoch assumed past the last one

    # ------------------------------------------------------------------ ingestion

    def add_event(self, rec: Record) -> None:
        """``train_started`` (epochs planned, world size); ``train_finished`` and ``outcome``: the run
        is over, so no epoch past the last one stated is in progress."""
        if rec.get("event") in ("train_finished", "outcome"):
            self.ended = True
        if rec.get("event") == "train_started":
            total = rec.get("epochs")
            if isinstance(total, int) and total > 0:
                self.epochs_total = total
            if isinstance(rec.get("world_size"), int):
                self.world_size = rec.get("world_size")

    def _speaks(self, rank: object) -> bool:
        """Whether a record of ``rank`` is the job's voice: the lowest rank seen; unlabelled records only
        until a labelled one arrives (a banner parsed before rank 0 speaks must not silence rank 0)."""
        if not isinstance(rank, int):
            return self.rank is None
        if self.rank is not None and rank < self.rank:
            # a lower rank takes over: drop the previous rank's points so curves are not interleaved
            self.metrics.clear()
            self.step_time = Series(2048)
            self.step_time_steps = Series(2048)
            self._last_step = self.step = self.epoch_now = self.epoch_printed = None
        if self.rank is None or rank < self.rank:
            self.rank = rank
        return rank == self.rank

    def add_metric(self, rec: Record) -> None:
        if is_per_rank(rec):  # the rank it names was measured, not the one printing: never the voice
            return
        f = rec.fields
        self.epochs.add(rec)
        self.steps.add(rec)
        total = f.get("epochs_total")
        if isinstance(total, int) and total > 0:
            self.epochs_total = total
        if not self._speaks(f.get("rank")):
            return
        name = f.get("name")
        if name in SKIP or not isinstance(name, str):
            return
        value = f.get("value")
        t = rec.time
        if self.first_time is None:
            self.first_time = t
        self.last_time = t
        series = self.metrics.get(name)
        if series is None:
            series = self.metrics[name] = MetricSeries(name)
        epoch, step = f.get("epoch"), f.get("step")
        if isinstance(f.get("epoch_base"), int):
            self.epoch_base = f["epoch_base"]
        if isinstance(epoch, int | float) and (self.epoch_now is None or epoch >= self.epoch_now):
            self.epoch_now = float(epoch)
        if isinstance(epoch, int):  # an epoch's number (a fractional position is a float)
            base = self.epoch_base if self.epoch_base is not None else 1
            self.epoch_printed = epoch - base + 1
        if isinstance(step, int) and step > 0:
            self._note_step(t, step, timed=rec.get("time_source") != "estimated")
        if not isinstance(value, int | float) or not math.isfinite(value):
            series.nonfinite = f.get("nonfinite") or ("nan" if value is None else str(value))
            self.nonfinite.append(rec)
            return
        series.last = value
        low, high = f.get("min"), f.get("max")
        extremes = (low, high) if f.get("count", 1) > 1 and low is not None and high is not None else (value,)
        for v in extremes:  # an aggregate record: its stretch's envelope (docs/records.md)
            series.by_time.append(t, v)
            if isinstance(step, int) and step > 0:
                series.by_step.append(step, v)
        if (
            isinstance(step, int)
            and name.startswith(("val_", "test_"))
            and len(self.evaluated) < MAX_EVALUATED
        ):
            self.evaluated.add(step)
        if isinstance(epoch, int | float) and f.get("scope") in (None, "epoch"):
            series.by_epoch.append(float(epoch), value)
        if name in STEP_TIMES:  # a printed step time is the line's own: the clock's guess gives way
            if not self._printed_step_time:
                self._printed_step_time = True
                self.step_time = Series(2048)
            for v in extremes:
                self.step_time.append(t, v * STEP_TIMES[name])
                if isinstance(step, int):
                    self.step_time_steps.append(step, v * STEP_TIMES[name])

    def step_spikes(self) -> Spikes | None:
        """The printed step time's spikes and what they are (:mod:`gputui.monitor.spikes`)."""
        points = self.step_time_steps
        return spikes(points.times, points.values, self.evaluated) if len(points) else None

    def _note_step(self, t: float, step: int, *, timed: bool = True) -> None:
        """A step seen at ``t``; the time per step from the clock, unless the times are estimated (a log
        without times replayed) or the log prints its own step time."""
        last = self._last_step
        if (
            timed
            and not self._printed_step_time
            and last is not None
            and step > last[1]
            and t - last[0] > 1e-3
        ):
            self.step_time.append(t, (t - last[0]) / (step - last[1]))
        if last is None or step > last[1]:
            self._last_step = (t, step)
            self.step = step

    def note_unread(self, path: str, lines: int, shapes: int, examples: tuple = ()) -> None:
        """The source's latest count of ``path``'s unread lines."""
        if shapes:
            self.unread[path] = UnreadLog(path, lines, shapes, tuple(examples))
        else:
            self.unread.pop(path, None)

    # ------------------------------------------------------------------ views

    def unread_total(self) -> tuple[int, int]:
        """(lines, shapes) not read, over every log."""
        logs = self.unread.values()
        return sum(u.lines for u in logs), sum(u.shapes for u in logs)

    def loss(self) -> MetricSeries | None:
        """The training loss series: ``loss``, else Lightning's per-step, else per-epoch loss."""
        return next((self.metrics[n] for n in LOSS_NAMES if n in self.metrics), None)

    def names(self) -> list[str]:
        """Chartable metrics: preferred first, then the rest in the order seen."""
        seen = [n for n in self.metrics if not n.endswith(("_per_s", "_time_s"))]
        return [n for n in PREFERRED if n in seen] + [n for n in seen if n not in PREFERRED]

    def rows(self) -> list[EpochRow]:
        """Completed epochs of the speaking rank (or the unlabelled stream)."""
        rows = [r for r in self.epochs.rows() if r.rank == self.rank or r.rank is None]
        return rows or self.epochs.rows()

    def epoch_display(self) -> float | None:
        """The epoch position numbered from 1, as the source states it (None before any epoch)."""
        if self.epoch_now is None:
            return None
        base = self.epoch_base if self.epoch_base is not None else 1
        return self.epoch_now - base + 1

    def step_summary(self) -> StepSummary | None:
        """The step view of a run that counts steps and no epochs (None for a run with epochs)."""
        if self.epochs_total is not None:
            return None
        return self.steps.summary()

    def current_epoch(self) -> int | None:
        """The epoch in progress or, once the run is over (:attr:`ended`) or in a replay (:attr:`recorded`),
        the last one stated (1-based).

        Stated: the completed epochs (or the last one's printed number, when that is further: a log read
        from its tail) and the epoch the latest lines print (``Train Epoch: 7 [...]`` is in epoch 7 before
        any epoch of it has completed). While the run goes on, one past the completed ones; capped at the
        planned total."""
        if self.epoch_now is None and (not self.metrics or self.step_summary() is not None):
            return None  # nothing yet, or a run without epochs
        rows = self.rows()
        completed = len(rows)
        if rows and isinstance(rows[-1].epoch, int):
            base = self.epoch_base if self.epoch_base is not None else 1
            completed = max(completed, rows[-1].epoch - base + 1)
        current = max(1, completed, self.epoch_printed or 0)
        if not (self.ended or self.recorded):
            current = max(current, completed + 1)
        return min(current, self.epochs_total) if self.epochs_total else current

    def epoch_times(self) -> list[float]:
        return [r.epoch_time_s for r in self.rows() if r.epoch_time_s is not None]

    def images_per_s(self) -> float | None:
        """Latest throughput: global images/s when stated, else rank images/s, else the epoch table's."""
        for name in ("global_images_per_s", "images_per_s", "samples_per_s"):
            series = self.metrics.get(name)
            if series is not None and series.last is not None:
                return series.last
        rates = [r.images_per_s for r in self.rows() if r.images_per_s]
        return rates[-1] if rates else None

    def eta_s(self) -> float | None:
        """Seconds to the last epoch: remaining epochs × mean epoch time (the first epoch left out when
        there are others: it carries start-up and compilation); for a run without epochs, to the planned
        steps (:class:`~gputui.analysis.steps.StepSummary`)."""
        steps = self.step_summary()
        if steps is not None:
            return steps.eta_s
        times = self.epoch_times()
        done = self.epoch_display()
        if not times or self.epochs_total is None or done is None:
            return None
        steady = times[1:] or times
        per_epoch = sum(steady) / len(steady)
        completed = len(self.rows())
        remaining = max(0.0, self.epochs_total - max(completed, done if done > completed else completed))
        return remaining * per_epoch
