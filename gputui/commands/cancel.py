"""``gputui cancel JOBID [--signal SIG]``: cancel one of my jobs (or signal it) and confirm."""

from __future__ import annotations

import argparse

from gputui.cli import CommandError
from gputui.slurm.cancel import cancel_job
from gputui.slurm.commands import SlurmError
from gputui.slurm.jobid import JobIdError


def main(args: argparse.Namespace) -> int:
    try:
        result = cancel_job(args.jobid, signal=args.signal)
    except (SlurmError, JobIdError) as exc:
        raise CommandError(str(exc)) from None
    print(result.message)
    return 0 if result.confirmed else 1
