"""``gputui`` with no command: the jobs home screen (my jobs, the cluster's free GPUs, the launch form).

Settings come from the TOML file (``gputui --help`` shows its path); ``GPUTUI_REFRESH``/``GPUTUI_CLUSTER``
override it and ``--refresh``/``--cluster`` override both. A broken file does not stop the app: it starts
with the defaults and shows the file's one-line error. However the app ends (``q``, Ctrl-C, SIGTERM, SIGHUP:
the terminal closed), the dashboards opened from it end their probe steps and local runs; jobs keep running.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from gputui.cli import CommandError
from gputui.config import load_config_or_defaults
from gputui.serve.mode import has_screen


def main(args: argparse.Namespace) -> int:
    if not has_screen():
        raise CommandError("the jobs screen needs a terminal (gputui jobs lists your jobs as text)")
    config, warning = load_config_or_defaults()
    if getattr(args, "refresh", None):
        config = replace(config, jobs=replace(config.jobs, refresh_s=args.refresh))
    if getattr(args, "low_bandwidth", False):  # the dashboards opened from the jobs screen
        config = replace(config, dashboard=replace(config.dashboard, low_bandwidth=True))
    if getattr(args, "cluster", None):
        config = replace(config, cluster=args.cluster)
    from gputui.slurm.attach import AttachOptions
    from gputui.tui.app import GputuiApp

    options = AttachOptions(backend=args.backend, interval=args.interval)
    GputuiApp(None, config, warning=warning, duration=args.duration, attach_options=options).run_until_ended()
    return 0
