"""The per-epoch view of a record stream: one row per completed epoch (per rank, per run).

- A row exists only for an epoch with ``scope="epoch"`` records (the line itself stated the epoch, or a
  progress bar reached its end): no epoch is invented. ``context`` values (printed without an epoch of
  their own) join the row of the epoch they were printed in, whether they come before or after it.
- End-of-epoch values: for progress bars (Keras, tqdm, Lightning) the last final frame wins (Lightning
  redraws the 100 % frame with ``val_*``); for line formats the first line wins and a *different* value
  for the same epoch and name is another stream (unlabelled ranks printing the same line): it is counted
  in ``streams`` and kept in ``conflicts``, never averaged. Identical repeats only raise ``streams``.
- Epoch time: printed (``epoch_time_s`` record), else, when ``measure`` is on (live following) or the
  records carry a clock's time (timestamps printed in the lines, or the writer's own time as in
  TensorBoard event files), the time between this epoch's end and the previous one's, marked
  ``epoch_time_source="measured"``.
- images/s = samples / epoch time, where samples come from the log (Keras sample counters, the
  ``[640/60000 (1%)]`` counter of the pytorch MNIST shape: ``samples_total`` on step records) or
  ``batch_size`` × steps, the steps being the bar total or the ``[i/N]`` batch counter of the
  training loop (``steps_total`` on step records). A batch size printed in the log is not used: it is
  per device in some scripts and global in others (``docs/log-formats.md``).
- Ranks: rows are kept per rank (``srun --label`` / ``[rankN]:``); ``None`` is the unlabelled stream.
- Runs: an epoch number lower than the previous one starts a new run (several trainings in one file),
  and so does a rewritten log (the follower's ``reset`` event: a requeued job truncating its output).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gputui.stream.records import Record

PROGRESS_SOURCES = frozenset({"keras", "tqdm", "lightning", "ultralytics"})  # bars: the last final frame wins
MAX_PENDING = 8


@dataclass
class EpochRow:
    epoch: int | float
    run: int = 0
    rank: int | None = None
    values: dict[str, float] = field(default_factory=dict)
    epoch_time_s: float | None = None
    epoch_time_source: str | None = None  # "printed" | "measured"
    samples: int | None = None
    steps: int | None = None
    images_per_s: float | None = None
    streams: int = 1
    conflicts: dict[str, list[float]] = field(default_factory=dict)
    end_time: float = 0.0
    end_time_printed: bool = False
    end_time_estimated: bool = False  # a replay placed it on its timeline: no epoch time from it
    _stated: dict[str, int] = field(default_factory=dict, repr=False)

    def to_json_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"epoch": self.epoch, "run": self.run}
        if self.rank is not None:
            out["rank"] = self.rank
        out["metrics"] = dict(self.values)
        for key in ("epoch_time_s", "epoch_time_source", "samples", "steps", "images_per_s"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.streams > 1:
            out["streams"] = self.streams
        if self.conflicts:
            out["conflicts"] = {k: list(v) for k, v in self.conflicts.items()}
        return out


@dataclass
class _Stream:
    run: int = 0
    last_epoch: int | float | None = None
    rows: dict[int | float, EpochRow] = field(default_factory=dict)
    pending: dict[int | float, dict[str, float]] = field(default_factory=dict)
    sizes: dict[int | float, dict[str, int]] = field(default_factory=dict)  # epoch → samples/steps counters


class EpochTable:
    """Feed records in stream order with :meth:`add`; read :meth:`rows`."""

    def __init__(self, *, measure: bool = False, batch_size: int | None = None) -> None:
        self.measure = measure
        self.batch_size = batch_size
        self._streams: dict[int | None, _Stream] = {}
        self._rows: list[EpochRow] = []

    def add_all(self, records: list[Record]) -> None:
        for record in records:
            self.add(record)

    def add(self, record: Record) -> None:
        if record.kind != "metric":
            if record.kind == "event" and record.get("reset"):  # the log was rewritten: a new run
                for stream in self._streams.values():
                    stream.run += 1
                    stream.rows, stream.pending, stream.last_epoch = {}, {}, None
            return
        fields = record.fields
        scope = fields.get("scope")
        epoch = fields.get("epoch")
        if epoch is None or scope not in ("epoch", "context", "step"):
            return
        if scope == "step" and "samples_total" not in fields and "steps_total" not in fields:
            return
        if isinstance(epoch, float) and epoch.is_integer():
            epoch = int(epoch)
        rank = fields.get("rank")
        stream = self._streams.get(rank)
        if stream is None:
            stream = self._streams[rank] = _Stream()
        if scope == "step":
            self._count(stream, epoch, fields)
            return
        name, value = fields["name"], fields["value"]
        if scope == "context":
            row = stream.rows.get(epoch)
            if row is not None and epoch == stream.last_epoch:
                if name not in row._stated:
                    row.values[name] = value
            else:
                stream.pending.setdefault(epoch, {})[name] = value
                while len(stream.pending) > MAX_PENDING:
                    stream.pending.pop(next(iter(stream.pending)))
            return
        if stream.last_epoch is not None and restarts(stream.last_epoch, epoch):
            stream.run += 1
            stream.rows = {}
        row = stream.rows.get(epoch)
        if row is None:
            row = EpochRow(epoch=epoch, run=stream.run, rank=rank)
            for key, val in stream.pending.pop(epoch, {}).items():
                row.values[key] = val
            if epoch in stream.sizes:
                self._size(row, stream.sizes[epoch])
            stream.rows[epoch] = row
            self._rows.append(row)
        stream.last_epoch = epoch
        row.end_time = record.time
        row.end_time_printed = fields.get("time_source") in ("printed", "emitted")  # a clock, not a read
        row.end_time_estimated = fields.get("time_source") == "estimated"
        self._set(row, name, value, fields.get("source"), fields)

    def _count(self, stream: _Stream, epoch: int | float, fields: dict) -> None:
        """Remember the per-epoch sample or step count a step record states (bounded)."""
        sizes = stream.sizes.setdefault(epoch, {})
        for key, name in (("samples_total", "samples"), ("steps_total", "steps")):
            if isinstance(fields.get(key), int):
                sizes[name] = fields[key]
        while len(stream.sizes) > MAX_PENDING:
            stream.sizes.pop(next(iter(stream.sizes)))
        row = stream.rows.get(epoch)
        if row is not None:
            self._size(row, sizes)

    @staticmethod
    def _size(row: EpochRow, sizes: dict[str, int]) -> None:
        if row.samples is None:
            row.samples = sizes.get("samples")
        if row.steps is None:
            row.steps = sizes.get("steps")

    def _set(self, row: EpochRow, name: str, value: float, source: str | None, fields: dict) -> None:
        progress = source in PROGRESS_SOURCES
        seen = row._stated.get(name, 0)
        if name == "epoch_time_s":
            if row.epoch_time_s is None or progress:
                row.epoch_time_s, row.epoch_time_source = value, "printed"
                row.samples = fields.get("samples", row.samples)
                row.steps = fields.get("steps", row.steps)
            row._stated[name] = seen + 1
            return
        if seen and not progress:
            row._stated[name] = seen + 1
            row.streams = max(row.streams, seen + 1)
            if value != row.values.get(name):
                row.conflicts.setdefault(name, []).append(value)
            return
        row._stated[name] = seen + 1 if not progress else 1
        row.values[name] = value

    def rows(self) -> list[EpochRow]:
        """Rows in order of appearance, with measured times and images/s filled in."""
        previous: dict[tuple[int | None, int], EpochRow] = {}
        for row in self._rows:
            key = (row.rank, row.run)
            before = previous.get(key)
            previous[key] = row
            if row.epoch_time_source != "printed":
                row.epoch_time_s = row.epoch_time_source = None
                estimated = row.end_time_estimated or (before is not None and before.end_time_estimated)
                if (
                    before is not None
                    and not estimated
                    and (self.measure or (row.end_time_printed and before.end_time_printed))
                ):
                    elapsed = row.end_time - before.end_time
                    if elapsed > 0:
                        row.epoch_time_s, row.epoch_time_source = round(elapsed, 3), "measured"
            samples = row.samples
            if samples is None and self.batch_size and row.steps:
                samples = self.batch_size * row.steps
            if samples and row.epoch_time_s:
                row.images_per_s = round(samples / row.epoch_time_s, 3)
        return list(self._rows)


def restarts(last: float, epoch: float) -> bool:
    """Whether an epoch number starts a new run after ``last``: it is lower (several trainings in one
    file, a requeued job starting over or resuming from a checkpoint). The epoch table numbers its runs
    by it, and the outcome tracker ends a run by it."""
    return epoch < last
