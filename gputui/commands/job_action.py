"""``gputui cancel JOBID [--signal SIG]``, ``gputui hold JOBID``, ``gputui release JOBID``: one of my jobs
through the job-action table the jobs screen uses (:data:`gputui.home.actions.ACTIONS`: the same run
function, qualifying rule and outcome text), answered with one line once Slurm confirmed it.

Exit status: 0 confirmed; 1 Slurm refused, the job does not qualify, or the outcome could not be
confirmed; 2 a job id or signal that is not one (nothing reaches Slurm)."""

from __future__ import annotations

import argparse
import sys

from gputui.cli import EXIT_ERROR, EXIT_OK, EXIT_USAGE, CommandError
from gputui.home.actions import ACTION_ERRORS, run_on_job_id
from gputui.slurm.cancel import normalize_signal
from gputui.slurm.commands import SlurmError
from gputui.slurm.jobid import JobIdError, validate_jobid


def main(args: argparse.Namespace) -> int:
    signal = getattr(args, "signal", None)
    try:
        job_id = validate_jobid(args.jobid)
        signal = normalize_signal(signal) if signal else None
    except (JobIdError, SlurmError) as exc:  # bad input: a usage error, as the parser's own
        print(f"gputui: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    name = "signal" if signal else args.command
    try:
        outcome = run_on_job_id(name, job_id, signal)
    except ACTION_ERRORS as exc:
        raise CommandError(str(exc)) from None
    print(outcome.message)
    return EXIT_OK if outcome.confirmed else EXIT_ERROR
