"""Open the dashboard on a record source, or run the same pipeline without a screen (``--headless``).

Textual is imported only here, only when a screen is wanted. However the app ends (``q``, Ctrl-C,
``--duration``, an error, SIGTERM, SIGHUP: the terminal closed), every source it started is stopped and
waited for, so an attach's probe step (and its srun) or the demo's ranks end before gputui exits; the job
keeps running. The same holds without a screen.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace

from gputui.cli import CommandError
from gputui.config import Config, load_config_or_defaults
from gputui.hangup import STOP_WAIT_S, OrderlyStop, terminal_gone
from gputui.monitor.state import DashboardState
from gputui.monitor.summary import summary_lines
from gputui.serve.mode import has_screen
from gputui.sources.base import Feed, RecordSource


def settings(warn: bool = True) -> Config:
    """The settings in effect; a broken file is reported on stderr (one line) and the defaults used."""
    config, warning = load_config_or_defaults()
    if warning and warn:
        print(f"gputui: warning: {warning}", file=sys.stderr)
    return config


def open_dashboard(
    source: RecordSource, *, duration: float | None = None, low_bandwidth: bool = False
) -> int:
    """Run the TUI on ``source`` until the user quits (or ``duration`` seconds); ``low_bandwidth``
    (``--low-bandwidth``) over the settings' ``[dashboard] low_bandwidth``."""
    if not has_screen():
        raise CommandError("the dashboard needs a terminal (use --headless, --json or --text)")
    config, warning = load_config_or_defaults()
    if low_bandwidth:
        config = replace(config, dashboard=replace(config.dashboard, low_bandwidth=True))
    from gputui.tui.app import GputuiApp

    GputuiApp(source, config, duration=duration, warning=warning).run_until_ended()
    return 0


def run_headless(
    source: RecordSource, *, duration: float | None = None, record_to: str | None = None, out=None
) -> DashboardState:
    """The dashboard's pipeline with no screen: apply the feed until the source ends (or ``duration``),
    then print the summary. ``record_to`` also appends every record to a file."""
    import threading

    out = out or sys.stdout
    config = settings()
    writer = None
    if record_to:
        from gputui.stream.io import RecordWriteError, RecordWriter

        try:
            writer = RecordWriter(record_to)
        except RecordWriteError as exc:
            raise CommandError(str(exc)) from None
    feed = Feed(tap=writer.write_all if writer is not None else None)
    state = source.new_state(config.alerts)
    thread = threading.Thread(target=source.run_to_end, args=(feed,), name="gputui-source", daemon=True)
    deadline = None if duration is None else time.monotonic() + duration
    with OrderlyStop(lambda _signum: source.stop()):  # SIGHUP/SIGTERM end it as Ctrl-C does
        thread.start()
        try:
            while not source.finished.is_set():
                if deadline is not None and time.monotonic() >= deadline:
                    break
                source.finished.wait(0.5)
                state = feed.apply(state)
                state.check()
        except KeyboardInterrupt:
            pass
        finally:
            source.stop()
            source.finished.wait(STOP_WAIT_S)
            state = feed.apply(state)
            feed.closed.set()
            if writer is not None:
                writer.close()
    try:
        for line in summary_lines(state):
            print(line, file=out)
    except OSError as exc:
        if not terminal_gone(exc):
            raise  # after a hang-up there is no terminal to print the summary on
    return state
