"""``gputui replay FILE...``: record files and training logs in the dashboard, with a time cursor."""

from __future__ import annotations

import argparse

from gputui.sources.replay import ReplaySource


def main(args: argparse.Namespace) -> int:
    from gputui.commands.dashboard import run_headless, settings

    if args.headless:
        state = run_headless(ReplaySource(list(args.files), settings().alerts, follow=False))
        return 0 if state.records else 1
    source = ReplaySource(list(args.files), settings().alerts)
    from gputui.commands.dashboard import open_dashboard

    return open_dashboard(source, low_bandwidth=getattr(args, "low_bandwidth", False))
