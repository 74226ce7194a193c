"""My GPU-hours: ended jobs with the GPUs they held, for how long, how they ended and how busy the GPUs were.

Jobs without GPUs are left out once the answer shows that the site records ``gres/gpu`` (some job has
it); where no job has it, every job is listed with its GPUs "unknown".

**One** ``sacct -p`` call for the whole list (steps included, no ``-X``: ``TRESUsageInAve`` is per step).
A job's GPUs come from ``AllocTRES`` (``gres/gpu=4``, ``gres/gpu:a100=4``; recorded when the site's
``AccountingStorageTRES`` lists ``gres/gpu``), GPU-hours = GPUs × ``ElapsedRaw``. The mean GPU use is
taken, in this order, from:

* ``sacct``: ``gres/gpuutil=N`` in the steps' ``TRESUsageInAve`` (sites with ``gres/gpuutil`` in
  ``AccountingStorageTRES`` and the NVML/RSMI GPU plugin), weighted by each step's elapsed time;
* ``gputui records``: the ``gputui-<job>-<node>.jsonl`` files that ``gputui run --gpu-log`` (``gputui
  --log``) writes in the job's work directory; their ``util_gpu_pct`` samples give the mean and the share
  of samples under ``[alerts] idle_util_pct`` (idle GPU-hours = that share × GPU-hours);
* otherwise the source is ``unknown`` and so are the mean and the idle hours: never a guess.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import asdict, dataclass
from typing import Any

from gputui.slurm.fields import FIELD_END, split_rows
from gputui.slurm.sacct import ENDED_STATES, parse_recent
from gputui.stream.io import read_file
from gputui.textsafe import printable

FIELDS = ("JobID", "JobName", "State", "ExitCode", "ElapsedRaw", "AllocTRES", "TRESUsageInAve", "End")
FIELDS += ("WorkDir",)
IDLE_UTIL_PCT = 5.0
_GPUS = re.compile(r"(?:^|,)gres/gpu(?::[^=,]+)?=(\d+)")
_GPU_UTIL = re.compile(r"(?:^|,)gres/gpuutil=(\d+(?:\.\d+)?)")


@dataclass
class JobHours:
    """One ended job; None where the value is not known."""

    job_id: str
    name: str
    outcome: str  # COMPLETED, FAILED (exit 1:0), TIMEOUT, ...
    end: str
    gpus: int | None
    elapsed_s: int | None
    gpu_hours: float | None
    mean_util_pct: float | None = None
    idle_gpu_hours: float | None = None
    source: str = "unknown"  # where the utilisation comes from: sacct, gputui records, unknown
    work_dir: str = ""

    def to_json_dict(self) -> dict[str, Any]:
        return asdict(self)


def history_argv(user: str, since: str) -> list[str]:
    """The one sacct call: the user's ended jobs since ``since`` (``now-7days``), with their steps."""
    head = ["sacct", "-p", "-n", f"--delimiter={FIELD_END}", f"--user={user}", "-S", since, "-E", "now"]
    return [*head, "-s", ENDED_STATES, "-o", ",".join(FIELDS)]


def _int(text: str) -> int | None:
    return int(text) if text.strip().isdigit() else None


def parse_history(stdout: str, stderr: str = "", returncode: int = 0) -> list[JobHours]:
    """Jobs from :func:`history_argv`'s answer; :class:`~gputui.slurm.jobs.AccountingDisabled` or
    :class:`~gputui.slurm.commands.SlurmError` as :func:`gputui.slurm.sacct.parse_recent` raises them."""
    parse_recent("", stderr, returncode)  # the same one-line errors as the jobs list
    jobs: dict[str, JobHours] = {}
    usage: dict[str, list[tuple[float, int]]] = {}  # job → (gpuutil, step seconds)
    for parts in split_rows(stdout, len(FIELDS), old_lines_ended=False):
        row = dict(zip(FIELDS, parts, strict=True))
        job_id, _, step = row["JobID"].partition(".")
        elapsed = _int(row["ElapsedRaw"])
        if step:
            util = _GPU_UTIL.search(row["TRESUsageInAve"])
            if util and elapsed:
                usage.setdefault(job_id, []).append((float(util.group(1)), elapsed))
            continue
        gpus = _GPUS.search(row["AllocTRES"])
        count = int(gpus.group(1)) if gpus else None
        state = (row["State"].split() or ["UNKNOWN"])[0]
        code = row["ExitCode"].strip()
        jobs[job_id] = JobHours(
            job_id=job_id,
            name=printable(row["JobName"]),
            outcome=f"{state} (exit {code})" if code and code != "0:0" else state,
            end=row["End"].strip(),
            gpus=count,
            elapsed_s=elapsed,
            gpu_hours=None if count is None or elapsed is None else count * elapsed / 3600,
            work_dir=row["WorkDir"].strip(),
        )
    if any(job.gpus for job in jobs.values()):  # the site records gres/gpu: a job without held none
        jobs = {k: job for k, job in jobs.items() if job.gpus}
    for job in jobs.values():
        if usage.get(job.job_id):
            steps = usage[job.job_id]
            job.mean_util_pct = sum(u * s for u, s in steps) / sum(s for _, s in steps)
            job.source = "sacct"  # a mean only: how long the GPUs sat idle stays unknown
        else:
            from_records(job, job.work_dir)
    return list(jobs.values())


def record_files(job_id: str, folder: str) -> list[str]:
    """``gputui-<job>-<node>.jsonl`` files of ``gputui run --gpu-log`` in the job's work directory."""
    if not folder or not os.path.isdir(folder):
        return []
    return sorted(glob.glob(os.path.join(glob.escape(folder), f"gputui-{glob.escape(job_id)}-*.jsonl")))


def from_records(job: JobHours, folder: str, idle_pct: float = IDLE_UTIL_PCT) -> None:
    """The mean GPU use and idle GPU-hours from gputui's own records of the job, where there are any."""
    samples: list[float] = []
    for path in record_files(job.job_id, folder):
        try:
            samples += [
                float(r["util_gpu_pct"])
                for r in read_file(path)
                if r.kind == "gpu" and isinstance(r.get("util_gpu_pct"), (int, float))
            ]
        except OSError:
            continue
    if not samples:
        return
    job.source = "gputui records"
    job.mean_util_pct = sum(samples) / len(samples)
    if job.gpu_hours is not None:
        job.idle_gpu_hours = job.gpu_hours * sum(1 for u in samples if u < idle_pct) / len(samples)


@dataclass
class Totals:
    jobs: int
    gpu_hours: float
    idle_gpu_hours: float
    unknown_gpus: int  # jobs whose GPUs sacct does not record
    unknown_use: int  # jobs with GPUs but no utilisation known


def totals(jobs: list[JobHours]) -> Totals:
    """Sums over the period; what is not known is counted, never added as zero."""
    with_gpus = [j for j in jobs if j.gpus]
    return Totals(
        jobs=len(jobs),
        gpu_hours=sum(j.gpu_hours or 0.0 for j in jobs),
        idle_gpu_hours=sum(j.idle_gpu_hours or 0.0 for j in jobs),
        unknown_gpus=sum(1 for j in jobs if j.gpus is None),
        unknown_use=sum(1 for j in with_gpus if j.source == "unknown"),
    )
