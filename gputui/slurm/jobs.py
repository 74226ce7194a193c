"""My jobs: the job model, the ``squeue`` listing and the ownership check.

* List: **one** ``squeue --me --array -h -O Field:END,...`` call per refresh (never one per job). Fields
  with an empty size and a suffix are printed unpadded and untruncated; END is
  :data:`gputui.slurm.fields.FIELD_END`, which no job name or path can contain, so a name with ``\\x1f``,
  ``|``, newlines or spaces never breaks a row.
* A job's name and pending reason are made :func:`~gputui.textsafe.printable` where they enter the model
  (after the name has filled ``%x`` in the output paths, which stay as Slurm gave them: files are opened
  by them).
* Detail and node state: :mod:`gputui.slurm.scontrol`; finished jobs: :mod:`gputui.slurm.sacct`.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from gputui.hostlist import HostlistError, expand_hostlist
from gputui.slurm import jsonshape
from gputui.slurm.commands import SlurmError, run_slurm
from gputui.slurm.fields import FIELD_END, UNIT_SEP, split_rows
from gputui.slurm.stdout_path import PatternContext, resolve_stdout
from gputui.textsafe import printable

SEP = UNIT_SEP  # the old line format's separator (captures, test fakes); real calls end fields by FIELD_END
#: squeue -O fields, in order, and the Job attribute each one fills.
SQUEUE_FIELDS: tuple[tuple[str, str], ...] = (
    ("JobID", "raw_job_id"),
    ("ArrayJobID", "array_job_id"),
    ("ArrayTaskID", "array_task_id"),
    ("HetJobID", "het_job_id"),
    ("HetJobOffset", "het_job_offset"),
    ("Name", "name"),
    ("UserName", "user"),
    ("State", "state"),
    ("Reason", "reason"),
    ("Partition", "partition"),
    ("Account", "account"),
    ("NumNodes", "num_nodes"),
    ("NumTasks", "num_tasks"),
    ("NodeList", "nodelist"),
    ("tres-per-node", "tres_per_node"),
    ("TimeUsed", "time_used"),
    ("TimeLimit", "time_limit"),
    ("SubmitTime", "submit_time"),
    ("StartTime", "start_time"),
    ("WorkDir", "work_dir"),
    ("STDOUT", "stdout_raw"),
    ("STDERR", "stderr_raw"),
)
_NULL = ("", "N/A", "(null)", "None", "Unknown")
ACTIVE_STATES = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING")


class JobNotFound(SlurmError):
    """Slurm does not know the job (never existed, or forgotten after MinJobAge without accounting)."""


class AccountingDisabled(SlurmError):
    """``sacct`` cannot answer: the cluster has no accounting storage."""


@dataclass
class Job:
    job_id: str  # as users write it: 123, 123_4, 123+1
    name: str = ""
    user: str = ""
    state: str = "UNKNOWN"
    reason: str = ""
    partition: str = ""
    account: str = ""
    nodelist: str = ""
    nodes: list[str] = field(default_factory=list)
    num_nodes: int | None = None
    num_tasks: int | None = None
    tres_per_node: str = ""
    gpus: dict[str, list[int]] = field(default_factory=dict)  # node → GPU indices (scontrol -d)
    time_used_s: int | None = None
    time_limit_s: int | None = None  # None: UNLIMITED
    submit_time: str = ""
    start_time: str = ""
    work_dir: str = ""
    stdout: str = ""  # resolved path
    stderr: str = ""
    stdout_raw: str = ""
    stderr_raw: str = ""
    raw_job_id: int | None = None
    array_job_id: int | None = None
    array_task_id: int | None = None
    uid: int | None = None
    batch_host: str = ""
    exit_code: str = ""

    @property
    def active(self) -> bool:
        return self.state in ACTIVE_STATES

    def to_json_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------- value parsing


def _clean(value: str) -> str:
    value = value.strip()
    return "" if value in _NULL else value


def _int(value: str) -> int | None:
    value = value.strip()
    return int(value) if value.isdigit() else None


def parse_duration(text: str) -> int | None:
    """Slurm durations in seconds: ``0:09``, ``5:00`` (M:SS), ``01:02:03``, ``1-02:03:04``.

    None for UNLIMITED and other non-durations."""
    text = text.strip()
    if not text or text.upper() in ("UNLIMITED", "INFINITE", "INVALID", "N/A", "NONE", "PARTITION_LIMIT"):
        return None
    days, _, rest = text.rpartition("-")
    try:
        parts = [int(p) for p in rest.split(":")]
        day_count = int(days) if days else 0
    except ValueError:
        return None
    if len(parts) == 1:
        parts = [parts[0], 0]  # minutes
    while len(parts) < 3:
        parts.insert(0, 0)
    h, m, s = parts[-3:]
    return ((day_count * 24 + h) * 60 + m) * 60 + s


def format_duration(seconds: int | None, *, short: bool = False) -> str:
    """``01:02:03``, ``1-02:03:04``; ``short``: squeue's style without leading zero fields (``0:08``,
    ``5:00``, ``1:02:03``). ``UNLIMITED`` for None."""
    if seconds is None:
        return "UNLIMITED"
    days, rem = divmod(int(seconds), 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    if days:
        return f"{days}-{h:02d}:{m:02d}:{s:02d}"
    if short:
        return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
    return f"{h:02d}:{m:02d}:{s:02d}"


def _expand(nodelist: str) -> list[str]:
    try:
        return expand_hostlist(nodelist) if nodelist else []
    except HostlistError:
        return [nodelist]


def _finish(job: Job) -> Job:
    """Nodes and output paths from what Slurm said; then the name and reason made safe to show."""
    job.nodes = _expand(job.nodelist)
    if not job.stdout:
        job.stdout = resolve_stdout(job.stdout_raw, _context(job))
    if not job.stderr:
        job.stderr = resolve_stdout(job.stderr_raw or job.stdout_raw, _context(job))
    job.name, job.reason = printable(job.name), printable(job.reason)
    return job


def _context(job: Job) -> PatternContext:
    return PatternContext(
        job_id=job.raw_job_id or int(re.match(r"\d+", job.job_id).group()),  # type: ignore[union-attr]
        job_name=job.name,
        user=job.user,
        array_job_id=job.array_job_id,
        array_task_id=job.array_task_id,
        first_node=job.batch_host or (job.nodes[0] if job.nodes else ""),
        work_dir=job.work_dir,
    )


# --------------------------------------------------------------------------- squeue


def squeue_argv(all_states: bool = False) -> list[str]:
    fmt = ",".join(f"{name}:{FIELD_END}" for name, _ in SQUEUE_FIELDS)
    return ["squeue", "--me", "--array", "-h", *(["-t", "all"] if all_states else []), "-O", fmt]


def parse_squeue(text: str) -> list[Job]:
    """Jobs from :func:`squeue_argv`'s output (rows by :func:`~gputui.slurm.fields.split_rows`)."""
    jobs = []
    for parts in split_rows(text, len(SQUEUE_FIELDS)):
        raw = {attr: parts[i] for i, (_, attr) in enumerate(SQUEUE_FIELDS)}
        raw_id, array_job, task = (
            _int(raw["raw_job_id"]),
            _int(raw["array_job_id"]),
            _clean(raw["array_task_id"]),
        )
        het_job, het_off = _int(raw["het_job_id"]), _int(raw["het_job_offset"])
        if task and array_job:
            job_id = f"{array_job}_{task}"
        elif het_job:
            job_id = f"{het_job}+{het_off or 0}"
        else:
            job_id = str(raw_id)
        job = Job(
            job_id=job_id,
            raw_job_id=raw_id,
            array_job_id=array_job if task else None,
            array_task_id=int(task) if task.isdigit() else None,
            name=raw["name"],
            user=_clean(raw["user"]),
            state=_clean(raw["state"]) or "UNKNOWN",
            reason=_clean(raw["reason"]),
            partition=_clean(raw["partition"]),
            account=_clean(raw["account"]),
            nodelist=_clean(raw["nodelist"]),
            num_nodes=_int(raw["num_nodes"]),
            num_tasks=_int(raw["num_tasks"]),
            tres_per_node=_clean(raw["tres_per_node"]),
            time_used_s=parse_duration(raw["time_used"]),
            time_limit_s=parse_duration(raw["time_limit"]),
            submit_time=_clean(raw["submit_time"]),
            start_time=_clean(raw["start_time"]),
            work_dir=_clean(raw["work_dir"]),
            stdout_raw=_clean(raw["stdout_raw"]),
            stderr_raw=_clean(raw["stderr_raw"]),
        )
        jobs.append(_finish(job))
    return jobs


def list_jobs(*, all_states: bool = False, env: dict[str, str] | None = None) -> list[Job]:
    """My jobs: exactly one squeue call."""
    return parse_squeue(run_slurm(squeue_argv(all_states), env=env).stdout)


def jobs_from_json(doc: dict[str, Any], *, user: str | None = None) -> list[Job]:
    """Jobs from a ``squeue --json`` document (any schema version), filtered by user here."""
    out = []
    for norm in jsonshape.jobs(doc, user=user):

        def stamp(value: int | None) -> str:
            return _dt.datetime.fromtimestamp(value).isoformat(timespec="seconds") if value else ""

        job = Job(
            job_id=norm["job_id"],
            raw_job_id=norm["raw_job_id"],
            array_job_id=norm["array_job_id"] if norm["array_task_id"] is not None else None,
            array_task_id=norm["array_task_id"],
            name=norm["name"],
            user=norm["user"],
            state=norm["state"],
            reason=_clean(norm["reason"]),
            partition=norm["partition"],
            account=norm["account"],
            nodelist=norm["nodelist"],
            num_nodes=norm["num_nodes"],
            num_tasks=norm["num_tasks"],
            tres_per_node=norm["tres_per_node"],
            time_limit_s=norm["time_limit_s"],
            time_used_s=norm["time_used_s"],
            submit_time=stamp(norm["submit_time"]),
            start_time=stamp(norm["start_time"]),
            work_dir=norm["work_dir"],
            stdout_raw=norm["stdout_raw"],
            stderr_raw=norm["stderr_raw"],
        )
        _finish(job)
        if norm["gres_detail"] and len(norm["gres_detail"]) == len(job.nodes):
            job.gpus = {n: parse_gres_idx(g) for n, g in zip(job.nodes, norm["gres_detail"], strict=True)}
        out.append(job)
    return out


_GRES_IDX = re.compile(r"gpu(?::[^:(,]+)?:(\d+)\(IDX:([^)]*)\)")


def parse_gres_idx(gres: str) -> list[int]:
    """``gpu:2(IDX:0-1)`` or ``gpu:a100:3(IDX:0,2-3)`` → ``[0, 1]`` / ``[0, 2, 3]``."""
    out: list[int] = []
    for match in _GRES_IDX.finditer(gres):
        for item in match.group(2).split(","):
            low, _, high = item.partition("-")
            if low.isdigit() and (not high or high.isdigit()):
                out.extend(range(int(low), int(high or low) + 1))
    return out


def check_mine(job: Job, uid: int | None = None) -> None:
    """:class:`SlurmError` (one line) when the job belongs to someone else."""
    me = os.getuid() if uid is None else uid
    if job.uid is not None and job.uid != me and me != 0:
        raise SlurmError(f"job {job.job_id} belongs to {job.user or job.uid}, not to you")
