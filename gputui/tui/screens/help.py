"""``?``: every key of the dashboard (or the jobs screen), in one place, and what gputui itself costs:
bytes/s to the terminal and CPU (:mod:`gputui.tui.cost_meter`), updated while the help is open."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

HELP = """\
[b]gputui dashboard[/b] — one job: its GPUs, its training metrics, its output

[b]everywhere[/b]
  q / ctrl+c   quit (ends only gputui's own probe step or demo run; never your job)
  ?            this help            a   alerts and events, with evidence and time
  g            focus the GPU pane   l   focus the log pane / next output file
  t            next training metric in the chart
  T            teach a log format: name the numbers of a line not read (kept in the settings)
  R            the run's report: GPUs, energy, epoch times, throughput, verdict (as `gputui report`)
  /            search the log (enter: find, n: next older match, esc: close)
[b]GPU pane[/b]
  ↑/↓          move between rows    enter   expand / collapse a node's roll-up row
  flags        idle (busy job, idle GPU), mem ⚠ (≥ 95 %), hot ⚠, LOST, straggler
  ┐ ┘          the two GCDs of one MI250X; W with ᵖ is the whole package's power
[b]log pane[/b]
  f            follow / pause       ↑/↓ pgup/pgdn   scroll (pauses following)
[b]replay[/b]
  ← / →        move the time cursor (a fiftieth of the run)
  home / end   start / end (end follows files still being written)
  space        play / pause         [ / ]   half / double speed

The line under the panes is the verdict: why the job is slow or stuck, across its nodes (docs/verdicts.md).
With 3 nodes or more, a heatmap under the time chart shows each node's GPU use (a slow node is a stripe).
SIMULATED means the GPU values are not from a real GPU (demo, --backend sim). On a slow link:
--low-bandwidth (\\[dashboard] low_bandwidth): a slower refresh and no braille charts.
Thresholds: ~/.config/gputui/config.toml (or $GPUTUI_CONFIG), see docs/dashboard.md and docs/verdicts.md.
"""


COST_REFRESH_S = 2.0


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close")]

    def __init__(self, text: str = HELP) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(self.text)
            yield Static(id="own-cost")

    def on_mount(self) -> None:
        self.show_cost()
        self.set_interval(COST_REFRESH_S, self.show_cost)

    def show_cost(self) -> None:
        """The app's own cost, from its meter (an app without one shows nothing)."""
        meter = getattr(self.app, "cost_meter", None)
        if meter is not None:
            meter.sample()
            self.query_one("#own-cost", Static).update(meter.line())

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
