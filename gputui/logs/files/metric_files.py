"""Metric files a training writes beside its log, and the run directories that hold them: Lightning's
``CSVLogger`` ``metrics.csv`` and TensorBoard event files (``events.out.tfevents.*``). One place decides
which reader a file gets (``gputui parse``, ``report``, ``replay``, ``attach``) and which files of a run
directory are read (``docs/log-formats.md``).

A run directory is a folder holding such files (``lightning_logs/version_7``), or one whose
``lightning_logs/`` holds them (a job's working directory: its newest ``version_*`` is taken). Where both
``metrics.csv`` and an event file are there (Lightning's CSVLogger and TensorBoardLogger together), the
event file is read: the same values and epochs, plus the time each was written (``metrics.csv`` has no
times); reading both would count every value twice.

Structured run stores (``docs/log-formats.md``, *Structured sources*) are read the same way, each run
by its own reader: an MLflow file-store run (:mod:`gputui.logs.files.mlflow_store`; its "file" is the run's
``meta.yaml``, the reader reads the run's ``metrics/`` beside it) and a W&B run's ``run-<id>.wandb``
(:mod:`gputui.logs.files.wandb_offline`, the ``gputui[wandb]`` extra). A run directory may also be a store
holding several runs: an ``mlruns/`` root (``.trash`` inside, or so named), one experiment of it, a
``wandb/`` folder, or a folder with ``mlruns/`` or ``wandb/`` inside. ``run_dir_files`` takes its newest
run (as with Lightning's versions); :func:`runs_of` lists them all, for commands where each run is its
own RUN.

Per-rank diagnostics are read beside them: an ``nccl-inspector-<jobid>/`` folder of NCCL Inspector files
(:mod:`gputui.logs.files.nccl_inspector`) in a run directory (``nccl-inspector-<job_id>`` when the job is
known, else the newest) adds its ``<host>-pid<pid>.log`` files to the run's; such a folder given itself is
a run directory of those files.
"""

from __future__ import annotations

import os
import time

from gputui.logs.files import mlflow_store, nccl_inspector
from gputui.logs.files.lightning_csv import CsvMetricsParser
from gputui.logs.files.mlflow_store import MlflowRun
from gputui.logs.files.nccl_inspector import NcclInspectorParser
from gputui.logs.files.tensorboard import EventFileParser
from gputui.logs.files.wandb_offline import MissingExtra, WandbRunParser
from gputui.stream.records import Record, event

LIGHTNING_LOGS = "lightning_logs"
STORES = ("mlruns", "wandb")
Reader = CsvMetricsParser | EventFileParser | MlflowRun | WandbRunParser | NcclInspectorParser


def metric_file_kind(path: str) -> str | None:
    """``"tensorboard"``, ``"csv"``, ``"wandb"``, ``"mlflow"`` (a run's ``meta.yaml``) or
    ``"nccl_inspector"`` by the file's name; None for anything else."""
    base = os.path.basename(path)
    if nccl_inspector.is_inspector_file(path):
        return nccl_inspector.NAME
    if "tfevents" in base:
        return "tensorboard"
    if base.endswith(".csv"):
        return "csv"
    if base.endswith(".wandb"):
        return "wandb"
    if base == mlflow_store.META and mlflow_store.is_run_dir(os.path.dirname(path) or "."):
        return "mlflow"
    return None


def metric_file_parser(path: str, kind: str | None = None) -> Reader | None:
    """A fresh reader for a metric file (``kind`` forces one), or None when it is not one. A W&B file
    without the ``wandb`` package raises :class:`~gputui.logs.files.wandb_offline.MissingExtra` (a
    ``ValueError`` whose message is the line to show)."""
    kind = kind or metric_file_kind(path)
    if kind == "tensorboard":
        parent = os.path.basename(os.path.dirname(os.path.abspath(path))).lower()
        return EventFileParser("val_" if parent.startswith(("val", "eval")) else "")
    if kind == "csv":
        return CsvMetricsParser()
    if kind == "wandb":
        return WandbRunParser()
    if kind == "mlflow":
        return MlflowRun(os.path.dirname(path) or ".")
    if kind == nccl_inspector.NAME:
        return NcclInspectorParser()
    return None


def _metric_files(folder: str) -> list[str]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    events = [os.path.join(folder, n) for n in names if "tfevents" in n]
    if events:
        return events
    if "metrics.csv" in names:
        return [os.path.join(folder, "metrics.csv")]
    if mlflow_store.META in names and mlflow_store.is_run_dir(folder):
        return [os.path.join(folder, mlflow_store.META)]
    wandb = [os.path.join(folder, n) for n in names if n.startswith("run-") and n.endswith(".wandb")][:1]
    return wandb or nccl_inspector.inspector_files(folder)


def _store_runs(folder: str, depth: int) -> list[str]:
    """The run folders (MLflow or W&B) among ``folder``'s sub-folders; ``depth`` 2 also looks one level
    further into MLflow experiments (folders with a ``meta.yaml``)."""
    try:
        children = sorted(e.path for e in os.scandir(folder) if e.is_dir(follow_symlinks=False))
    except OSError:
        return []
    runs = []
    for child in children:
        base = os.path.basename(child)
        if base.startswith(("run-", "offline-run-")):
            wandb_file = os.path.join(child, f"run-{base.rsplit('-', 1)[-1]}.wandb")
            runs += [child] if os.path.isfile(wandb_file) else []
        elif mlflow_store.is_run_dir(child):
            runs.append(child)
        elif depth > 1 and os.path.isfile(os.path.join(child, mlflow_store.META)):
            runs += _store_runs(child, 1)
    return runs


def store_runs(folder: str) -> list[str]:
    """The runs of the MLflow store or W&B folder that ``folder`` is or holds (``mlruns/``, ``wandb/``)."""
    name = os.path.basename(os.path.normpath(folder))
    if name in STORES or os.path.isdir(os.path.join(folder, ".trash")):  # .trash: an MLflow store's root
        return _store_runs(folder, 2)
    if os.path.isfile(os.path.join(folder, mlflow_store.META)):  # one experiment
        return _store_runs(folder, 1)
    return [run for store in STORES for run in _store_runs(os.path.join(folder, store), 2)]


def runs_of(path: str) -> list[str]:
    """``path`` as RUNs: the runs of a store that holds several (each its own RUN), else ``[path]``."""
    if not os.path.isdir(path) or _metric_files(path):
        return [path]
    runs = store_runs(path)
    return runs if len(runs) > 1 else [path]


def metric_paths(paths: list[str]) -> list[str]:
    """Files to read for ``paths``: a file as it is; a directory's metric files, every run of a store
    (a directory without any stays, for its reader's one-line error)."""
    out = []
    for path in paths:
        files = [f for run in runs_of(path) for f in run_dir_files(run)] if os.path.isdir(path) else []
        out += files or [path]
    return out


def run_dir_files(folder: str, *, job_id: str | None = None, since: float | None = None) -> list[str]:
    """The metric files of a run directory (see the module's rules); [] when it has none yet. Under
    ``lightning_logs/``: ``version_<job_id>`` when it exists (gputui's Lightning trainer names its runs so),
    else the newest version, or run of a store, changed at ``since`` (a Unix time) or later. Then the
    files of its ``nccl-inspector-*`` folder (:func:`~gputui.logs.files.nccl_inspector.inspector_folder`)."""
    inspector = nccl_inspector.inspector_folder(folder, job_id=job_id, since=since)
    beside = nccl_inspector.inspector_files(inspector) if inspector else []
    return _training_files(folder, job_id=job_id, since=since) + beside


def _training_files(folder: str, *, job_id: str | None, since: float | None) -> list[str]:
    found = _metric_files(folder)
    if found:
        return found
    logs = os.path.join(folder, LIGHTNING_LOGS)
    if job_id and _metric_files(os.path.join(logs, f"version_{job_id}")):
        return _metric_files(os.path.join(logs, f"version_{job_id}"))
    try:
        versions = [os.path.join(logs, n) for n in os.listdir(logs)] if os.path.isdir(logs) else []
        versions = [v for v in versions if os.path.isdir(v) and _metric_files(v)] + store_runs(folder)
        changed = {v: os.path.getmtime(v) for v in versions}
    except OSError:
        return []
    fresh = [v for v in versions if since is None or changed[v] >= since]
    return _metric_files(max(fresh, key=changed.__getitem__)) if fresh else []


class MetricFileFollower:
    """A metric file read as it grows (``poll``), with its reader: ``metrics.csv`` rewritten with a new
    header is read again without repeating rows (the CSV reader's de-duplication), an event file or a
    ``.wandb`` file rewritten is read anew; an MLflow run polls its own metric files. A reader that
    cannot be had (a W&B file without the ``wandb`` package) gives one ``error`` event saying what to
    install, and nothing else. Same interface as the log follower: ``poll``, ``finish``, ``file``."""

    def __init__(self, path: str, *, job: str | None = None) -> None:
        from gputui.logs.follower import FileFollower

        self.path, self.job = path, job
        self.file = FileFollower(path)
        self.problem: str | None = None
        try:
            self.parser: Reader = metric_file_parser(path) or CsvMetricsParser()
        except MissingExtra as exc:
            self.problem, self.parser = str(exc), CsvMetricsParser()

    def poll(self) -> list[Record]:
        if self.problem is not None:
            return self._mark(self._say_problem())
        if isinstance(self.parser, MlflowRun):
            return self._mark(self.parser.poll())
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
                if isinstance(self.parser, NcclInspectorParser):  # windows over by the clock
                    out += self.parser.idle(time.time())
                return self._mark(out)

    def finish(self) -> list[Record]:
        if self.problem is not None or isinstance(self.parser, MlflowRun):
            return self._mark(self._say_problem() if self.problem else self.parser.finish())
        return self._mark(self.poll() + self.parser.finish())

    def _say_problem(self) -> list[Record]:
        if not self.problem:
            return []
        message, self.problem = f"{self.path}: {self.problem}", ""
        return [event("error", message=message)]

    def _mark(self, records: list[Record]) -> list[Record]:
        if self.job is not None:
            for record in records:
                record.fields.setdefault("job", self.job)
        return records
