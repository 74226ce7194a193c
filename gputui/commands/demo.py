"""``gputui demo``: the dashboard on a real small training run on this machine, no Slurm, no GPU.

The local launcher runs the PyTorch DDP reference trainer with 2 ranks on CPU (gloo, the bundled digits
dataset, ResNet-18, 4 epochs: about 20 seconds on two cores); one simulated GPU per rank follows that
rank's CPU use (labelled SIMULATED everywhere). ``--headless`` runs the same pipeline without a screen
and prints the summary; ``--record FILE`` also keeps the record stream.
"""

from __future__ import annotations

import argparse

from gputui.cli import CommandError
from gputui.extras import MissingExtra, require
from gputui.sources.demo import demo_spec
from gputui.sources.local import LocalRunSource


def main(args: argparse.Namespace) -> int:
    try:
        require("demo", "the demo (a real training run)")
    except MissingExtra as exc:
        raise CommandError(f"{exc} (or `make demo`)") from None
    source = LocalRunSource(
        demo_spec(args.ranks, args.epochs),
        simulated=True,
        interval=1.0,
        title="demo",
    )
    if args.headless:
        from gputui.commands.dashboard import run_headless

        state = run_headless(source, duration=args.duration, record_to=args.record)
        return 0 if state.job.state in ("COMPLETED", "RUNNING", "CANCELLED") else 1
    from gputui.commands.dashboard import open_dashboard

    return open_dashboard(source, duration=args.duration, low_bandwidth=getattr(args, "low_bandwidth", False))
