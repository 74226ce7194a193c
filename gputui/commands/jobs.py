"""``gputui jobs [--json] [--all]``: my Slurm jobs, from one ``squeue`` call.

"no jobs" (exit 0) only when squeue answered with none; squeue failing, timing out or printing something
that is not job rows is one line on stderr and exit status 1. Rows that do not parse among good ones: the
good ones, and one line on stderr counting the others."""

from __future__ import annotations

import argparse
import json
import sys

from gputui.cli import CommandError
from gputui.slurm.answers import read_squeue
from gputui.slurm.commands import DEFAULT_TIMEOUT_S, SlurmError, run_slurm
from gputui.slurm.jobs import Job, format_duration, squeue_argv

TIMEOUT_S = DEFAULT_TIMEOUT_S

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
    argv = squeue_argv(all_states=getattr(args, "all", False))
    try:
        answer = read_squeue(run_slurm(argv, timeout=TIMEOUT_S, check=False))
    except SlurmError as exc:
        raise CommandError(str(exc)) from None
    if answer.note:
        print(f"gputui: warning: squeue: {answer.note}", file=sys.stderr)
    jobs = answer.jobs
    if args.json:
        print(json.dumps([j.to_json_dict() for j in jobs], indent=1))
    elif jobs:
        print(table(jobs))
    else:
        print("no jobs (squeue --me lists none)")
    return 0
