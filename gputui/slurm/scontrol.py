"""One job in detail, and a node's state, from ``scontrol``.

``scontrol show job -o -d J`` prints one line of ``Key=Value`` pairs, split here on known key boundaries
(``JobName``, ``Command``, ``WorkDir`` and ``StdOut`` may contain spaces), plus the per-node allocation
entries ``Nodes=node[1-2] CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:0-1)`` that give each node's GPU indices.
``StdOut=``/``StdErr=`` are already expanded there.

A job name is any text (Slurm 22.05 takes newlines and ``Key=`` lookalikes in it): it is the text between
``JobName=`` and the ``UserId=U(N) GroupId=G(N) MCS_label=`` that scontrol prints right after it (26.05
prints ``SLUID=sAF5M8BJ2MWZ00``, the job's unique id, in between; the name ends before it), the first
such (the name also appears in ``%x`` output paths), taken out before the rest is split (and its
copies in paths stand in for while they are split); a printed
line that does not start with ``JobId=`` continues the previous one (a name's newline). So
``--job-name 'x StdOut=/etc/passwd JobState=FAILED'`` is only a name. ``Command=`` (the script and its
arguments) and ``SubmitLine=`` (the user's whole sbatch command line, 23.02+) end at the last
``WorkDir=``: a ``Key=value`` token in the command line never shadows the real field.
"""

from __future__ import annotations

import re

from gputui.slurm.commands import SlurmError, run_slurm
from gputui.slurm.jobid import parse_jobid
from gputui.slurm.jobs import Job, JobNotFound, _clean, _expand, _finish, _int, parse_duration, parse_gres_idx

#: Keys whose values are free text (may contain spaces, even ``Foo=`` lookalikes).
FREE_TEXT_KEYS = (
    "JobName",
    "Command",
    "SubmitLine",
    "WorkDir",
    "StdOut",
    "StdErr",
    "StdIn",
    "Comment",
    "Reason",
)
_KEY = re.compile(r"(?:^|(?<=\s))([A-Za-z][A-Za-z0-9_/:]*)=")
#: 26.05+ prints ``SLUID=<s and 13 base-32 characters>`` between the name and ``UserId`` (measured: 26.05.5).
_SLUID = r"(?: SLUID=s[0-9A-Z]{13})?"
_JOB_NAME = re.compile(
    rf"(?:^|\s)JobName=(.*?){_SLUID} UserId=\S*\(\d+\) GroupId=\S*\(\d+\) MCS_label=", re.DOTALL
)
_NAME_MARK = "\x00"  # stands for the job name in its %x-expanded paths while they are split (no NUL there)
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


def _command_line_marks(marks: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Without the ``Key=`` marks inside the user's command line: ``Command=<script> <its arguments>``
    (22.05 and later) and ``SubmitLine=<the whole sbatch command line>`` (23.02+; 26.05 prints it before
    ``WorkDir``). Both run to the *last* ``WorkDir=``, which Slurm prints right after them, so
    ``sbatch job.sh WorkDir=/x StdOut=/x/o`` (measured on 22.05) never shadows a real field."""
    first = next((i for i, mark in enumerate(marks) if mark[2] in ("Command", "SubmitLine")), None)
    if first is None:
        return marks
    work_dir = max((i for i, mark in enumerate(marks) if mark[2] == "WorkDir" and i > first), default=None)
    return marks if work_dir is None else marks[: first + 1] + marks[work_dir:]


def split_scontrol(line: str) -> tuple[dict[str, str], list[dict[str, str]]]:
    """``Key=Value`` pairs of one ``scontrol -o`` line, and the ``-d`` per-node allocation entries."""
    marks = _command_line_marks([(m.start(), m.end(), m.group(1)) for m in _KEY.finditer(line)])
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


def parse_scontrol_job(line: str) -> Job:
    """The job of one ``scontrol show job -o -d`` record (newlines of its name included)."""
    line = line.strip()
    named = _JOB_NAME.search(line)
    name = named.group(1) if named else None
    if named:
        line = line[: named.start(1)] + line[named.end(1) :]
    spaced = bool(name) and any(c.isspace() for c in name)  # a name that could start a Key= in a path
    fields, details = split_scontrol(line.replace(name, _NAME_MARK) if spaced else line)
    if spaced:
        fields = {key: value.replace(_NAME_MARK, name) for key, value in fields.items()}
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
        name=name if name is not None else fields.get("JobName", ""),
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
        stderr=get("StdErr") or get("StdOut"),  # 25.11+: StdErr blank when stderr goes to StdOut
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
    jobs = [parse_scontrol_job(record) for record in _records(res.stdout)]
    for job in jobs:  # a het job prints one line per component; an array base id one per task
        if job.job_id == jid:
            return job
    return jobs[0]


def _records(text: str) -> list[str]:
    """One text per job: a line that does not start with ``JobId=`` continues the one before."""
    records: list[str] = []
    for line in text.split("\n"):
        if records and not line.startswith("JobId="):
            records[-1] += "\n" + line
        elif line.strip():
            records.append(line)
    return records


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
