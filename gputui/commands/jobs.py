"""``gputui jobs [--json] [--all]``: my Slurm jobs, from one ``squeue`` call."""

from __future__ import annotations

import argparse
import json

from gputui.cli import CommandError
from gputui.slurm.commands import SlurmError
from gputui.slurm.jobs import Job, format_duration, list_jobs

_COLUMNS = ("JOBID", "NAME", "STATE", "TIME", "LIMIT", "NODES", "GPUS/NODE", "NODELIST(REASON)")


def _row(job: Job) -> tuple[str, ...]:
    gres = job.tres_per_node.rsplit(":", 1)[-1] if "gpu" in job.tres_per_node else "-"
    where = job.nodelist if job.state == "RUNNING" or not job.reason else f"({job.reason})"
    used = format_duration(job.time_used_s) if job.time_used_s is not None else "-"
    return (
        job.job_id,
        job.name,
        job.state,
        used,
        format_duration(job.time_limit_s),
        str(job.num_nodes or "-"),
        gres,
        where,
    )


def table(jobs: list[Job]) -> str:
    rows = [_COLUMNS, *(_row(j) for j in jobs)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_COLUMNS))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def main(args: argparse.Namespace) -> int:
    try:
        jobs = list_jobs(all_states=getattr(args, "all", False))
    except SlurmError as exc:
        raise CommandError(str(exc)) from None
    if args.json:
        print(json.dumps([j.to_json_dict() for j in jobs], indent=1))
    elif jobs:
        print(table(jobs))
    else:
        print("no jobs (squeue --me lists none)")
    return 0
