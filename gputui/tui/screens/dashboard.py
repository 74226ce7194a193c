"""The job dashboard: one screen fed by one record source (attach, local run or replay).

The source runs in a thread worker and writes into a :class:`~gputui.sources.base.Feed`; the feed posts
one :class:`~gputui.tui.messages.FeedReady` per batch and this screen moves the batch into its
:class:`~gputui.monitor.state.DashboardState` on the UI thread. A timer redraws what changed (the header
and banner when their text changed, panes when the state's version moved, charts at most once a second).
The left column's panes are sized by their content (:mod:`~gputui.tui.screens.dashboard_layout`); with
``[dashboard] low_bandwidth`` the refresh is at least 2 s and one-line sparklines replace the charts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from gputui.config import Config
from gputui.monitor.conditions import UTIL_GOOD_PCT, UTIL_LOW_PCT
from gputui.monitor.summary import job_figures
from gputui.sources.base import Feed, RecordSource
from gputui.textsafe import printable

if TYPE_CHECKING:
    from gputui.sources.replay import ReplaySource
    from gputui.tui.screens.teach import Lesson
from gputui.tui.format import needs_layout
from gputui.tui.messages import FeedReady, SourceFinished
from gputui.tui.screens.alerts import AlertsScreen
from gputui.tui.screens.dashboard_layout import left_column
from gputui.tui.screens.help import HelpScreen
from gputui.tui.screens.report import ReportScreen
from gputui.tui.widgets.gpu_pane import GpuPane
from gputui.tui.widgets.header import banner_text, header_text
from gputui.tui.widgets.heatmap import Heatmap, Thresholds
from gputui.tui.widgets.log_pane import LogPane
from gputui.tui.widgets.timeline import Timeline
from gputui.tui.widgets.training_pane import TrainingPane, spark_line
from gputui.tui.widgets.verdict_pane import VerdictPane

SMALL_HEIGHT = 30  # fewer rows: "-small" (no heatmap; a time chart only in the rows the GPUs leave)
LOW_BANDWIDTH_REFRESH_S = 2.0  # low_bandwidth: the screen refreshes at most this often
HEAT = Thresholds(good=UTIL_GOOD_PCT, low=UTIL_LOW_PCT)  # the GPU pane's own util levels
REPLAY_ACTIONS = frozenset({"replay_move", "replay_play", "replay_speed", "replay_start", "replay_end"})


class DashboardScreen(Screen):
    BINDINGS = [
        Binding("q", "close", "quit"),
        Binding("q", "close_back", "back to jobs"),
        Binding("escape", "leave", "back", show=False),
        Binding("R", "report", "report"),  # the most asked-for keys first: an 80-column footer cuts the end
        Binding("a", "alerts", "alerts"),
        Binding("g", "focus_gpus", "gpus"),
        Binding("t", "next_metric", "metric"),
        Binding("T", "teach", "teach", show=False),
        Binding("l", "log", "log"),
        Binding("slash", "search", "search"),
        Binding("question_mark", "help", "help"),
        Binding("left", "replay_move(-1)", "◀", show=True),
        Binding("right", "replay_move(1)", "▶", show=True),
        Binding("space", "replay_play", "play/pause"),
        Binding("left_square_bracket", "replay_speed(-1)", "slower", show=False),
        Binding("right_square_bracket", "replay_speed(1)", "faster", show=False),
        Binding("home", "replay_start", "start", show=False),
        Binding("end", "replay_end", "end", show=False),
    ]

    def __init__(self, source: RecordSource, config: Config, *, back: bool = False) -> None:
        """``back``: opened from the jobs list; ``q``/``escape`` return there (dismissing with the
        job's figures) instead of quitting."""
        super().__init__()
        self.source = source
        self.config = config
        self.back = back
        self.state = source.new_state(config.alerts)
        self.feed = Feed(notify=lambda: self.post_message(FeedReady()))
        self.metric: str | None = None
        self.metric_chosen = False  # until `t` is pressed, the chart shows the first preferred metric
        self.log_index = 0
        self._drawn: tuple[object, int] | None = None  # (state object, its version) last drawn
        self._shown: dict[str, object] = {}  # each Static's last content: repaint only what changed
        self._layout_key: tuple | None = None
        self._heatmap_nodes = 0
        self.low_bandwidth = config.dashboard.low_bandwidth
        self.finished = False

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Static(id="banner")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield GpuPane(id="gpus")
                yield Static(id="util-spark")
                yield Timeline(id="timeline")
                yield Heatmap(id="heatmap")
            yield TrainingPane(id="training")
        yield VerdictPane(id="verdict")
        yield LogPane(id="log")
        yield Input(id="search", placeholder="search the log (enter: find, esc: close)")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#gpus").border_title = "GPUs"
        self.query_one("#training").border_title = "training"
        self.query_one("#heatmap").border_title = "GPU util per node"
        self.query_one("#heatmap").display = False  # until _size_panes finds more than one node
        self.query_one("#search").display = False
        self.set_class(self.low_bandwidth, "-low-bandwidth")  # gputui.tcss: no braille charts
        self.query_one(TrainingPane).low_bandwidth = self.low_bandwidth
        # the source starts once the first frame is on screen: its start-up (loading a replay, starting
        # ranks, srun) then never delays what the user sees first
        self.call_after_refresh(
            self.run_worker, self._run_source, thread=True, exit_on_error=False, name="record-source"
        )
        refresh_s = self.config.dashboard.refresh_s
        if self.low_bandwidth:
            refresh_s = max(refresh_s, LOW_BANDWIDTH_REFRESH_S)
        self.set_interval(refresh_s, self.refresh_view)
        self.refresh_view(force=True)

    def on_unmount(self) -> None:
        # However the app ends (q, an error, App.exit), end the source: the worker thread must return,
        # or asyncio.run's executor shutdown waits for it and App.run never returns.
        self.feed.closed.set()
        self.source.stop()

    def _run_source(self) -> None:
        try:
            self.source.run_to_end(self.feed)
        finally:
            self.post_message(SourceFinished())

    # ------------------------------------------------------------------ data in

    def on_feed_ready(self, _message: FeedReady) -> None:
        self.state = self.feed.apply(self.state)

    def on_source_finished(self, _message: SourceFinished) -> None:
        self.state = self.feed.apply(self.state)
        self.finished = True
        self.refresh_view(force=True)

    def on_resize(self) -> None:
        self.set_class(self.size.height < SMALL_HEIGHT, "-small")  # gputui.tcss drops the heatmap
        self.refresh_view(force=True)

    # ------------------------------------------------------------------ drawing

    def refresh_view(self, force: bool = False) -> None:
        state = self.state
        state.check()
        self._update("#header", header_text(state))
        banner = banner_text(state)
        self.query_one("#banner", Static).display = banner is not None
        if banner is not None:
            self._update("#banner", banner)
        self._size_panes()
        # charts redraw themselves at most once a second and only on new data: ask every tick, so a
        # redraw skipped by that limit is not left stale when the stream goes quiet
        names = state.training.names()
        if not self.metric_chosen or self.metric not in names:
            self.metric = names[0] if names else None
        if self.low_bandwidth:
            util, step = state.board.util_line, state.training.step_time
            self._update("#util-spark", spark_line("util %", util, 100.0) + "  " + spark_line("s/step", step))
        else:
            self.query_one(Timeline).draw(
                state.board.util_line,
                state.training.step_time,
                clockless=state.clockless,
                ended=self.finished,
                force=force,
                spikes=state.training.step_spikes(),
            )
        self.query_one(TrainingPane).draw_chart(
            state.training, self.metric, clockless=state.clockless, force=force
        )
        heatmap = self.query_one(Heatmap)
        if heatmap.display:
            heatmap.show(state.board.node_lines(), HEAT, self._heatmap_nodes)
        if state.verdicts.settings is not self.config.verdict:  # a replay hands over new states
            state.use_verdict_settings(self.config.verdict)
        self.query_one(VerdictPane).show(state.verdict())  # every tick: a hang grows while nothing arrives
        # a replay hands over whole new states, whose versions start again: compare the object too
        drawn = self._drawn
        if drawn is not None and drawn[0] is state and drawn[1] == state.version and not force:
            return
        self._drawn = (state, state.version)
        self.query_one(GpuPane).show(state.board, state.alerts.thresholds, state.now(), state.job.running)
        self.query_one(TrainingPane).show_epochs(state.training, state.analysis.energy(last=1))
        logs = list(state.logs.values())
        log = logs[self.log_index % len(logs)] if logs else None
        self.query_one(LogPane).show(log, max(0, len(logs) - 1), ended=self._output_ended())

    def _output_ended(self) -> bool:
        """No more output will come: the source returned (a local run, a detached job), the job reached a
        final state, or, in a replay (which has no job to ask), the log says its run is over."""
        state = self.state
        recorded_end = state.job.kind == "replay" and state.training.ended
        return self.finished or state.job.ended is not None or recorded_end

    def _update(self, selector: str, content: object) -> None:
        """``Static.update`` only when the content changed (an update repaints even when identical)."""
        old = self._shown.get(selector)
        if old != content:
            self._shown[selector] = content
            # same number of lines: no layout pass (the header's clock ticks every second)
            layout = old is None or needs_layout(old, content)
            self.query_one(selector, Static).update(content, layout=layout)  # type: ignore[arg-type]

    def _size_panes(self) -> None:
        """The GPU pane as tall as its GPUs need, the heatmap as its nodes need, the time chart the rest
        (:mod:`gputui.tui.screens.dashboard_layout`); only when those numbers or the screen changed."""
        board = self.state.board
        left = self.query_one("#left")
        charts, small = not self.low_bandwidth, self.has_class("-small")
        key = (len(board.gpus), len(board.nodes), left.size.height, charts, small)
        if key == self._layout_key or not left.size.height:
            return
        self._layout_key = key
        rows = left_column(left.size.height, len(board.gpus), len(board.nodes), timeline=charts, small=small)
        self.query_one(GpuPane).styles.height = rows.gpus if rows.timeline else "1fr"
        self.query_one(Timeline).display = rows.timeline
        heatmap = self.query_one(Heatmap)
        heatmap.display = rows.heatmap > 0
        heatmap.styles.height = rows.heatmap or None
        self._heatmap_nodes = rows.heatmap_nodes
        # the charts were just drawn for their old sizes: draw them again once the new layout is on
        self.call_after_refresh(self.refresh_view, True)

    # ------------------------------------------------------------------ actions

    def action_focus_gpus(self) -> None:
        self.query_one(GpuPane).focus()

    def action_next_metric(self) -> None:
        names = self.state.training.names()
        if names:
            i = names.index(self.metric) + 1 if self.metric in names else 0
            self.metric = names[i % len(names)]
            self.metric_chosen = True
            chart = self.query_one(TrainingPane)
            chart.draw_chart(self.state.training, self.metric, clockless=self.state.clockless, force=True)

    def action_log(self) -> None:
        pane = self.query_one(LogPane)
        if pane.has_focus and len(self.state.logs) > 1:
            self.log_index += 1
        pane.focus()
        self.refresh_view(force=True)

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
        box.display = True
        box.focus()

    @on(Input.Submitted, "#search")
    def _search(self, event: Input.Submitted) -> None:
        pane = self.query_one(LogPane)
        pane.find(event.value)
        event.input.display = False
        pane.focus()

    async def action_close_back(self) -> None:
        await self.action_close()

    async def action_leave(self) -> None:
        await self.action_close()

    async def action_close(self) -> None:
        """Escape closes the search box first; then back to the jobs list, or quit when standalone."""
        box = self.query_one("#search", Input)
        if box.display:
            box.display = False
            self.query_one(LogPane).focus()
            return
        if not self.back:
            await self.app.action_quit()
            return
        self.source.stop()
        self.dismiss(job_figures(self.state))

    def action_alerts(self) -> None:
        self.app.push_screen(AlertsScreen(self.state))

    def action_report(self) -> None:
        self.app.push_screen(ReportScreen(lambda: self.state))

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    def action_teach(self) -> None:
        """``T``: name the numbers of a line that was not read (:mod:`gputui.tui.screens.teach`)."""
        from gputui.tui.screens.teach import TeachScreen  # (the first frame does not wait for it)

        unread = list(self.state.training.unread.values())
        if not unread:
            self.notify("every line that looks like metrics was read: nothing to teach", timeout=5)
            return
        self.app.push_screen(TeachScreen(unread), self._taught)

    def _taught(self, lesson: Lesson | None) -> None:
        """A pattern was stored: the source reads its logs again with it (its own thread does)."""
        if lesson is None:
            return
        saved = f"pattern {lesson.pattern!r} saved in {lesson.settings}"
        if self.source.relearn(f"{saved}: the logs are read again with it"):
            self.notify(printable(f"{saved}: reading the logs again"), timeout=8, markup=False)
        else:
            self.state.say("info", f"{saved}: it is used when the log is opened again")
            self.notify(
                printable(f"{saved}: it is used when the log is opened again"), timeout=8, markup=False
            )
            self.refresh_view(force=True)

    # ------------------------------------------------------------------ replay

    def _replay(self) -> ReplaySource | None:
        """The source, when it is a replay (the cursor keys apply to it)."""
        return self.source if self.source.kind == "replay" else None  # type: ignore[return-value]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("close", "close_back"):
            return (action == "close_back") == self.back
        if action in REPLAY_ACTIONS:
            return self._replay() is not None
        return True

    def action_replay_move(self, steps: int) -> None:
        if (replay := self._replay()) is not None:
            replay.move(steps)

    def action_replay_play(self) -> None:
        if (replay := self._replay()) is not None:
            replay.toggle_play()

    def action_replay_speed(self, by: int) -> None:
        if (replay := self._replay()) is not None:
            replay.faster(by)

    def action_replay_start(self) -> None:
        if (replay := self._replay()) is not None:
            replay.to_start()

    def action_replay_end(self) -> None:
        if (replay := self._replay()) is not None:
            replay.to_end()
