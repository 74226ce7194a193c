"""``a``: the verdict (why the job is slow or stuck), every alert (active first) and the stream's events,
newest first, with time and evidence."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from gputui.monitor.state import DashboardState
from gputui.tui.widgets.verdict_pane import verdict_section


def alerts_text(state: DashboardState) -> Text:
    text = verdict_section(state.verdict())
    text.append("\n\nalerts\n", style="bold underline")
    history = sorted(state.alerts.history, key=lambda a: (not a.active, -a.time))
    if not history:
        text.append("  none\n", style="dim")
    for alert in history[:200]:
        when = time.strftime("%H:%M:%S", time.localtime(alert.time))
        style = ("bold red" if alert.severity == "error" else "bold yellow") if alert.active else "dim"
        text.append(f"  {when} {'●' if alert.active else '○'} {alert.kind:<16} ", style=style)
        text.append(f"{alert.message}\n")
        text.append(f"             {alert.evidence}\n", style="dim")
    text.append("\nevents\n", style="bold underline")
    for note in list(state.notes)[::-1][:200]:
        when = time.strftime("%H:%M:%S", time.localtime(note.time))
        style = {"error": "red", "warning": "yellow"}.get(note.level, "")
        text.append(f"  {when} {note.message}\n", style=style)
    return text


class AlertsScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,a", "dismiss", "close")]

    def __init__(self, state: DashboardState) -> None:
        super().__init__()
        self.state = state

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="alerts-box"):
            yield Static(alerts_text(self.state))

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
