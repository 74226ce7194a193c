"""``R``: the run's report — the same tables as ``gputui report`` (one analysis module), for the job on
screen: GPUs used, per-GPU utilisation, idle share, memory peak and energy, epochs and their times,
throughput with the first epoch left out, final metrics, outcome."""

from __future__ import annotations

from rich.console import Group
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from gputui.analysis.tables import report_tables
from gputui.monitor.state import DashboardState


class ReportScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,R", "dismiss", "close")]

    def __init__(self, state: DashboardState) -> None:
        super().__init__()
        self.state = state

    def compose(self) -> ComposeResult:
        report = self.state.analysis.report()
        report.name = self.state.job.title
        with VerticalScroll(id="report-box"):
            yield Static(Group(*report_tables(report)))

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
