"""Jobs as table rows: ordering, array grouping, one row per job id, the text of each cell, filtering.

Order: running, then pending, then other active states, then ended jobs; newest first within each. An
array job is one group row (its tasks counted by state) followed by its running and ended tasks, each with
its own id (the id attach and logs use); its pending tasks are folded into one row ``123_[5-9]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gputui.slurm.jobs import Job, format_duration

COLUMNS = ("JOBID", "NAME", "PARTITION", "STATE", "TIME/LIMIT", "NODES", "GPUS", "UTIL", "LOSS")
_TRES_GPUS = re.compile(r"gres[:/]gpu(?::[A-Za-z0-9_.-]+)?:(\d+)|^gpu(?::[A-Za-z0-9_.-]+)?:(\d+)")
_ARRAY_ID = re.compile(r"^(\d+)_(\d+)$")
_STATE_RANK = {"RUNNING": 0, "PENDING": 1}  # then other active states (2), then ended jobs (4)
SHORT_STATE = {"RUNNING": "R", "PENDING": "PD", "COMPLETED": "CD", "FAILED": "F", "CANCELLED": "CA"}


@dataclass(frozen=True)
class AttachedFigures:
    """What the job's dashboard last showed: mean GPU utilisation and the current loss."""

    util_pct: float | None
    loss: float | None


@dataclass
class JobRow:
    key: str  # row key: the job id, or "array:<id>" / "pending:<id>" for group rows
    cells: tuple[str, ...]
    job: Job | None  # the job Enter/c/s/v/e/o act on; None for group rows
    kind: str = "job"  # "job", "array" (group header), "task" (a member), "folded" (pending tasks)
    style: str = ""  # "ended", "running", "pending", "failed"


def gpus_per_node(tres_per_node: str) -> int | None:
    """``gres:gpu:2``, ``gres/gpu:a100:4``, ``gpu:2`` → GPUs per node; None when no GPU is named."""
    for item in tres_per_node.split(","):
        match = _TRES_GPUS.search(item.strip())
        if match:
            return int(match.group(1) or match.group(2))
    return None


def gpu_total(job: Job) -> int | None:
    """The job's GPUs: from the allocation (``scontrol -d``) when known, else per node × nodes."""
    if any(job.gpus.values()):
        return sum(len(ids) for ids in job.gpus.values())
    per_node = gpus_per_node(job.tres_per_node)
    if per_node is None:
        return None
    return per_node * (job.num_nodes or 1)


def array_of(job: Job) -> tuple[int, int] | None:
    """(array job id, task id) of an array task, from the fields or from an id like ``123_4``."""
    if job.array_job_id is not None and job.array_task_id is not None:
        return job.array_job_id, job.array_task_id
    match = _ARRAY_ID.match(job.job_id)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _sort_key(job: Job) -> tuple[int, int]:
    rank = _STATE_RANK.get(job.state, 2 if job.active else 4)
    number = re.match(r"\d+", job.job_id)
    return rank, -int(number.group()) if number else 0


def _style(job: Job) -> str:
    if job.state == "RUNNING":
        return "running"
    if job.state == "PENDING":
        return "pending"
    if job.active:
        return ""
    return "ended" if job.state == "COMPLETED" else "failed"


def state_text(job: Job) -> str:
    if job.state == "PENDING" and job.reason:
        return f"PENDING ({job.reason})"
    if not job.active and job.exit_code and job.exit_code not in ("0:0", ""):
        return f"{job.state} ({job.exit_code})"
    return job.state


def _time_text(job: Job) -> str:
    used = format_duration(job.time_used_s, short=True) if job.time_used_s is not None else "-"
    return f"{used}/{format_duration(job.time_limit_s, short=True)}"


def _gpu_text(job: Job) -> str:
    total = gpu_total(job)
    if total is None:
        return "-"
    nodes = job.num_nodes or len(job.nodes) or 1
    return f"{total}" if nodes == 1 else f"{total} ({nodes}×{total // nodes})"


def job_cells(job: Job, figures: AttachedFigures | None, indent: str = "") -> tuple[str, ...]:
    util = f"{figures.util_pct:.0f}%" if figures and figures.util_pct is not None else ""
    loss = f"{figures.loss:.4g}" if figures and figures.loss is not None else ""
    nodes = job.nodelist if job.nodelist else str(job.num_nodes or "-")
    return (
        indent + job.job_id,
        job.name,
        job.partition,
        state_text(job),
        _time_text(job),
        nodes,
        _gpu_text(job),
        util,
        loss,
    )


def _id_range(tasks: list[int]) -> str:
    tasks = sorted(tasks)
    parts, start = [], tasks[0]
    for prev, cur in zip(tasks, [*tasks[1:], None], strict=True):
        if cur is None or cur != prev + 1:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = cur
    return ",".join(parts)


def _array_rows(array_id: int, tasks: list[Job], figures: dict[str, AttachedFigures]) -> list[JobRow]:
    counts: dict[str, int] = {}
    for task in tasks:
        short = SHORT_STATE.get(task.state, task.state)
        counts[short] = counts.get(short, 0) + 1
    summary = " ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    first = tasks[0]
    rows = [
        JobRow(
            key=f"array:{array_id}",
            cells=(
                f"{array_id}_[*]",
                first.name,
                first.partition,
                f"{len(tasks)} tasks: {summary}",
                "",
                "",
                "",
                "",
                "",
            ),
            job=None,
            kind="array",
        )
    ]
    pending = [t for t in tasks if t.state == "PENDING"]
    started = [t for t in tasks if t.state != "PENDING"]
    for task in sorted(started, key=lambda t: (_sort_key(t)[0], array_of(t)[1])):  # type: ignore[index]
        rows.append(
            JobRow(task.job_id, job_cells(task, figures.get(task.job_id), "├ "), task, "task", _style(task))
        )
    if pending:
        ids = [array_of(t)[1] for t in pending]  # type: ignore[index]
        first = pending[0]
        cells = job_cells(first, None, "└ ")
        label = f"└ {array_id}_[{_id_range(ids)}]"
        rows.append(
            JobRow(
                f"pending:{array_id}",
                (label, first.name, first.partition, f"{state_text(first)} ×{len(pending)}", *cells[4:]),
                None,
                "folded",
                "pending",
            )
        )
    else:
        last = rows[-1]
        last.cells = ("└" + last.cells[0][1:], *last.cells[1:])
    return rows


def build_rows(jobs: list[Job], figures: dict[str, AttachedFigures] | None = None) -> list[JobRow]:
    """Table rows for ``jobs`` (one per job id: the first seen wins, so squeue's row beats sacct's)."""
    figures = figures or {}
    unique: dict[str, Job] = {}
    for job in jobs:
        unique.setdefault(job.job_id, job)
    arrays: dict[int, list[Job]] = {}
    order: list[tuple[tuple[int, int], str, object]] = []
    for job in sorted(unique.values(), key=_sort_key):
        member = array_of(job)
        if member is None:
            order.append((_sort_key(job), "job", job))
            continue
        if member[0] not in arrays:
            arrays[member[0]] = []
            order.append((_sort_key(job), "array", member[0]))
        arrays[member[0]].append(job)
    rows: list[JobRow] = []
    for _key, kind, item in order:
        if kind == "job":
            job = item  # type: ignore[assignment]
            rows.append(JobRow(job.job_id, job_cells(job, figures.get(job.job_id)), job, "job", _style(job)))
        else:
            rows.extend(_array_rows(item, arrays[item], figures))  # type: ignore[arg-type]
    return rows


def matches(row: JobRow, text: str) -> bool:
    """The ``/`` filter: every word of ``text`` appears in one of the row's cells (case-insensitive)."""
    haystack = " ".join(row.cells).lower()
    return all(word in haystack for word in text.lower().split())


def filter_rows(rows: list[JobRow], text: str) -> list[JobRow]:
    """Rows matching ``text``; an array whose header matches stays whole, else its header stays with the
    tasks that match."""
    if not text.strip():
        return rows
    groups: list[list[JobRow]] = []
    for row in rows:
        if row.kind in ("task", "folded") and groups and groups[-1][0].kind == "array":
            groups[-1].append(row)
        else:
            groups.append([row])
    kept: list[JobRow] = []
    for head, *members in groups:
        if matches(head, text):
            kept += [head, *members]
        elif hits := [m for m in members if matches(m, text)]:
            kept += [head, *hits]
    return kept
