"""Where a job's output goes: the sbatch filename-pattern expander (sbatch.1 "FILENAME PATTERN").

The primary source is ``scontrol show job`` (``StdOut=`` is already expanded there); ``squeue -O STDOUT``
and ``squeue --json`` give the raw pattern, and after ``MinJobAge`` only our own expansion is left. This
implements every replacement symbol of the batch script's output file:

``%%`` a percent sign · ``%A`` array master id (the job id when not an array) · ``%a`` array index
(4294967294 when not an array, as Slurm writes it) · ``%b`` array index mod 10 · ``%J`` job id (plus
``.step`` for a step other than the batch script) · ``%j`` job id · ``%N`` first node's short name ·
``%n`` node id (0) · ``%r`` restart count · ``%s`` step id (``batch``) · ``%t`` task id (0) · ``%u`` user ·
``%x`` job name. A number between ``%`` and the letter zero-pads numeric values (at most 10 digits,
``%4j`` → ``0042``). A pattern containing ``\\\\`` is not expanded at all (its backslashes are removed).
Relative results are joined with the job's working directory.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

DEFAULT_PATTERN = "slurm-%j.out"
DEFAULT_ARRAY_PATTERN = "slurm-%A_%a.out"
NO_ARRAY_TASK = 4294967294  # NO_VAL - 1: what %a gives for a job that is not an array

_TOKEN = re.compile(r"%(\d*)([%AabJjNnrstux])")


@dataclass(frozen=True, slots=True)
class PatternContext:
    """What the expander needs to know about a job (``step`` None means the batch script)."""

    job_id: int
    job_name: str = ""
    user: str = ""
    array_job_id: int | None = None
    array_task_id: int | None = None
    first_node: str = ""
    step: int | None = None
    node_id: int = 0
    task_id: int = 0
    restarts: int = 0
    work_dir: str = ""


def _num(value: int, width: str) -> str:
    digits = min(int(width), 10) if width else 0
    return str(value).zfill(digits)


def expand_pattern(pattern: str, ctx: PatternContext) -> str:
    """Expand the replacement symbols of an ``--output``/``--error`` pattern (see module docs)."""
    if "\\" in pattern:
        return _join(pattern.replace("\\", ""), ctx.work_dir)
    is_array = ctx.array_task_id is not None

    def replace(match: re.Match[str]) -> str:
        width, letter = match.group(1), match.group(2)
        if letter == "%":
            return "%"
        if letter == "A":
            return _num(ctx.array_job_id if is_array and ctx.array_job_id else ctx.job_id, width)
        if letter == "a":
            return _num(ctx.array_task_id if is_array else NO_ARRAY_TASK, width)  # type: ignore[arg-type]
        if letter == "b":
            return _num((ctx.array_task_id or 0) % 10 if is_array else NO_ARRAY_TASK % 10, width)
        if letter == "j":
            return _num(ctx.job_id, width)
        if letter == "J":
            text = _num(ctx.job_id, width)
            return text if ctx.step is None else f"{text}.{ctx.step}"
        if letter == "N":
            return ctx.first_node.split(".")[0]
        if letter == "n":
            return _num(ctx.node_id, width)
        if letter == "r":
            return _num(ctx.restarts, width)
        if letter == "s":
            return "batch" if ctx.step is None else _num(ctx.step, width)
        if letter == "t":
            return _num(ctx.task_id, width)
        if letter == "u":
            return ctx.user
        return ctx.job_name  # "x"

    return _join(_TOKEN.sub(replace, pattern), ctx.work_dir)


def _join(path: str, work_dir: str) -> str:
    if not path or os.path.isabs(path) or not work_dir:
        return path
    return os.path.join(work_dir, path)


def default_pattern(is_array: bool) -> str:
    return DEFAULT_ARRAY_PATTERN if is_array else DEFAULT_PATTERN


def resolve_stdout(raw: str | None, ctx: PatternContext) -> str:
    """The output path for a raw pattern as squeue shows it (``N/A``/empty → Slurm's default)."""
    pattern = raw if raw and raw not in ("N/A", "(null)") else default_pattern(ctx.array_task_id is not None)
    return expand_pattern(pattern, ctx)
