"""The gputui Textual app: today one screen, the job dashboard, on one record source.

``q``/Ctrl-C stop the source (only gputui's own probe step or demo ranks) and exit; Textual restores the
terminal, also after an error. The caller waits for the source to finish after ``run()`` returns.
"""

from __future__ import annotations

import os
import time

from textual.app import App
from textual.binding import Binding

from gputui.config import Config
from gputui.sources.base import RecordSource
from gputui.tui.screens.dashboard import DashboardScreen


class GputuiApp(App[int]):
    CSS_PATH = "gputui.tcss"
    TITLE = "gputui"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [Binding("ctrl+c", "quit", "quit", show=False, priority=True)]

    def __init__(self, source: RecordSource, config: Config | None = None, *, duration: float | None = None):
        super().__init__()
        self.source = source
        self.config = config or Config()
        self.duration = duration

    def on_mount(self) -> None:
        self.push_screen(DashboardScreen(self.source, self.config))
        if self.duration:
            self.set_timer(self.duration, self.action_quit)
        report = os.environ.get("GPUTUI_FIRST_FRAME_FILE")  # benchmarks/first_frame.py
        if report:
            self.call_after_refresh(self._first_frame, report)

    def _first_frame(self, report: str) -> None:
        """Write the wall-clock time of the first frame, then quit (benchmark hook)."""
        with open(report, "a", encoding="utf-8") as fh:
            fh.write(f"{time.time():.6f}\n")
        self.call_later(self.action_quit)

    async def action_quit(self) -> None:
        self.source.stop()
        self.exit(0)
