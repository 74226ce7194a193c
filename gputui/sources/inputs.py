"""The files that make up a run, and what kind each is: the one rule of ``gputui report``, ``scale``,
``export``, ``check``, ``replay`` and the jobs screen's replay of an ended job (``docs/analysis.md``).

A RUN is

- a file: a record file (``--log``, ``attach --output``, ``gputui parse --json``: JSON lines, judged by
  its first line), a metric file by its name (``metrics.csv``, TensorBoard events, an MLflow run's
  ``meta.yaml``, a W&B ``run-<id>.wandb``: :mod:`gputui.logs.files.metric_files`), else a training log;
- a run directory: its metric files (:func:`~gputui.logs.files.metric_files.run_dir_files`);
- a Slurm job id (``123``, ``123_4``): its ``slurm-ID.out`` and ``gputui-ID-*.jsonl`` in the current
  directory; where none are here, Slurm says where its output went (``scontrol``, else ``sacct`` for
  an ended job) and :func:`job_files` finds them there.

Each file is opened as records once (:meth:`RunFile.records`); a RUN that cannot be resolved or read is
a :class:`RunError` whose text is one line for the user. Nothing here imports Textual.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from gputui.logs.files.metric_files import metric_file_kind, metric_file_parser, run_dir_files
from gputui.slurm.history import record_files
from gputui.slurm.jobs import Job
from gputui.stream.io import ReadStats, parse_line, read_file
from gputui.stream.records import Record, RecordError

RECORDS = "records"  # JSON-lines records
LOG = "log"  # a training log, read by the project's log parser
# other kinds are those of metric_file_kind: "csv", "tensorboard", "mlflow", "wandb"
JOB_ID = re.compile(r"^\d+(?:_\d+)?$")
READ_SIZE = 1 << 20
NO_METRIC_FILES = "a directory without metrics.csv, event files, lightning_logs/ or nccl-inspector-*/"


class RunError(Exception):
    """A RUN that cannot be resolved or read: ``str()`` is one line for the user."""


def is_record_file(path: str) -> bool:
    """Whether ``path`` holds JSON-lines records (judged by its first non-empty line)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(65536)
    except OSError:
        return False
    for line in head.splitlines():
        if line.strip():
            if not line.lstrip().startswith(b"{"):
                return False
            try:
                return bool(parse_line(line))
            except (ValueError, RecordError):
                return False
    return path.endswith((".jsonl", ".json"))


def file_kind(path: str) -> str:
    """:data:`RECORDS`, a metric file's kind, else :data:`LOG`."""
    if is_record_file(path):
        return RECORDS
    return metric_file_kind(path) or LOG


@dataclass(frozen=True)
class RunFile:
    """One file of a run and its kind."""

    path: str
    kind: str

    @classmethod
    def of(cls, path: str) -> RunFile:
        return cls(path, file_kind(path))

    def records(self, stats: ReadStats | None = None) -> Iterator[Record]:
        """The file's records, read once: a record file by the record reader (bad lines counted in
        ``stats``), a metric file by its reader, a training log by the log parser (catch-up mode: exact
        epochs). Raises OSError, and ValueError for a reader that cannot be had (a W&B file without
        the ``wandb`` package: the message is the line to show)."""
        if self.kind == RECORDS:
            yield from read_file(self.path, stats)
            return
        parser = metric_file_parser(self.path, self.kind) if self.kind != LOG else None
        if parser is None:
            from gputui.logs.parser import LogParser

            parser = LogParser(path=self.path)
            parser.thin = True
        with open(self.path, "rb") as stream:
            while chunk := stream.read(READ_SIZE):
                yield from parser.feed(chunk)
        yield from parser.finish()


def cannot_read(path: str, exc: OSError) -> str:
    """The one line for a file that cannot be read."""
    return f"cannot read {path}: {exc.strerror or exc}"


def file_records(path: str) -> Iterator[Record]:
    """A file's records, its kind judged here (see :meth:`RunFile.records`)."""
    return RunFile.of(path).records()


def job_files(job: Job) -> list[str]:
    """A job's output (stdout, stderr when separate) and the record files gputui wrote beside it
    (``gputui-<job>-<node>.jsonl`` in its work directory, or beside its output)."""
    files = [p for p in dict.fromkeys([job.stdout, job.stderr]) if p and os.path.isfile(p)]
    folder = job.work_dir or (os.path.dirname(job.stdout) if job.stdout else "")
    if folder and not job.stdout:
        default = os.path.join(folder, f"slurm-{job.job_id}.out")  # sacct does not say where output went
        if os.path.isfile(default):
            files.append(default)
    if folder:
        ids = dict.fromkeys([job.job_id, str(job.raw_job_id or "")])  # an array task's own id: %j
        for jid in (i for i in ids if i):
            files += record_files(jid, folder)
    return files


def slurm_job(job_id: str) -> Job:
    """The job as Slurm knows it: ``scontrol`` while slurmctld remembers it, else accounting. Raises
    :class:`~gputui.slurm.commands.SlurmError` (one line)."""
    from gputui.slurm.jobs import JobNotFound
    from gputui.slurm.sacct import finished_job
    from gputui.slurm.scontrol import job_detail

    try:
        return job_detail(job_id)
    except JobNotFound:
        return finished_job(job_id)


def _job_run_files(job_id: str, folder: str) -> list[str]:
    here = [p for p in (os.path.join(folder, f"slurm-{job_id}.out"),) if os.path.isfile(p)]
    here += record_files(job_id, folder)
    if here:
        return here
    from gputui.slurm.commands import SlurmError

    missing = f"job {job_id}: no slurm-{job_id}.out or gputui-{job_id}-*.jsonl in {os.path.abspath(folder)}"
    try:
        job = slurm_job(job_id)
    except SlurmError as exc:
        raise RunError(f"{missing}; Slurm: {exc}") from None
    files = job_files(job)
    if not files:
        where = job.stdout or job.work_dir or "unknown"
        raise RunError(f"{missing}, nor where Slurm says its output went ({where})")
    return files


def run_files(run: str, folder: str = ".", *, job_ids: bool = True) -> list[RunFile]:
    """The files of a RUN argument, each with its kind (job ids looked for in ``folder``, then through
    Slurm; ``job_ids=False``: a RUN is a file or a run directory only)."""
    if os.path.isfile(run):
        return [RunFile.of(run)]
    if os.path.isdir(run):
        files = run_dir_files(run)
        if files:
            return [RunFile(f, metric_file_kind(f) or LOG) for f in files]
        raise RunError(f"{run}: {NO_METRIC_FILES}")
    if job_ids and JOB_ID.match(run):
        return [RunFile.of(f) for f in _job_run_files(run, folder)]
    raise RunError(f"{run}: no such file")


def run_records(run: str) -> Iterator[Record]:
    """Every record of a RUN, file after file: the RUN is resolved now (a :class:`RunError` raised
    here), its files are read as the records are taken (an unreadable one is a :class:`RunError`)."""
    return _read(run, run_files(run))


def _read(run: str, files: list[RunFile]) -> Iterator[Record]:
    try:
        for file in files:
            yield from file.records()
    except OSError as exc:
        raise RunError(cannot_read(run, exc)) from exc
    except ValueError as exc:  # a reader that cannot be had: gputui.logs.files.wandb_offline.MissingExtra
        raise RunError(f"{run}: {exc}") from exc
