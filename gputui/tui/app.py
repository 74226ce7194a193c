"""The gputui Textual app: the jobs home screen (``gputui``), or one job dashboard (attach, run, demo,
replay) on its own.

From the home screen a dashboard is pushed on top and closing it (``q``/``escape``) returns to the jobs
list and stops only that dashboard's source. ``q`` on the home screen (or Ctrl-C anywhere) quits; jobs are
never touched by quitting; SIGHUP (the terminal closed) and SIGTERM quit the same way
(:meth:`GputuiApp.run_until_ended`). Textual restores the terminal, also after an error; every source is
stopped and waited for after ``run()`` returns. What the app costs (bytes/s to the terminal, CPU) is
measured as it runs (:mod:`gputui.tui.cost_meter`) and shown on the help screen; only the cells that
changed are sent (:mod:`gputui.tui.screen_diff`), their colour codes as changes
(:mod:`gputui.tui.sgr_squeeze`), in one pass over each frame.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import TYPE_CHECKING

from textual.app import App
from textual.binding import Binding

from gputui.config import Config
from gputui.hangup import STOP_WAIT_S, OrderlyStop, exit_when_stuck, stop_owned
from gputui.tui.cost_meter import CostMeter
from gputui.tui.screen_diff import ScreenDiff

METER_SAMPLE_S = 2.0  # the cost meter's samples (its rates cover the last ~10 s)

if TYPE_CHECKING:  # imported when a dashboard opens: the jobs screen starts without it
    from gputui.sources.base import RecordSource


class GputuiApp(App[int]):
    CSS_PATH = ["gputui.tcss", "home.tcss"]
    TITLE = "gputui"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [Binding("ctrl+c", "quit", "quit", show=False, priority=True)]

    def __init__(
        self,
        source: RecordSource | None = None,
        config: Config | None = None,
        *,
        duration: float | None = None,
        warning: str | None = None,
        poller=None,
        attach_options=None,
    ) -> None:
        """``source``: a standalone dashboard; None: the home screen on ``poller`` (a SlurmPoller)."""
        super().__init__()
        self.source = source
        self.config = config or Config()
        self.duration = duration
        self.warning = warning
        self.poller = poller
        self.attach_options = attach_options  # the probes the jobs screen starts (--backend, --interval)
        self.ended_by: int | None = None  # the signal that ended the app, if one did
        self.cost_meter = CostMeter()
        self.screen_diff = ScreenDiff()

    def run_until_ended(self) -> None:
        """Run until the app quits or gets SIGHUP/SIGTERM, then stop (and wait for) every source gputui
        owns. After a signal the process ends even if the app cannot leave a terminal that is gone."""
        with OrderlyStop(self.end_by_signal):
            try:
                self.run()
            finally:
                self.stop_sources()
                stop_owned()

    def on_mount(self) -> None:
        self._meter_terminal()
        if self.ended_by is not None:  # the signal came while the app was starting
            self.exit(0)
            return
        if self.source is not None:
            from gputui.tui.screens.dashboard import DashboardScreen  # the jobs screen starts without it

            self.push_screen(DashboardScreen(self.source, self.config))
        else:
            from gputui.home.poller import SlurmPoller
            from gputui.tui.screens.jobs import JobsScreen

            poller = self.poller or SlurmPoller(
                ended_hours=self.config.jobs.ended_hours, use_json=self.config.jobs.squeue_json
            )
            self.push_screen(JobsScreen(poller, self.config, self.attach_options))
        if self.warning:
            self.notify(self.warning, severity="warning", timeout=15)
        if self.duration:
            self.set_timer(self.duration, self.action_quit)
        report = os.environ.get("GPUTUI_FIRST_FRAME_FILE")  # benchmarks/first_frame.py
        if report:
            self.call_after_refresh(self._first_frame, report)

    def _meter_terminal(self) -> None:
        """Send the terminal only the cells that changed (:mod:`gputui.tui.screen_diff`), each style change
        as what changed (:mod:`gputui.tui.sgr_squeeze`), and count every byte written. Textual offers no
        public hook: its driver's ``write`` gets every frame. The meter is sampled every few seconds."""
        driver = self._driver
        if driver is not None:  # diffed with styles squeezed (one pass), then counted, then written
            written = self.cost_meter.counting(driver.write)
            driver.write = self.screen_diff.diffing(written)  # type: ignore[method-assign]
        self.set_interval(METER_SAMPLE_S, self.cost_meter.sample)

    def on_resize(self) -> None:
        self.screen_diff.forget()  # the terminal may have cleared or reflowed what it showed

    def _first_frame(self, report: str) -> None:
        """Write the wall-clock time of the first frame, then quit (benchmark hook)."""
        with open(report, "a", encoding="utf-8") as fh:
            fh.write(f"{time.time():.6f}\n")
        self.call_later(self.action_quit)

    def stop_sources(self) -> None:
        """End every dashboard's source (their probe steps, local ranks); never a job."""
        if self.source is not None:
            self.source.stop()
        for screen in self.screen_stack:  # dashboards opened from the home screen
            source = getattr(screen, "source", None)
            if source is not None and hasattr(source, "stop"):
                source.stop()

    async def action_quit(self) -> None:
        self.stop_sources()
        self.exit(0)

    def end_by_signal(self, signum: int) -> None:
        """SIGHUP or SIGTERM, in the main thread between two steps of the event loop (or before it runs):
        stop the sources now, then quit as ``q`` does."""
        self.ended_by = signum
        self.stop_sources()
        exit_when_stuck(stop_owned, STOP_WAIT_S, 128 + signum)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not running yet (on_mount quits) or any more (the caller stops the sources)
            return
        loop.call_soon_threadsafe(self.exit, 0)
