"""MLflow's local file store (``mlruns/``), read directly: no mlflow package needed.

The layout, as MLflow's ``FileStore`` writes it (``mlflow/store/tracking/file_store.py``)::

    mlruns/<experiment id>/meta.yaml                 the experiment
    mlruns/<experiment id>/<run id>/meta.yaml        the run: run_name, status, start_time, end_time (ms)
    mlruns/<experiment id>/<run id>/metrics/<name>   one line per logged value: ``<ms> <value> <step>``
                                                     (older files: ``<ms> <value>``, step 0; with a
                                                     dataset: ``<ms> <value> <step> <name> <digest>``)
    mlruns/<experiment id>/<run id>/params/, tags/   one file per key (not metrics)

A metric name with ``/`` (``train/loss``) is a sub-folder of ``metrics/``. Each metric file only grows
(MLflow appends a line per value), so a run is followed by following each file
(:class:`gputui.logs.follower.FileFollower`). The run's ``status`` in ``meta.yaml`` (an int: 1 RUNNING,
2 SCHEDULED, 3 FINISHED, 4 FAILED, 5 KILLED) gives the outcome at the end.
"""

from __future__ import annotations

import os

from gputui.logs.base import Context
from gputui.logs.files.structured import EPOCH, as_epoch, end_event, logged_value
from gputui.logs.follower import FileFollower
from gputui.stream.records import Record

NAME = "mlflow"
META = "meta.yaml"
METRICS = "metrics"
STATUSES = {1: "RUNNING", 2: "SCHEDULED", 3: "FINISHED", 4: "FAILED", 5: "KILLED"}
OUTCOMES = {"FINISHED": "completed", "FAILED": "crashed", "KILLED": "cancelled"}
MAX_EPOCH_STEPS = 1 << 20  # steps whose logged epoch is kept (the oldest are dropped beyond)

Row = tuple[str, int, float, int]  # metric name, time (ms), value, step


def is_run_dir(folder: str) -> bool:
    """Whether ``folder`` is an MLflow run (a ``meta.yaml`` beside a ``metrics/`` folder)."""
    return os.path.isfile(os.path.join(folder, META)) and os.path.isdir(os.path.join(folder, METRICS))


def read_meta(run_dir: str) -> dict[str, str]:
    """The top-level ``key: value`` pairs of a ``meta.yaml`` (quotes taken off; {} when unreadable)."""
    try:
        with open(os.path.join(run_dir, META), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return {}
    meta = {}
    for line in lines:
        key, sep, value = line.partition(":")
        if sep and key and not key.startswith((" ", "-", "#")):
            meta[key.strip()] = value.strip().strip("'\"")
    return meta


def parse_line(name: str, line: bytes) -> Row | None:
    """One metric line as MLflow reads it (2, 3 or 5 fields), or None when it is not one."""
    parts = line.split()
    if len(parts) not in (2, 3, 5):
        return None
    try:
        return name, int(parts[0]), float(parts[1]), int(parts[2]) if len(parts) > 2 else 0
    except ValueError:
        return None


class MlflowRun:
    """One run of the store, read as it grows: ``poll`` gives the records of the values logged since the
    last poll, and the outcome once ``meta.yaml`` says the run ended; ``finish`` gives the rest (and the
    outcome, ``unknown`` for a run still RUNNING). ``feed`` (the metric-file reader interface of
    :mod:`gputui.logs.files.metric_files`: the bytes of ``meta.yaml``) polls the run from disk."""

    def __init__(self, run_dir: str) -> None:
        self.run_dir = run_dir
        self.skipped = 0  # lines that are not metric lines
        self._files: dict[str, FileFollower] = {}
        self._partial: dict[str, bytes] = {}
        self._epochs: dict[int, float] = {}  # step → the epoch logged at it
        self._last_epoch_step = -1
        self._pending: list[Row] = []  # values of a step beyond the latest epoch, held for one poll
        self._ctx = Context()
        self._last_time: float | None = None
        self._meta_mtime, self._meta_values = -1.0, {}
        self._told = False  # the outcome was given

    def feed(self, data: bytes, now: float | None = None) -> list[Record]:
        return self.poll()

    def poll(self, final: bool = False) -> list[Record]:
        """The values logged since the last poll; once ``meta.yaml`` says the run ended, all of them
        and the outcome."""
        ended = self._meta().get("status") in ("3", "4", "5")  # FINISHED, FAILED, KILLED
        self._discover()
        rows: list[Row] = []
        for name, follower in self._files.items():
            rows += self._read(name, follower, final or ended)
        for name, _ms, value, step in rows:
            if name == EPOCH:
                self._epochs[step] = value
                self._last_epoch_step = max(self._last_epoch_step, step)
                if len(self._epochs) > MAX_EPOCH_STEPS:
                    del self._epochs[next(iter(self._epochs))]
        held, self._pending = self._pending, []
        new = [r for r in rows if r[0] != EPOCH]
        out = self._records(held + new, hold=not (final or ended), first_new=len(held))
        if (final or ended) and not self._told:
            self._told = True
            out.append(self._outcome())
        return out

    def finish(self, now: float | None = None) -> list[Record]:
        return self.poll(final=True)

    def _meta(self) -> dict[str, str]:
        """``meta.yaml``, read again when it changed."""
        mtime = _mtime(os.path.join(self.run_dir, META))
        if mtime != self._meta_mtime:
            self._meta_mtime, self._meta_values = mtime, read_meta(self.run_dir)
        return self._meta_values

    def _discover(self) -> None:
        root = os.path.join(self.run_dir, METRICS)
        for folder, _dirs, names in os.walk(root):
            for base in names:
                path = os.path.join(folder, base)
                name = os.path.relpath(path, root).replace(os.sep, "/")
                if name not in self._files:
                    self._files[name] = FileFollower(path)

    def _read(self, name: str, follower: FileFollower, final: bool) -> list[Row]:
        data = self._partial.get(name, b"")
        while True:
            change = follower.poll()
            if change.reset in ("truncated", "rotated"):
                data = b""  # rewritten: its lines are read again from the start
            data += change.data
            if not change.more:
                break
        cut = len(data) if final else data.rfind(b"\n") + 1
        self._partial[name] = data[cut:]
        rows = []
        for line in data[:cut].splitlines():
            row = parse_line(name, line) if line.strip() else None
            if row is not None:
                rows.append(row)
            elif line.strip():
                self.skipped += 1
        return rows

    def _records(self, rows: list[Row], *, hold: bool, first_new: int) -> list[Record]:
        """Records in (step, time) order; a new value of a step after the latest logged epoch waits one
        poll for its epoch (the ``epoch`` file may be written just after the metric's)."""
        out: list[Record] = []
        for index, (name, ms, value, step) in enumerate(rows):
            epoch = self._epochs.get(step)
            if epoch is None and hold and index >= first_new and step > self._last_epoch_step >= 0:
                self._pending.append((name, ms, value, step))
                continue
            when = ms / 1000.0
            self._last_time = when if self._last_time is None else max(self._last_time, when)
            rec = logged_value(
                name, value, source=NAME, when=when, step=step, epoch=as_epoch(epoch), ctx=self._ctx
            )
            if rec is not None:
                out.append(rec)
        out.sort(key=lambda r: (r.fields.get("step", 0), r.time))
        return out

    def _outcome(self) -> Record:
        meta = self._meta()
        code = meta.get("status", "")
        status = STATUSES.get(int(code), code) if code.isdigit() else code or "unknown"
        name = meta.get("run_name") or os.path.basename(os.path.normpath(self.run_dir))
        end = meta.get("end_time", "")
        when = int(end) / 1000.0 if end.isdigit() else self._last_time
        if when is None:
            when = _mtime(os.path.join(self.run_dir, META))
        outcome = OUTCOMES.get(status)
        if outcome is None:
            return end_event("unknown", f"MLflow run {name} is {status}: no end recorded", when)
        return end_event(outcome, f"MLflow run {name} ended {status}", when)


def _mtime(path: str) -> float:
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0
