"""The dashboard's keys, driven with Textual's pilot on replayed record files (``tui_data``).

Assertions are on the screen's state and widgets: which screen is up, what a pane holds, where the replay
cursor is. Each app is left with ``q`` or by the end of ``run_test`` (the screen stops its source when it
is unmounted).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import tui_data
from textual.widgets import Input, Static

from gputui.tui.screens.alerts import AlertsScreen
from gputui.tui.screens.dashboard import DashboardScreen
from gputui.tui.screens.help import HelpScreen
from gputui.tui.widgets.gpu_pane import GpuPane
from gputui.tui.widgets.log_pane import LogPane
from gputui.tui.widgets.training_pane import MetricChart

SIZE = (120, 36)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def static_text(widget: Static) -> str:
    return str(widget.render())


async def test_help_opens_with_question_mark_and_closes_with_escape(folder):
    app = tui_data.make_app(tui_data.one_node(folder))
    async with app.run_test(size=SIZE) as pilot:
        await tui_data.wait_loaded(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert "gputui dashboard" in static_text(app.screen.query_one(Static))
        await pilot.press("escape")
        assert isinstance(app.screen, DashboardScreen)


async def test_alerts_screen_lists_the_nan_alert(folder):
    app = tui_data.make_app(tui_data.nan_loss(folder))
    async with app.run_test(size=SIZE) as pilot:
        screen = await tui_data.wait_loaded(pilot)
        active = list(screen.state.alerts.active.values())
        assert [a.kind for a in active] == ["loss_nonfinite"]
        assert static_text(screen.query_one("#banner", Static)).endswith(
            "loss is nan (step 45, epoch 3) — loss=nan from gputui"
        )
        await pilot.press("a")
        assert isinstance(app.screen, AlertsScreen)
        text = static_text(app.screen.query_one(Static))
        assert "● loss_nonfinite" in text
        assert "loss is nan (step 45, epoch 3)" in text
        assert "[train_started] training started: 10 epochs" in text  # the events part
        await pilot.press("escape")
        assert isinstance(app.screen, DashboardScreen)


async def test_report_view_shows_what_gputui_report_computes(folder):
    """R opens the run's report (the analysis module of ``gputui report``), R or q closes it."""
    from gputui.commands.report import analyse
    from gputui.tui.screens.report import ReportScreen

    files = tui_data.one_node(folder)
    app = tui_data.make_app(files)
    async with app.run_test(size=SIZE) as pilot:
        await tui_data.wait_loaded(pilot)
        await pilot.press("R")
        assert isinstance(app.screen, ReportScreen)
        text = app.screen.query_one(Static).content
        from rich.console import Console

        console = Console(width=110, record=True)
        console.print(text)
        shown = console.export_text()
        cli = analyse(files[0])
        assert f"{cli.epoch_time_s:,.2f} s (first epoch left out)" in shown
        assert f"{cli.util_mean:,.1f} %" in shown
        assert "GPU-node01-00" in shown
        await pilot.press("R")
        assert isinstance(app.screen, DashboardScreen)


async def test_report_view_keeps_up_with_a_live_run(folder, monkeypatch):
    """While R is open, what the dashboard ingests shows in the report at the next redraw."""
    from gputui.stream.records import event
    from gputui.tui.screens import report as report_screen

    monkeypatch.setattr(report_screen, "REFRESH_S", 0.1)
    app = tui_data.make_app(tui_data.one_node(folder))
    async with app.run_test(size=SIZE) as pilot:
        dashboard = await tui_data.wait_loaded(pilot)
        await pilot.press("R")
        assert "oom: CUDA out of memory" not in _report_text(app.screen)
        dashboard.state.ingest([event("outcome", outcome="oom", evidence="CUDA out of memory on rank 1")])
        await tui_data.wait_for(  # the report refreshes every 0.1 s; a starved loop may take longer
            pilot, lambda: "oom: CUDA out of memory on rank 1" in _report_text(app.screen), "the report's oom"
        )


def _report_text(screen) -> str:
    from rich.console import Console

    console = Console(width=110, record=True, file=io.StringIO())
    console.print(screen.query_one("#report-tables", Static).content)
    return console.export_text()


async def test_g_then_enter_collapses_and_expands_a_node(folder):
    app = tui_data.make_app(tui_data.two_nodes(folder))
    async with app.run_test(size=SIZE) as pilot:
        await tui_data.wait_loaded(pilot)
        pane = app.screen.query_one(GpuPane)
        assert pane.render().plain.count("\nnode01 ") == 4  # 8 GPUs fit: nodes start expanded
        await pilot.press("g")
        assert pane.has_focus
        await pilot.press("enter")  # the cursor is on node01's first GPU
        assert pane.collapsed == {"node01"}
        assert not pane.expanded
        text = pane.render().plain
        assert "▸ node01     4×GPU" in text
        assert "\nnode01 " not in text
        assert text.count("\nnode02 ") == 4
        await pilot.press("enter")
        assert pane.expanded == {"node01"}
        assert not pane.collapsed
        assert "▸" not in pane.render().plain
        # down past node01's four GPU rows: the cursor is on node02
        await pilot.press("down", "down", "down", "down", "enter")
        assert pane.collapsed == {"node02"}
        assert "▸ node02     4×GPU" in pane.render().plain


async def test_64_nodes_start_rolled_up_and_enter_expands_one(folder):
    app = tui_data.make_app(tui_data.big_job(folder))
    async with app.run_test(size=SIZE) as pilot:
        await tui_data.wait_loaded(pilot)
        pane = app.screen.query_one(GpuPane)
        lines = pane.render().plain.splitlines()
        assert lines[0].startswith("GPUs 512 ")
        assert all(line.startswith("▸ gpu") for line in lines[1:])
        await pilot.press("g", "enter")
        assert pane.expanded == {"gpu000"}
        lines = pane.render().plain.splitlines()
        assert [line.split()[0] for line in lines[1:10]] == ["gpu000"] * 8 + ["▸"]


async def test_t_cycles_the_chart_metric(folder):
    app = tui_data.make_app(tui_data.one_node(folder))
    async with app.run_test(size=SIZE) as pilot:
        screen = await tui_data.wait_loaded(pilot)
        chart = screen.query_one(MetricChart)
        assert screen.metric == "loss"
        assert chart.metric == "loss"
        await pilot.press("t")
        assert screen.metric == "accuracy"
        assert chart.metric == "accuracy"
        await pilot.press("t")
        assert screen.metric == "loss"
        assert chart.metric == "loss"


async def test_slash_searches_the_log(folder):
    app = tui_data.make_app(tui_data.training_log(folder))
    async with app.run_test(size=SIZE) as pilot:
        screen = await tui_data.wait_loaded(pilot)
        await tui_data.wait_for(pilot, lambda: "train.log" in screen.state.logs, "the log text")
        source = app.source
        log = screen.query_one(LogPane)
        assert log.log_text is not None
        assert log.log_text.view() == tui_data.LOG_LINES
        box = screen.query_one("#search", Input)
        assert not box.display
        await pilot.press("slash")
        assert box.display and box.has_focus
        # typed into the box, not taken as keys: no alerts screen (a), no play (space), no metric (t)
        await pilot.press(*"Epoch 2")
        assert box.value == "Epoch 2"
        assert isinstance(app.screen, DashboardScreen)
        assert not source.playing
        await pilot.press("enter")
        assert not box.display
        assert log.has_focus
        assert log.search == "Epoch 2"
        assert log.match_line == tui_data.LOG_LINES.index("Epoch 2/3")
        assert not log.follow
        assert "/Epoch 2" in str(log.border_title)
        # a second search: the newest matching line wins
        await pilot.press("slash", *"accuracy", "enter")
        assert log.search == "accuracy"
        assert log.match_line == 6
        await pilot.press("n")  # the next older match
        assert log.match_line == 4
        # escape closes the box without searching
        await pilot.press("slash", "x", "escape")
        assert not box.display
        assert log.search == "accuracy"


async def test_replay_left_moves_the_cursor_back_and_space_plays(folder):
    app = tui_data.make_app(tui_data.one_node(folder))
    async with app.run_test(size=SIZE) as pilot:
        screen = await tui_data.wait_loaded(pilot)
        source = app.source
        start, end = source.span
        assert source.at == end
        assert screen.state.cursor is not None and screen.state.cursor["live"]
        records_at_end = screen.state.records
        await pilot.press("left", "left")
        await tui_data.wait_for(
            pilot, lambda: screen.state.clock is not None and screen.state.clock < end, "the cursor to move"
        )
        await tui_data.wait_for(pilot, lambda: screen.state.clock == source.at, "the state at the cursor")
        assert source.at == pytest.approx(end - 2 * source.step_s())
        assert screen.state.records < records_at_end  # the state was rebuilt at the cursor
        assert not screen.state.cursor["live"]
        header = screen.query_one("#header", Static)
        await tui_data.wait_for(pilot, lambda: "⏸ 00:02:55/00:03:02 1×" in static_text(header), "the header")
        assert "live" not in static_text(header)
        await pilot.press("space")
        assert source.playing
        await pilot.press("right_square_bracket")
        assert source.speed == 2
        await tui_data.wait_for(pilot, lambda: screen.state.cursor["playing"], "the header to say playing")
        await tui_data.wait_for(pilot, lambda: " ▶ " in static_text(header) and " 2×" in static_text(header))
        await pilot.press("space")
        assert not source.playing
        await pilot.press("home")
        await tui_data.wait_for(pilot, lambda: source.at == start, "the cursor at the start")
        await pilot.press("end")
        await tui_data.wait_for(pilot, lambda: source.at == end and screen.state.clock == end, "the end")
        assert screen.state.records == records_at_end


async def test_q_quits_and_stops_the_source(folder):
    app = tui_data.make_app(tui_data.one_node(folder))
    async with app.run_test(size=SIZE) as pilot:
        await tui_data.wait_loaded(pilot)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value == 0
    assert app.source.stopping.is_set()


async def test_a_missing_file_is_one_error_line_and_the_app_keeps_running(folder):
    names = tui_data.missing(folder) + tui_data.one_node(folder)
    app = tui_data.make_app(names)
    async with app.run_test(size=SIZE) as pilot:
        screen = await tui_data.wait_loaded(pilot)
        banner = screen.query_one("#banner", Static)
        assert banner.display
        assert static_text(banner) == " missing.jsonl: no such file"
        assert screen.state.records > 0  # the other file is shown
        assert len(screen.state.board.gpus) == 2
        await pilot.press("left")  # a rebuilt state keeps the source's error
        await tui_data.wait_for(pilot, lambda: screen.state.clock == app.source.at < app.source.span[1])
        assert static_text(banner) == " missing.jsonl: no such file"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)


async def test_only_a_missing_file(folder):
    app = tui_data.make_app(tui_data.missing(folder))
    async with app.run_test(size=SIZE) as pilot:
        screen = await tui_data.wait_loaded(pilot)
        assert screen.finished
        assert screen.state.records == 0
        messages = [n.message for n in screen.state.notes]
        assert messages == ["missing.jsonl: no such file", "nothing to replay: missing.jsonl: no such file"]
        assert screen.query_one("#banner", Static).display
        assert "waiting for GPU samples" in screen.query_one(GpuPane).render().plain
        await pilot.press("g")  # still answers keys
        assert screen.query_one(GpuPane).has_focus


async def test_app_exit_without_q_ends_the_source(folder):
    """However the app ends, the replay thread returns (else App.run would wait for it for ever)."""
    app = tui_data.make_app(tui_data.one_node(folder))
    async with app.run_test(size=SIZE) as pilot:
        await tui_data.wait_loaded(pilot)
        app.exit(3)
        await pilot.pause()
    assert app.source.stopping.is_set()
    assert app.source.finished.wait(5)
