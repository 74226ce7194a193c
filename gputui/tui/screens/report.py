"""``R``: the run's report — the same tables as ``gputui report`` (one analysis module), for the job on
screen: GPUs used, per-GPU utilisation, idle share, memory peak and energy, epochs and their times,
throughput with the first epoch left out, final metrics, outcome — then the verdict (why the job is slow
or stuck, every finding, as ``gputui report`` ends). Redrawn every :data:`REFRESH_S` seconds while it is
open, from the dashboard's current state (a live run's report keeps up)."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Group
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from gputui.analysis.tables import report_tables
from gputui.monitor.state import DashboardState
from gputui.tui.widgets.verdict_pane import verdict_section

REFRESH_S = 2.0


class ReportScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,R", "dismiss", "close")]

    def __init__(self, state: Callable[[], DashboardState]) -> None:
        """``state``: gives the dashboard's state as it is now (the dashboard replaces it as it ingests)."""
        super().__init__()
        self.state = state

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="report-box"):
            yield Static(self._tables(), id="report-tables")

    def on_mount(self) -> None:
        self.set_interval(REFRESH_S, self.redraw)

    def _tables(self) -> Group:
        state = self.state()
        report = state.analysis.report()
        report.name = state.job.title
        return Group(*report_tables(report), verdict_section(state.verdict()))

    def redraw(self) -> None:
        self.query_one("#report-tables", Static).update(self._tables())

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
