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
"""

from __future__ import annotations

from typing import Any


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


def job_id_text(job: dict[str, Any]) -> str:
    """``123``, ``123_4`` (array task) or ``123+1`` (het component)."""
    jid = number(job.get("job_id")) or 0
    array_job, task = number(job.get("array_job_id")), number(job.get("array_task_id"))
    if array_job and task is not None:
        return f"{array_job}_{task}"
    het_job, het_off = number(job.get("het_job_id")), number(job.get("het_job_offset"))
    if het_job:
        return f"{het_job}+{het_off or 0}"
    return str(jid)


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
        "array_task_id": number(job.get("array_task_id")),
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
        norm = normalize_job(job)
        if user is not None and norm["user"] != user:
            continue
        if job_id is not None and job_id not in (norm["job_id"], str(norm["raw_job_id"])):
            continue
        out.append(norm)
    return out
