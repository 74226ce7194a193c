"""Metric files a training writes beside its log, and the run directories that hold them: Lightning's
``CSVLogger`` ``metrics.csv`` and TensorBoard event files (``events.out.tfevents.*``). One place decides
which reader a file gets (``gputui parse``, ``report``, ``replay``, ``attach``) and which files of a run
directory are read (``docs/log-formats.md``).

A run directory is a folder holding such files (``lightning_logs/version_7``), or one whose
``lightning_logs/`` holds them (a job's working directory: its newest ``version_*`` is taken). Where both
``metrics.csv`` and an event file are there (Lightning's CSVLogger and TensorBoardLogger together), the
event file is read: the same values and epochs, plus the time each was written (``metrics.csv`` has no
times); reading both would count every value twice.
"""

from __future__ import annotations

import os

from gputui.logs.lightning_csv import CsvMetricsParser
from gputui.logs.tensorboard import EventFileParser
from gputui.records import Record

LIGHTNING_LOGS = "lightning_logs"


def metric_file_kind(path: str) -> str | None:
    """``"tensorboard"`` or ``"csv"`` by the file's name; None for anything else."""
    base = os.path.basename(path)
    if "tfevents" in base:
        return "tensorboard"
    if base.endswith(".csv"):
        return "csv"
    return None


def metric_file_parser(path: str, kind: str | None = None) -> CsvMetricsParser | EventFileParser | None:
    """A fresh reader for a metric file (``kind`` forces one), or None when it is not one."""
    kind = kind or metric_file_kind(path)
    if kind == "tensorboard":
        parent = os.path.basename(os.path.dirname(os.path.abspath(path))).lower()
        return EventFileParser("val_" if parent.startswith(("val", "eval")) else "")
    if kind == "csv":
        return CsvMetricsParser()
    return None


def _metric_files(folder: str) -> list[str]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    events = [os.path.join(folder, n) for n in names if "tfevents" in n]
    if events:
        return events
    return [os.path.join(folder, "metrics.csv")] if "metrics.csv" in names else []


def run_dir_files(folder: str, *, job_id: str | None = None, since: float | None = None) -> list[str]:
    """The metric files of a run directory (see the module's rules); [] when it has none yet. Under
    ``lightning_logs/``: ``version_<job_id>`` when it exists (gputui's Lightning trainer names its runs so),
    else the newest version changed at ``since`` (a Unix time) or later."""
    found = _metric_files(folder)
    if found:
        return found
    logs = os.path.join(folder, LIGHTNING_LOGS)
    if job_id and _metric_files(os.path.join(logs, f"version_{job_id}")):
        return _metric_files(os.path.join(logs, f"version_{job_id}"))
    try:
        versions = [os.path.join(logs, n) for n in os.listdir(logs)]
        versions = [v for v in versions if os.path.isdir(v) and _metric_files(v)]
        changed = {v: os.path.getmtime(v) for v in versions}
    except OSError:
        return []
    fresh = [v for v in versions if since is None or changed[v] >= since]
    return _metric_files(max(fresh, key=changed.__getitem__)) if fresh else []


class MetricFileFollower:
    """A metric file read as it grows (``poll``), with its reader: ``metrics.csv`` rewritten with a new
    header is read again without repeating rows (the CSV reader's de-duplication), an event file rewritten
    is read anew. Same interface as the log follower: ``poll``, ``finish``, ``file``."""

    def __init__(self, path: str, *, job: str | None = None) -> None:
        from gputui.logs.follower import FileFollower

        self.path, self.job = path, job
        self.file = FileFollower(path)
        self.parser = metric_file_parser(path) or CsvMetricsParser()

    def poll(self) -> list[Record]:
        out: list[Record] = []
        while True:
            change = self.file.poll()
            if change.reset in ("truncated", "rotated"):
                if isinstance(self.parser, CsvMetricsParser):
                    self.parser.reset()
                else:
                    self.parser = metric_file_parser(self.path) or self.parser
            if change.data:
                out += self.parser.feed(change.data)
            if not change.more:
                return self._mark(out)

    def finish(self) -> list[Record]:
        return self._mark(self.poll() + self.parser.finish())

    def _mark(self, records: list[Record]) -> list[Record]:
        if self.job is not None:
            for record in records:
                record.fields.setdefault("job", self.job)
        return records
