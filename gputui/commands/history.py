"""``gputui history [--since 7d] [--json|--csv]``: my ended jobs' GPU-hours, from one ``sacct`` call.

Columns: job, name, outcome, GPUs, elapsed, GPU-hours, mean GPU use, idle GPU-hours and where the use
comes from (:mod:`gputui.slurm.history`: sacct, gputui records, or unknown), then the totals of the
period. A cluster without accounting, or sacct failing, is one line on stderr and exit status 1."""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys

from gputui.cli import CommandError
from gputui.home.poller import current_user
from gputui.slurm import history
from gputui.slurm.commands import DEFAULT_TIMEOUT_S, SlurmError, run_slurm
from gputui.slurm.jobs import format_duration

COLUMNS = ("JOBID", "NAME", "OUTCOME", "GPUS", "ELAPSED", "GPU-H", "MEAN USE", "IDLE GPU-H", "USE FROM")
CSV_FIELDS = (
    "job_id",
    "name",
    "outcome",
    "gpus",
    "elapsed_s",
    "gpu_hours",
    "mean_util_pct",
    "idle_gpu_hours",
)
CSV_FIELDS += ("source", "end")
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


def _row(job: history.JobHours) -> tuple[str, ...]:
    elapsed = "unknown" if job.elapsed_s is None else format_duration(job.elapsed_s)
    use = "unknown" if job.mean_util_pct is None else f"{job.mean_util_pct:.0f}%"
    gpus = "unknown" if job.gpus is None else str(job.gpus)
    return (job.job_id, job.name, job.outcome, gpus, elapsed, _num(job.gpu_hours), use,
            _num(job.idle_gpu_hours), job.source)  # fmt: skip


def table(jobs: list[history.JobHours]) -> str:
    rows = [COLUMNS, *(_row(j) for j in jobs)]
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


def main(args: argparse.Namespace) -> int:
    argv = history.history_argv(current_user(), args.since)
    try:
        res = run_slurm(argv, timeout=DEFAULT_TIMEOUT_S, check=False)
        jobs = history.parse_history(res.stdout, res.stderr, res.returncode)
    except SlurmError as exc:
        raise CommandError(str(exc)) from None
    if args.json:
        print(json.dumps({"jobs": [j.to_json_dict() for j in jobs], "totals": vars(history.totals(jobs))}))
    elif args.csv:
        writer = csv.writer(sys.stdout)
        writer.writerow(CSV_FIELDS)
        for j in jobs:
            record = j.to_json_dict()
            writer.writerow(["" if record[k] is None else record[k] for k in CSV_FIELDS])
    else:
        print(table(jobs) if jobs else "no ended jobs in the period (sacct lists none)")
        print(summary(jobs))
    return 0
