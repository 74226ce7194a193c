"""``h`` on the jobs screen: my GPU-hours, the TUI face of ``gputui history``.

A table of my ended jobs of the period (1, 7 or 30 days; ``p`` changes it) with their GPUs, elapsed
time, GPU-hours, outcome, mean GPU use and idle GPU-hours with where the use comes from ("unknown" where
nothing says), and the period's totals below it. The rows come from :mod:`gputui.slurm.history` (one
``sacct`` call) in a thread worker, so the screen never waits on sacct; a failing or absent sacct is one
line on the screen. The cells and the totals line are those of ``gputui history``
(:mod:`gputui.home.history_text`). Leaving the screen kills a sacct call still running.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from gputui.home.history_text import COLUMNS, row, since_arg, summary
from gputui.home.poller import current_user
from gputui.slurm import history
from gputui.slurm.commands import DEFAULT_TIMEOUT_S, CallGroup, run_slurm

PERIODS = ("1d", "7d", "30d")
_PERIOD_WORDS = {"1d": "the last day", "7d": "the last 7 days", "30d": "the last 30 days"}


@dataclass
class HistoryLoaded(Message):
    """sacct's answer for one period (posted from the worker): the jobs, or one line saying why not."""

    period: str
    jobs: list[history.JobHours] = field(default_factory=list)
    error: str = ""


class HistoryScreen(Screen):
    DEFAULT_CSS = """
    #history-header { height: 1; background: $panel; }
    #history { height: 1fr; padding: 0 0 0 1; border: round $primary; border-title-color: $text; }
    #history-totals { height: auto; max-height: 2; padding: 0 1; }
    """
    BINDINGS = [
        Binding("escape,q,h", "back", "back"),
        Binding("p", "next_period", "period 1d/7d/30d"),
        Binding("r", "reload", "refresh"),
    ]

    def __init__(self, period: str = "7d", user: str | None = None) -> None:
        super().__init__()
        self.period = period if period in PERIODS else "7d"
        self.user = user if user is not None else current_user()
        self.calls = CallGroup()
        self.loading = False

    def compose(self) -> ComposeResult:
        yield Static(id="history-header")
        yield DataTable(id="history", cursor_type="row", zebra_stripes=True)
        yield Static(id="history-totals")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*COLUMNS)
        table.border_title = "my ended jobs"
        table.focus()
        self.action_reload()

    def on_unmount(self) -> None:
        self.calls.stop()  # a hung sacct is killed, never waited for

    def action_back(self) -> None:
        self.dismiss(None)

    def action_next_period(self) -> None:
        self.period = PERIODS[(PERIODS.index(self.period) + 1) % len(PERIODS)]
        self.action_reload()

    def action_reload(self) -> None:
        self.loading = True
        self._header()
        self.query_one("#history-totals", Static).update(Text("asking sacct…", style="dim"))
        self._load(self.period)

    @work(thread=True, exclusive=True, exit_on_error=False, group="history")
    def _load(self, period: str) -> None:
        argv = history.history_argv(self.user, since_arg(period))
        try:
            res = run_slurm(argv, timeout=DEFAULT_TIMEOUT_S, check=False, group=self.calls)
            loaded = HistoryLoaded(period, history.parse_history(res.stdout, res.stderr, res.returncode))
        except Exception as exc:  # SlurmError (no sacct, accounting disabled) or a bug: one line
            lines = str(exc).strip().splitlines()
            loaded = HistoryLoaded(
                period, error=lines[0] if lines else f"sacct failed ({type(exc).__name__})"
            )
        self.post_message(loaded)

    def on_history_loaded(self, message: HistoryLoaded) -> None:
        if message.period != self.period:
            return  # the answer for a period the user has already left
        self.loading = False
        self._header()
        table = self.query_one(DataTable)
        table.clear()
        totals = self.query_one("#history-totals", Static)
        if message.error:
            totals.update(Text(f"{message.error} — r: try again", style="bold red"))
            return
        for job in message.jobs:
            table.add_row(*(Text(c, style="dim" if c == "unknown" else "") for c in row(job)))
        line = summary(message.jobs)
        if not message.jobs:
            line = f"no ended jobs in the period (sacct lists none) · {line}"
        totals.update(Text(line, style="bold"))

    def _header(self) -> None:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" gputui ", style="bold reverse")
        text.append(f"  my GPU-hours · {_PERIOD_WORDS[self.period]}", style="bold")
        text.append("  (p: 1d / 7d / 30d)", style="dim")
        if self.loading:
            text.append("  asking sacct…", style="dim")
        self.query_one("#history-header", Static).update(text)
