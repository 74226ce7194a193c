"""``gputui history [--since 7d] [--json|--csv]``: my ended jobs' GPU-hours, from one ``sacct`` call.

Columns: job, name, outcome, GPUs, elapsed, GPU-hours, mean GPU use, idle GPU-hours and where the use
comes from (:mod:`gputui.slurm.history`: sacct, gputui records, or unknown), then the totals of the
period. A cluster without accounting, or sacct failing, is one line on stderr and exit status 1."""

from __future__ import annotations

import argparse
import csv
import json
import sys

from gputui.cli import CommandError
from gputui.home.history_text import summary, table
from gputui.home.poller import current_user
from gputui.slurm import history
from gputui.slurm.commands import DEFAULT_TIMEOUT_S, SlurmError, run_slurm

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
