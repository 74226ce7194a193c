"""My jobs and one job in detail.

* List: **one** ``squeue --me --array -h -O Field:\\x1F,...`` call per refresh (never one per job). Fields
  with an empty size and a suffix are printed unpadded and untruncated, so names containing ``|`` or
  spaces survive; a line is used only if it splits into exactly the expected number of parts.
* Detail: ``scontrol show job -o -d J``: one line of ``Key=Value`` pairs, split on known key boundaries
  (``JobName``, ``Command``, ``WorkDir`` and ``StdOut`` may contain spaces), plus the per-node allocation
  entries ``Nodes=node[1-2] CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:0-1)`` that give each node's GPU indices.
  ``StdOut=``/``StdErr=`` are already expanded there.
* Finished jobs: ``sacct`` when accounting exists; otherwise :class:`AccountingDisabled` (one line).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from gputui.slurm import jsonshape
from gputui.slurm.commands import SlurmError, run_slurm
from gputui.slurm.hostlist import HostlistError, expand_hostlist
from gputui.slurm.jobid import parse_jobid
from gputui.slurm.stdout_path import PatternContext, resolve_stdout

SEP = "\x1f"
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


def format_duration(seconds: int | None) -> str:
    if seconds is None:
        return "UNLIMITED"
    days, rem = divmod(int(seconds), 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    return f"{days}-{h:02d}:{m:02d}:{s:02d}" if days else f"{h:02d}:{m:02d}:{s:02d}"


def _expand(nodelist: str) -> list[str]:
    try:
        return expand_hostlist(nodelist) if nodelist else []
    except HostlistError:
        return [nodelist]


def _finish(job: Job) -> Job:
    job.nodes = _expand(job.nodelist)
    if not job.stdout:
        job.stdout = resolve_stdout(job.stdout_raw, _context(job))
    if not job.stderr:
        job.stderr = resolve_stdout(job.stderr_raw or job.stdout_raw, _context(job))
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
    fmt = ",".join(f"{name}:{SEP}" for name, _ in SQUEUE_FIELDS)
    return ["squeue", "--me", "--array", "-h", *(["-t", "all"] if all_states else []), "-O", fmt]


def parse_squeue(text: str) -> list[Job]:
    """Jobs from ``squeue -h -O Field:\\x1F,...`` output; lines that do not split exactly are skipped."""
    jobs = []
    for line in text.splitlines():
        parts = line.split(SEP)
        if len(parts) != len(SQUEUE_FIELDS) + 1:
            continue
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


# --------------------------------------------------------------------------- scontrol show job -o -d

#: Keys whose values are free text (may contain spaces, even ``Foo=`` lookalikes).
FREE_TEXT_KEYS = ("JobName", "Command", "WorkDir", "StdOut", "StdErr", "StdIn", "Comment", "Reason")
_KEY = re.compile(r"(?:^|(?<=\s))([A-Za-z][A-Za-z0-9_/:]*)=")
#: Keys scontrol prints (22.05 plus later additions); after a free-text key only these end its value.
KNOWN_KEYS = frozenset(
    [
        "Account",
        "AccrueTime",
        "AdminComment",
        "AllocNode:Sid",
        "ArrayJobId",
        "ArrayTaskId",
        "ArrayTaskThrottle",
        "BatchFlag",
        "BatchHost",
        "BurstBuffer",
        "CPU_IDs",
        "CPUs/Task",
        "Command",
        "Comment",
        "Container",
        "ContainerID",
        "Contiguous",
        "CoreSpec",
        "CpusPerTres",
        "Deadline",
        "DelayBoot",
        "Dependency",
        "DerivedExitCode",
        "EligibleTime",
        "EndTime",
        "ExcNodeList",
        "ExitCode",
        "Features",
        "GRES",
        "GroupId",
        "HetJobId",
        "HetJobIdSet",
        "HetJobOffset",
        "JOB_GRES",
        "JobId",
        "JobName",
        "JobState",
        "LastSchedEval",
        "Licenses",
        "MCS_label",
        "Mem",
        "MemPerTres",
        "MinCPUsNode",
        "MinMemoryCPU",
        "MinMemoryNode",
        "MinTmpDiskNode",
        "Network",
        "Nice",
        "NodeList",
        "Nodes",
        "NtasksPerN:B:S:C",
        "NumCPUs",
        "NumNodes",
        "NumTasks",
        "OverSubscribe",
        "Partition",
        "Power",
        "Prefer",
        "Priority",
        "QOS",
        "Reason",
        "Reboot",
        "ReqB:S:C:T",
        "ReqNodeList",
        "Requeue",
        "Reservation",
        "Restarts",
        "RunTime",
        "Scheduler",
        "SecsPreSuspend",
        "SLUID",
        "Socks/Node",
        "StartTime",
        "StdErr",
        "StdIn",
        "StdOut",
        "SubmitLine",
        "SubmitTime",
        "SuspendTime",
        "TRES",
        "TimeLimit",
        "TimeMin",
        "TresBind",
        "TresFreq",
        "TresPerJob",
        "TresPerNode",
        "TresPerTask",
        "UserId",
        "WorkDir",
    ]
)
_GRES_IDX = re.compile(r"gpu(?::[^:(,]+)?:(\d+)\(IDX:([^)]*)\)")


def split_scontrol(line: str) -> tuple[dict[str, str], list[dict[str, str]]]:
    """``Key=Value`` pairs of one ``scontrol -o`` line, and the ``-d`` per-node allocation entries."""
    marks = [(m.start(), m.end(), m.group(1)) for m in _KEY.finditer(line)]
    pairs: list[tuple[str, str]] = []
    for i, (_start, end, key) in enumerate(marks):
        stop = marks[i + 1][0] if i + 1 < len(marks) else len(line)
        value = line[end:stop].rstrip()
        if pairs and pairs[-1][0] in FREE_TEXT_KEYS and key not in KNOWN_KEYS:
            prev_key, prev_val = pairs.pop()  # "JobName=a b=c": "b=c" is part of the name
            pairs.append((prev_key, f"{prev_val} {key}={value}"))
            continue
        pairs.append((key, value))
    fields: dict[str, str] = {}
    details: list[dict[str, str]] = []
    for key, value in pairs:
        if key == "Nodes":
            details.append({"Nodes": value.strip()})
        elif details and key in ("CPU_IDs", "Mem", "GRES") and key not in details[-1]:
            details[-1][key] = value.strip()
        else:
            fields.setdefault(key, value)
    return fields, details


def parse_gres_idx(gres: str) -> list[int]:
    """``gpu:2(IDX:0-1)`` or ``gpu:a100:3(IDX:0,2-3)`` → ``[0, 1]`` / ``[0, 2, 3]``."""
    out: list[int] = []
    for match in _GRES_IDX.finditer(gres):
        for item in match.group(2).split(","):
            low, _, high = item.partition("-")
            if low.isdigit() and (not high or high.isdigit()):
                out.extend(range(int(low), int(high or low) + 1))
    return out


def parse_scontrol_job(line: str) -> Job:
    fields, details = split_scontrol(line.strip())
    get = lambda key: _clean(fields.get(key, ""))  # noqa: E731
    raw_id = _int(fields.get("JobId", ""))
    array_job, task = _int(fields.get("ArrayJobId", "")), _int(fields.get("ArrayTaskId", ""))
    het_job, het_off = _int(fields.get("HetJobId", "")), _int(fields.get("HetJobOffset", ""))
    if array_job and task is not None:
        job_id = f"{array_job}_{task}"
    elif het_job:
        job_id = f"{het_job}+{het_off or 0}"
    else:
        job_id = str(raw_id)
    uid = re.search(r"\((\d+)\)", fields.get("UserId", ""))
    job = Job(
        job_id=job_id,
        raw_job_id=raw_id,
        array_job_id=array_job if task is not None else None,
        array_task_id=task,
        name=fields.get("JobName", ""),
        user=fields.get("UserId", "").split("(")[0],
        uid=int(uid.group(1)) if uid else None,
        state=get("JobState") or "UNKNOWN",
        reason=get("Reason"),
        partition=get("Partition"),
        account=get("Account"),
        nodelist=get("NodeList"),
        num_nodes=_int(fields.get("NumNodes", "").split("-")[0]),
        num_tasks=_int(fields.get("NumTasks", "")),
        tres_per_node=get("TresPerNode"),
        time_used_s=parse_duration(fields.get("RunTime", "")),
        time_limit_s=parse_duration(fields.get("TimeLimit", "")),
        submit_time=get("SubmitTime"),
        start_time=get("StartTime"),
        work_dir=get("WorkDir"),
        stdout=get("StdOut"),
        stderr=get("StdErr"),
        batch_host=get("BatchHost"),
        exit_code=get("ExitCode"),
    )
    _finish(job)
    for entry in details:
        idx = parse_gres_idx(entry.get("GRES", ""))
        for node in _expand(entry["Nodes"]):
            job.gpus[node] = idx
    return job


def job_detail(job_id: str, *, env: dict[str, str] | None = None) -> Job:
    """One job via ``scontrol show job -o -d``; :class:`JobNotFound` when Slurm does not know it."""
    jid = str(parse_jobid(job_id))
    res = run_slurm(["scontrol", "show", "job", "-o", "-d", jid], env=env, check=False)
    if res.returncode != 0 or not res.stdout.strip():
        if "Invalid job id" in res.stderr or not res.stderr.strip():
            raise JobNotFound(f"job {jid} is not known to Slurm (never existed, or finished and forgotten)")
        raise SlurmError(f"scontrol: {res.stderr.strip().splitlines()[-1]}")
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    jobs = [parse_scontrol_job(ln) for ln in lines]
    for job in jobs:  # a het job prints one line per component; an array base id one per task
        if job.job_id == jid:
            return job
    return jobs[0]


_NODE_STATE = re.compile(r"(?:^|\s)State=(\S+)")
_NODE_REASON = re.compile(r"(?:^|\s)Reason=(.*?)(?:\s+\[[^\]]*\])?\s*$")


def node_state(node: str, *, env: dict[str, str] | None = None) -> tuple[str, str] | None:
    """``(State, Reason)`` of one node from ``scontrol show node -o NODE`` (``("DOWN+NOT_RESPONDING",
    "Not responding")``); None when Slurm cannot say. ``Reason``'s ``[user@time]`` suffix is dropped."""
    if not re.fullmatch(r"[A-Za-z0-9_.+-]+", node):
        return None
    try:
        res = run_slurm(["scontrol", "show", "node", "-o", node], env=env, check=False, timeout=5)
    except SlurmError:
        return None
    state = _NODE_STATE.search(res.stdout) if res.returncode == 0 else None
    if state is None:
        return None
    reason = _NODE_REASON.search(res.stdout.strip())
    return state.group(1), _clean(reason.group(1)) if reason else ""


def check_mine(job: Job, uid: int | None = None) -> None:
    """:class:`SlurmError` (one line) when the job belongs to someone else."""
    me = os.getuid() if uid is None else uid
    if job.uid is not None and job.uid != me and me != 0:
        raise SlurmError(f"job {job.job_id} belongs to {job.user or job.uid}, not to you")


# --------------------------------------------------------------------------- sacct

SACCT_FIELDS = ("JobID", "JobName", "User", "State", "Partition", "Account", "NNodes", "NodeList")
SACCT_FIELDS += ("Elapsed", "Timelimit", "Submit", "Start", "End", "WorkDir", "ExitCode")


def parse_sacct(text: str) -> list[Job]:
    jobs = []
    for line in text.splitlines():
        parts = line.split(SEP)
        if len(parts) != len(SACCT_FIELDS) or "." in parts[0]:
            continue
        r = dict(zip(SACCT_FIELDS, parts, strict=True))
        job = Job(
            job_id=r["JobID"],
            name=r["JobName"],
            user=r["User"],
            state=(r["State"].split() or ["UNKNOWN"])[0],
            partition=r["Partition"],
            account=r["Account"],
            nodelist=_clean(r["NodeList"]),
            num_nodes=_int(r["NNodes"]),
            time_used_s=parse_duration(r["Elapsed"]),
            time_limit_s=parse_duration(r["Timelimit"]),
            submit_time=_clean(r["Submit"]),
            start_time=_clean(r["Start"]),
            work_dir=_clean(r["WorkDir"]),
            exit_code=r["ExitCode"],
        )
        job.nodes = _expand(job.nodelist)
        jobs.append(job)
    return jobs


def finished_job(job_id: str, *, env: dict[str, str] | None = None) -> Job:
    """A finished job from accounting; :class:`AccountingDisabled` or :class:`JobNotFound` otherwise."""
    jid = str(parse_jobid(job_id))
    argv = ["sacct", "-X", "-P", "-n", f"--delimiter={SEP}", "-j", jid, "-o", ",".join(SACCT_FIELDS)]
    res = run_slurm(argv, env=env, check=False)
    if "accounting storage is disabled" in (res.stderr + res.stdout).lower():
        raise AccountingDisabled("Slurm accounting is disabled on this cluster: finished jobs are not kept")
    if res.returncode != 0:
        raise SlurmError(
            f"sacct: {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else res.returncode}"
        )
    for job in parse_sacct(res.stdout):
        if job.job_id == jid:
            return job
    raise JobNotFound(f"job {jid} is not known to Slurm accounting")
