"""The dashboard replaying a log without printed times (issue 25, "true text"): the header's elapsed time
and the charts' time axes are the log's own step times (a nanoGPT log of 12,001 steps at 312.5 ms:
1:02:30, not 20 hours); a log that prints no times or durations shows no elapsed time and no time axis."""

from __future__ import annotations

import re

import step_logs
import tui_data
from test_dashboard_snapshots import folder  # noqa: F401 (the fixture)

from gputui.tui.widgets.braille_chart import BrailleChart
from gputui.tui.widgets.header import header_text
from gputui.tui.widgets.timeline import Timeline
from gputui.tui.widgets.training_pane import MetricChart

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def drawn(plot) -> str:
    """The plot as the terminal shows it (colours left out)."""
    return plot.text() if isinstance(plot, BrailleChart) else ANSI.sub("", plot.plt.build())


async def test_a_nanogpt_log_replays_over_its_own_hour(folder):  # noqa: F811
    step_logs.nanogpt(folder / "nano.log")
    app = tui_data.make_app(["nano.log"])
    try:
        async with app.run_test(size=(200, 60)) as pilot:
            screen = await tui_data.wait_loaded(pilot)
            assert " RECORDED 01:02:30 " in header_text(screen.state).plain
            timeline = screen.query_one(Timeline)
            axis = drawn(timeline)
            assert "1:00:00" in axis and "2:00:00" not in axis  # ends at 1:02:30, not at 20:00:05
            assert str(timeline.border_title).endswith("elapsed")
    finally:
        app.source.stop()


async def test_a_log_without_times_shows_no_elapsed_time_anywhere(folder):  # noqa: F811
    lines = [f"{{'loss': {1 - i / 100:.2f}, 'learning_rate': 1e-05}}" for i in range(50)]  # HF, no step
    (folder / "plain.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    app = tui_data.make_app(["plain.log"])
    try:
        async with app.run_test(size=(200, 60)) as pilot:
            screen = await tui_data.wait_loaded(pilot)
            header = header_text(screen.state).plain
            assert " RECORDED · no clock in the log " in header and not re.search(r"\d:\d\d", header)
            assert str(screen.query_one(Timeline).border_title).endswith("no times in the log")
            chart = drawn(screen.query_one(MetricChart))
            assert "in the log's order (no times in it)" in chart and not re.search(r"\d:\d\d", chart)
    finally:
        app.source.stop()
