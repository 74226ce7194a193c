"""A version-tolerant reader for ``squeue --json`` (optional path; ``-O field:\\x1F`` is the primary one).

The schema drifts between data_parser versions:

* 22.05 (``openapi/v0.0.38``, observed): ``meta.Slurm.release``; ``job_state`` is a string; numbers and
  times are plain ints; ``time_limit`` is ``null`` for UNLIMITED; ``array_task_id`` is ``null`` when the job
  is not an array; ``tres_per_node`` reads ``gres:gpu:2``.
* 23.11+ (``v0.0.40`` … ``v0.0.44``, from Slurm's documentation): ``meta.slurm.release``; ``job_state`` is a
  **list** of flags (``["RUNNING", "COMPLETING"]``); numbers are ``{"set": bool, "infinite": bool,
  "number": n}``; ``tres_per_node`` reads ``gres/gpu:2``.

Each accessor accepts every shape and returns plain Python values; :func:`normalize_job` maps one job
object to the keys :mod:`gputui.slurm.jobs` uses. Filters (``-j``, ``-u``) are ignored by ``--json`` on
22.05, so callers filter the returned list themselves.

What the versions showed (22.05.8, 24.11.5 measured): from 24.11 ``--json`` honours the default state
filter, so :func:`squeue_argv` asks ``-t all`` (ended jobs stay listed while Slurm remembers them);
there is no "time used" field, so it is computed as squeue does (:func:`time_used`); the pending tasks
of an array are one record (``array_task_string`` ``1-3%1``, no task id; 24.11 even expands its output
path with ``%a`` = 4294967294), made here into one job per task as ``squeue --array`` lists them. The
data_parser is pinned to the release's own (:func:`data_parser`): ``--json=v0.0.42`` on 24.11.
"""

from __future__ import annotations

import re
import time
from typing import Any

NO_TASK = 4294967294  # NO_VAL - 1: the array task id (and %a) of a record that is no single task
#: The data_parser each release is built with (its newest; a release also carries 2-3 older ones).
DATA_PARSERS = {
    (23, 2): "v0.0.39",
    (23, 11): "v0.0.40",
    (24, 5): "v0.0.41",
    (24, 11): "v0.0.42",
    (25, 5): "v0.0.43",
    (25, 11): "v0.0.44",
    (26, 5): "v0.0.45",
}


def number(value: Any) -> int | None:
    """A plain int from ``7``, ``"7"``, ``{"set": true, "number": 7}``; None when unset/infinite/null."""
    if isinstance(value, dict):
        if not value.get("set", True) or value.get("infinite", False):
            return None
        value = value.get("number")
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def is_infinite(value: Any) -> bool:
    """True for ``{"infinite": true}`` (23.11+) and for ``null`` time limits (22.05's UNLIMITED)."""
    return value is None or (isinstance(value, dict) and bool(value.get("infinite")))


def state(value: Any) -> tuple[str, tuple[str, ...]]:
    """(base state, extra flags) from ``"RUNNING"`` or ``["RUNNING", "COMPLETING"]``."""
    if isinstance(value, str):
        parts = [p for p in value.replace(",", " ").split() if p]
    elif isinstance(value, list):
        parts = [str(p) for p in value if p]
    else:
        parts = []
    if not parts:
        return "UNKNOWN", ()
    return parts[0], tuple(parts[1:])


def release(doc: dict[str, Any]) -> str | None:
    """``meta.Slurm.release`` (22.05) or ``meta.slurm.release`` (23.11+)."""
    meta = doc.get("meta") or {}
    for key in ("slurm", "Slurm"):
        info = meta.get(key)
        if isinstance(info, dict) and isinstance(info.get("release"), str):
            return info["release"]
    return None


def text(value: Any) -> str:
    return "" if value is None else str(value)


def array_task(job: dict[str, Any]) -> int | None:
    """The array task id; None when the record is no single task (null, unset, or NO_VAL - 1)."""
    task = number(job.get("array_task_id"))
    return None if task is None or task >= NO_TASK else task


def job_id_text(job: dict[str, Any]) -> str:
    """``123``, ``123_4`` (array task) or ``123+1`` (het component)."""
    jid = number(job.get("job_id")) or 0
    array_job, task = number(job.get("array_job_id")), array_task(job)
    if array_job and task is not None:
        return f"{array_job}_{task}"
    het_job, het_off = number(job.get("het_job_id")), number(job.get("het_job_offset"))
    if het_job:
        return f"{het_job}+{het_off or 0}"
    return str(jid)


def data_parser(release_text: str) -> str | None:
    """The ``--json=`` data_parser to pin for a Slurm release (``24.11.5`` → ``v0.0.42``); None before
    23.02 (22.05's ``--json`` takes no argument) or when the release is not known. A release newer than
    gputui knows gets the newest parser gputui reads (releases keep 2-3 older ones)."""
    match = re.match(r"(\d+)\.(\d+)", release_text.strip())
    if not match:
        return None
    version = (int(match.group(1)), int(match.group(2)))
    known = [parser for release, parser in sorted(DATA_PARSERS.items()) if release <= version]
    return known[-1] if known else None


def squeue_argv(release_text: str = "") -> list[str]:
    """``squeue --json[=vX] --me -t all``: my jobs in every state (24.11+ would drop ended ones)."""
    parser = data_parser(release_text)
    return ["squeue", f"--json={parser}" if parser else "--json", "--me", "-t", "all"]


def time_used(job: dict[str, Any], now: float | None = None) -> int | None:
    """Seconds the job has run, as squeue's TIME computes it (pending: 0; suspended time left out)."""
    base, _flags = state(job.get("job_state"))
    start, end = number(job.get("start_time")), number(job.get("end_time"))
    pre_sus, suspended = number(job.get("pre_sus_time")) or 0, number(job.get("suspend_time")) or 0
    if base == "PENDING" or not start:
        return 0 if base == "PENDING" else None
    if base == "SUSPENDED":
        return pre_sus
    stop = int(time.time() if now is None else now) if base in ("RUNNING", "COMPLETING") else end
    if stop is None or stop < start:
        return None
    return pre_sus + stop - suspended if suspended else stop - start


def task_ids(task_string: str, limit: int = 100_000) -> list[int]:
    """``1-3%1`` → [1, 2, 3]; ``1,4,7-9:2`` → [1, 4, 7, 9]; [] when it does not read."""
    out: list[int] = []
    for part in task_string.split("%")[0].split(","):
        match = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+))?)?", part.strip())
        if not match:
            return []
        low = int(match.group(1))
        tasks = range(low, int(match.group(2) or low) + 1, max(int(match.group(3) or 1), 1))
        if len(out) + len(tasks) > limit:
            return []
        out.extend(tasks)
    return out


def pending_tasks(norm: dict[str, Any], task_string: str) -> list[dict[str, Any]]:
    """One normalized job per pending task of an array's record (``123_1``, ``123_2``, …); the record
    itself when it is no such record. Output paths Slurm expanded with ``%a`` = 4294967294 get the task."""
    array_job = norm["array_job_id"]
    ids = task_ids(task_string) if array_job and norm["array_task_id"] is None and task_string else []
    if not ids:
        return [norm]
    tasks = []
    for task in ids:
        paths = {k: norm[k].replace(str(NO_TASK), str(task)) for k in ("stdout_raw", "stderr_raw")}
        tasks.append({**norm, **paths, "job_id": f"{array_job}_{task}", "array_task_id": task})
    return tasks


def normalize_job(job: dict[str, Any]) -> dict[str, Any]:
    """One ``jobs[]`` element as plain values (keys as in :class:`gputui.slurm.jobs.Job`)."""
    base, flags = state(job.get("job_state"))
    limit = job.get("time_limit")
    limit_min = None if is_infinite(limit) else number(limit)
    tres = text(job.get("tres_per_node")).replace("gres/", "gres:")
    return {
        "job_id": job_id_text(job),
        "raw_job_id": number(job.get("job_id")),
        "array_job_id": number(job.get("array_job_id")) or None,
        "array_task_id": array_task(job),
        "name": text(job.get("name")),
        "user": text(job.get("user_name")),
        "state": base,
        "state_flags": flags,
        "reason": text(job.get("state_reason")),
        "partition": text(job.get("partition")),
        "account": text(job.get("account")),
        "nodelist": text(job.get("nodes")),
        "num_nodes": number(job.get("node_count")),
        "num_tasks": number(job.get("tasks")),
        "time_limit_s": None if limit_min is None else limit_min * 60,
        "time_used_s": time_used(job),
        "submit_time": number(job.get("submit_time")),
        "start_time": number(job.get("start_time")),
        "work_dir": text(job.get("current_working_directory")),
        "stdout_raw": text(job.get("standard_output")),
        "stderr_raw": text(job.get("standard_error")),
        "tres_per_node": tres,
        "gres_detail": [str(g) for g in job.get("gres_detail") or []],
    }


def jobs(doc: dict[str, Any], *, user: str | None = None, job_id: str | None = None) -> list[dict[str, Any]]:
    """Normalized jobs of a ``squeue --json`` document, filtered here (22.05 ignores -u/-j)."""
    out = []
    for job in doc.get("jobs") or []:
        for norm in pending_tasks(normalize_job(job), text(job.get("array_task_string"))):
            if user is not None and norm["user"] != user:
                continue
            if job_id is not None and job_id not in (norm["job_id"], str(norm["raw_job_id"])):
                continue
            out.append(norm)
    return out
