"""The dashboard's layout and charts (issue 25, item 3): panes sized by their content, the node × time
heatmap, readable axes, and the low-bandwidth mode without braille charts.

SVG snapshots on replayed record files (update with ``pytest tests/tui/test_dashboard_layout.py
--snapshot-update`` and look at the SVGs), Pilot checks, and the pure layout arithmetic.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import tui_data
from rich.style import Style
from rich.text import Text
from test_dashboard_snapshots import folder, snap  # noqa: F401 (the fixture)
from textual.widgets import Static

from gputui.config import Config
from gputui.monitor.series import Series
from gputui.sources.replay import ReplaySource
from gputui.stream.records import Record
from gputui.tui.app import GputuiApp
from gputui.tui.format import needs_layout
from gputui.tui.screens.dashboard import LOW_BANDWIDTH_REFRESH_S
from gputui.tui.screens.dashboard_layout import LeftColumn, left_column
from gputui.tui.widgets.heatmap import Thresholds, heat_rows, pair_label

BIG = (200, 60)
STRAGGLER = "node03"


def straggler_job(where: Path) -> list[str]:
    """4 nodes × 4 A100s for 180 s; node03's GPUs drop to ~30 % from +60 s to +150 s (a straggler)."""
    records: list[Record] = [*tui_data._training(epochs_done=2)]
    for tick in range(37):
        t = tui_data.T0 + tick * 5.0
        for n, host in enumerate(("node01", "node02", STRAGGLER, "node04")):
            for index in range(4):
                util = tui_data._util(index + 4 * n, tick)
                if host == STRAGGLER and 60 <= tick * 5.0 < 150:
                    util = 28.0 + index
                records.append(tui_data._nvidia(host, index, t, util))
    tui_data.write_records(where / "straggler.jsonl", records)
    return ["straggler.jsonl"]


# --------------------------------------------------------------------------- snapshots


def test_two_gpus_at_200x60_pane_sized_by_content(snap_compare, folder):  # noqa: F811
    """A 2-GPU job in 200 × 60: the GPU pane is 5 rows (summary + 2 GPUs + border), the time chart gets
    the rest, with m:ss ticks, integer steps and short loss ticks."""
    assert snap(snap_compare, folder, tui_data.one_node, size=BIG)


def test_four_nodes_straggler_heatmap(snap_compare, folder):  # noqa: F811
    """4 nodes: the heatmap under the time chart shows node03's dip as a yellow stripe."""
    assert snap(snap_compare, folder, straggler_job, size=(140, 40))


# --------------------------------------------------------------------------- Pilot checks


async def test_gpu_pane_height_follows_its_gpus(folder):  # noqa: F811
    app = tui_data.make_app(tui_data.one_node(folder))
    try:
        async with app.run_test(size=BIG) as pilot:
            await tui_data.wait_loaded(pilot)
            await pilot.pause()
            screen = tui_data.dashboard(app)
            assert screen.query_one("#gpus").size.height == 3  # 1 summary + 2 GPU rows (inside the border)
            assert screen.query_one("#timeline").outer_size.height > 25
            assert not screen.query_one("#heatmap").display  # one node: no heatmap
    finally:
        app.source.stop()


async def test_an_80x24_terminal_shows_a_time_chart_below_two_gpus_and_none_below_eight(folder):  # noqa: F811
    """Below 30 rows there was no time chart at all, and a 2-GPU job's pane kept 8 empty rows."""
    for job, timeline in ((tui_data.one_node, True), (tui_data.two_nodes, False)):
        app = tui_data.make_app(job(folder))
        try:
            async with app.run_test(size=(80, 24)) as pilot:
                screen = await tui_data.wait_loaded(pilot)
                await pilot.pause()
                chart = screen.query_one("#timeline")
                assert chart.display is timeline and not screen.query_one("#heatmap").display
                if timeline:
                    gpus = screen.query_one("#gpus")
                    assert gpus.size.height == 3 and chart.outer_size.height >= 8
                    assert _braille(chart.text())  # drawn in its rows
                else:
                    assert (
                        screen.query_one("#gpus").outer_size.height == screen.query_one("#left").size.height
                    )
        finally:
            app.source.stop()


async def test_heatmap_rows_show_the_straggler(folder):  # noqa: F811
    app = tui_data.make_app(straggler_job(folder))
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            await tui_data.wait_loaded(pilot)
            await pilot.pause()
            heatmap = tui_data.dashboard(app).query_one("#heatmap")
            assert heatmap.display and heatmap.size.height == 2  # 4 nodes, two per row
            text = heatmap.render()
            assert text.plain.splitlines()[0].startswith("node01 node02")
            assert text.plain.splitlines()[1].startswith("node03 node04")
            width = len(text.plain.splitlines()[0]) - 15  # after the label
            rows = _cells(text)
            assert {c.color.name for c in rows[:width]} == {"green"}  # node01 (upper) and node02 (lower)
            assert {c.bgcolor.name for c in rows[:width]} == {"green"}
            node03 = [c.color.name for c in rows[width:]]
            assert node03[0] == "green" and "yellow" in node03  # its dip under UTIL_GOOD_PCT: a stripe
            assert {c.bgcolor.name for c in rows[width:]} == {"green"}  # node04
    finally:
        app.source.stop()


async def test_unchanged_text_is_not_repainted(folder):  # noqa: F811
    """refresh_view on an unchanged state calls no Static.update (an update repaints even the same text)."""
    app = tui_data.make_app(tui_data.lost_node(folder))  # a banner too
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            screen = await tui_data.wait_loaded(pilot)
            screen.refresh_view()
            updates: list[str] = []
            for selector in ("#header", "#banner", "#epoch-lines"):
                widget = screen.query_one(selector, Static)
                real = widget.update
                widget.update = lambda content, real=real, name=selector: (
                    updates.append(name) or real(content)
                )
            for _ in range(3):
                screen.refresh_view()
                await pilot.pause()
            assert screen.query_one("#banner").display
            assert updates == []
    finally:
        app.source.stop()


def _cells(text: Text) -> list[Style]:
    """The heatmap's cell styles in order (the labels' plain "bold" left out)."""
    return [span.style for span in text.spans if isinstance(span.style, Style)]


def _braille(text: str) -> list[str]:
    return [c for c in text if 0x2800 <= ord(c) <= 0x28FF]


async def test_low_bandwidth_draws_no_braille_and_refreshes_slower(folder):  # noqa: F811
    config = Config()
    config = replace(config, dashboard=replace(config.dashboard, low_bandwidth=True))
    app = GputuiApp(ReplaySource(tui_data.one_node(folder), config.alerts), config)
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            screen = await tui_data.wait_loaded(pilot)
            await pilot.pause()
            shown = app.export_screenshot()
            assert not _braille(shown)
            assert not screen.query_one("#timeline").display
            assert not screen.query_one("#metric-chart").display
            assert "util %" in str(screen.query_one("#util-spark").render())
            assert "loss" in str(screen.query_one("#metric-spark").render())
            intervals = [t._interval for t in screen._timers if t._callback == screen.refresh_view]
            assert intervals and min(intervals) >= LOW_BANDWIDTH_REFRESH_S
    finally:
        app.source.stop()


async def test_normal_mode_draws_braille_charts(folder):  # noqa: F811
    """The counterpart: without low_bandwidth the same screen has braille charts."""
    app = tui_data.make_app(tui_data.one_node(folder))
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            await tui_data.wait_loaded(pilot)
            assert _braille(app.export_screenshot())
    finally:
        app.source.stop()


# --------------------------------------------------------------------------- pure parts


def test_left_column_sizes():
    two_gpus = left_column(37, gpus=2, nodes=1)
    assert (two_gpus.gpus, two_gpus.heatmap) == (5, 0)
    many = left_column(37, gpus=512, nodes=64)
    assert (
        many.gpus == 16
    )  # bounded: the time chart and the heatmap keep their rows: the pane scrolls or rolls nodes up
    assert many.heatmap == 11 and many.heatmap_nodes == 18  # 9 rows of two nodes (+ border)
    assert 37 - many.gpus - many.heatmap == 10  # the time chart keeps its rows
    four = left_column(20, gpus=16, nodes=4)
    assert four.heatmap == 4 and four.heatmap_nodes == 4 and four.gpus == 6  # 20 - 10 for the chart - 4
    rolled = left_column(25, gpus=16, nodes=4)  # 16 GPU rows do not fit: the pane shows 4 node rows
    assert rolled.gpus == 7 and rolled.heatmap == 4
    assert left_column(20, gpus=2, nodes=4, timeline=False) == LeftColumn(
        20, 0, 0, timeline=False
    )  # slow link
    assert left_column(10, gpus=2, nodes=0).gpus == 3  # waiting line + border
    assert left_column(21, gpus=8, nodes=2) == LeftColumn(11, 0, 0)  # two nodes: every GPU row, no heatmap


def test_a_small_terminal_keeps_a_time_chart_in_the_rows_the_gpus_leave():
    assert left_column(13, gpus=2, nodes=1, small=True) == LeftColumn(5, 0, 0)  # 80x24: 8 rows for the chart
    assert left_column(13, gpus=0, nodes=0, small=True) == LeftColumn(3, 0, 0)  # waiting: one line
    assert left_column(13, gpus=4, nodes=1, small=True) == LeftColumn(13, 0, 0, timeline=False)  # 6 left
    assert left_column(12, gpus=2, nodes=4, small=True) == LeftColumn(12, 0, 0, timeline=False)  # 7 left
    assert left_column(21, gpus=8, nodes=2, small=True) == LeftColumn(11, 0, 0)  # no heatmap when small


def test_heat_rows_pair_nodes_and_colour_by_threshold():
    lines = {h: Series(64) for h in ("a1", "a2", "a3")}
    for t in range(10):
        lines["a1"].append(t, 95.0)
        lines["a2"].append(t, 40.0 if t >= 5 else 95.0)
        if t % 3 == 0:  # sampled every 3 s: the cells in between keep the last value
            lines["a3"].append(t, 10.0)
    text: Text = heat_rows(lines, Thresholds(60.0, 20.0), 10, 0.0, 9.0)
    rows = text.plain.splitlines()
    assert rows[0].startswith("a1 a2") and rows[1].startswith("a3")
    cells = _cells(text)
    assert [c.color.name for c in cells[:10]] == ["green"] * 10
    assert [c.bgcolor.name for c in cells[:10]] == ["green"] * 5 + ["yellow"] * 5
    assert [c.color.name for c in cells[10:]] == ["red"] * 10  # a3 filled between its samples


def test_pair_label():
    assert pair_label("node01", "node02").rstrip() == "node01 node02"
    assert pair_label("nid001234", "nid001235").rstrip() == "nid001234/35"
    assert pair_label("alpha-long-name", "beta").rstrip() == "alpha-long-nam"
    assert pair_label("solo", None).rstrip() == "solo"


async def test_a_changed_line_of_the_same_height_needs_no_layout_pass(folder):  # noqa: F811
    """The header's clock ticks every second: its update must not lay the whole screen out again (it did:
    a layout pass per refresh was a third of the dashboard's CPU); a text that gains a line does."""
    app = tui_data.make_app(tui_data.lost_node(folder))
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            screen = await tui_data.wait_loaded(pilot)
            header = screen.query_one("#header", Static)
            layouts: list[bool] = []
            real = header.update
            header.update = lambda content, layout=True: (
                layouts.append(layout) or real(content, layout=layout)
            )
            screen._update("#header", Text("gputui  job 1  RUNNING 00:00:01"))
            screen._update("#header", Text("gputui  job 1  RUNNING 00:00:02"))
            screen._update("#header", Text("gputui  job 1\nRUNNING 00:00:03"))
            assert layouts == [False, False, True]
    finally:
        app.source.stop()


def test_needs_layout_compares_line_counts() -> None:
    assert not needs_layout(Text("a"), Text("b"))
    assert not needs_layout("a\nb", Text("c\nd"))
    assert needs_layout(Text("a"), Text("a\nb"))
    assert needs_layout(None, Text("a"))
