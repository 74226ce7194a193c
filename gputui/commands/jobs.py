"""``gputui jobs [--json] [--all]``: my Slurm jobs, from one ``squeue`` call (``--all``: and one ``sacct``).

"no jobs" (exit 0) only when squeue answered with none; squeue failing, timing out or printing something
that is not job rows is one line on stderr and exit status 1. Rows that do not parse among good ones: the
good ones, and one line on stderr counting the others. ``--all`` lists ended jobs as the jobs screen does:
squeue's ``-t all`` (ended within MinJobAge) and sacct's jobs that ended in the last ``[jobs] ended_hours``,
merged by :func:`gputui.slurm.sacct.merge_ended`; sacct failing (or accounting disabled) is one warning
line and squeue's list."""

from __future__ import annotations

import argparse
import json
import sys

from gputui.cli import CommandError
from gputui.slurm import sacct
from gputui.slurm.answers import read_sacct, read_squeue
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


def _ended() -> list[Job]:
    """Jobs that ended in the last ``[jobs] ended_hours`` (sacct); a failure is one warning line."""
    from gputui.config import load_config_or_defaults
    from gputui.home.poller import current_user

    hours = load_config_or_defaults()[0].jobs.ended_hours
    if hours <= 0:
        return []
    try:
        ended = read_sacct(run_slurm(sacct.ended_argv(current_user(), hours), timeout=TIMEOUT_S, check=False))
    except SlurmError as exc:  # AccountingDisabled among them: its line says what is still listed
        print(f"gputui: warning: {exc}", file=sys.stderr)
        return []
    if ended.note:
        print(f"gputui: warning: sacct: {ended.note}", file=sys.stderr)
    return ended.jobs


def main(args: argparse.Namespace) -> int:
    argv = squeue_argv(all_states=getattr(args, "all", False))
    try:
        answer = read_squeue(run_slurm(argv, timeout=TIMEOUT_S, check=False))
    except SlurmError as exc:
        raise CommandError(str(exc)) from None
    if answer.note:
        print(f"gputui: warning: squeue: {answer.note}", file=sys.stderr)
    jobs = answer.jobs
    if getattr(args, "all", False):
        jobs = sacct.merge_ended(jobs, _ended())
    if args.json:
        print(json.dumps([j.to_json_dict() for j in jobs], indent=1))
    elif jobs:
        print(table(jobs))
    else:
        print("no jobs (squeue --me lists none)")
    return 0
