"""The cells and the totals line of my GPU-hours, shared by ``gputui history`` and the jobs screen's ``h``.

Textual-free: :mod:`gputui.commands.history` prints them, :mod:`gputui.tui.screens.history` shows them in
a table, and the CLI parses ``--since`` with :func:`since_arg`.
"""

from __future__ import annotations

import argparse
import re

from gputui.slurm import history
from gputui.slurm.jobs import format_duration

COLUMNS = ("JOBID", "NAME", "OUTCOME", "GPUS", "ELAPSED", "GPU-H", "MEAN USE", "IDLE GPU-H", "USE FROM")
_SINCE = re.compile(r"(\d+)([mhdw])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def since_arg(text: str) -> str:
    """``7d`` → ``now-7days`` (sacct's relative time); minutes, hours, days or weeks."""
    match = _SINCE.fullmatch(text.strip())
    if not match or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a period such as 30m, 12h, 7d or 4w")
    return f"now-{int(match.group(1))}{_UNITS[match.group(2)]}"


def _num(value: float | None, digits: int = 2) -> str:
    return "unknown" if value is None else f"{value:.{digits}f}"


def row(job: history.JobHours) -> tuple[str, ...]:
    elapsed = "unknown" if job.elapsed_s is None else format_duration(job.elapsed_s)
    use = "unknown" if job.mean_util_pct is None else f"{job.mean_util_pct:.0f}%"
    gpus = "unknown" if job.gpus is None else str(job.gpus)
    return (job.job_id, job.name, job.outcome, gpus, elapsed, _num(job.gpu_hours), use,
            _num(job.idle_gpu_hours), job.source)  # fmt: skip


def table(jobs: list[history.JobHours]) -> str:
    rows = [COLUMNS, *(row(j) for j in jobs)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def summary(jobs: list[history.JobHours]) -> str:
    t = history.totals(jobs)
    line = f"{t.jobs} jobs, {t.gpu_hours:.2f} GPU-hours, {t.idle_gpu_hours:.2f} of them idle where known"
    if t.unknown_gpus:
        line += f"; GPUs unknown for {t.unknown_gpus} (sacct records no gres/gpu for them)"
    if t.unknown_use:
        line += f"; GPU use unknown for {t.unknown_use} with GPUs"
    return line
