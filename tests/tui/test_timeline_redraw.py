"""The util/step-time timeline (gputui/tui/widgets/timeline.py): drawn again only when what it shows
changed, on a time axis that stands still while the data grows inside its last tick step, each dot column
the envelope of its points; and a title that says what is true when a source has no GPU samples."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from gputui.monitor.series import Series
from gputui.tui.axes import time_axis_end, time_ticks
from gputui.tui.braille import column_spans
from gputui.tui.widgets import timeline as timeline_module
from gputui.tui.widgets.timeline import Timeline, timeline_picture

T0 = 1_800_000_000.0


def series(points: list[tuple[float, float]]) -> Series:
    out = Series(1024)
    for t, v in points:
        out.append(T0 + t, v)
    return out


class ChartApp(App):
    def compose(self) -> ComposeResult:
        yield Timeline(id="timeline")


class Redraws:
    """Counts the timeline's repaints (``refresh`` calls) and lifts the once-a-second limit."""

    def __init__(self, chart: Timeline, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        monkeypatch.setattr(timeline_module, "MIN_REDRAW_S", 0.0)
        original = chart.refresh

        def counting(*args, **kwargs):
            self.count += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(chart, "refresh", counting)


async def test_a_point_that_changes_nothing_drawn_is_not_drawn_again(monkeypatch):
    """A minute of data on a 100-cell chart: the axis ends at 1:00 (a tick), a dot column is 60/190 s.
    A new point inside the last column's min..max changes no dot: no repaint. One above it does."""
    util = series([(t, 50.0 + (t % 7)) for t in range(0, 56)])  # up to 0:55, the last value 56 (55 % 7 = 6)
    util.append(T0 + 55.1, 53.0)  # the same column as 0:55; together: 53..56
    step = Series(64)
    async with ChartApp().run_test(size=(100, 20)) as pilot:
        chart = pilot.app.query_one(Timeline)
        redraws = Redraws(chart, monkeypatch)
        chart.draw(util, step)
        await pilot.pause()
        assert redraws.count >= 1  # the plot, and the title that was set
        redraws.count = 0
        before = chart.text()
        assert "1:00" in before and "1:05" not in before  # the axis' end: 0:55 rounded up to its tick
        util.append(T0 + 55.15, 55.0)  # inside 53..56, in the same column: nothing drawn changes
        chart.draw(util, step)
        chart.draw(util, step)
        assert redraws.count == 0 and chart.text() == before
        util.append(T0 + 55.2, 99.0)  # a spike in that column: its maximum changes
        chart.draw(util, step)
        assert redraws.count == 1 and chart.text() != before


async def test_a_new_second_of_a_growing_run_is_drawn(monkeypatch):
    """The axis stands still (0:41 and 0:42 both end at 0:45 or 0:50), yet a point in a new column shows."""
    util = series([(t, 40.0) for t in range(0, 42)])
    step = Series(64)
    async with ChartApp().run_test(size=(100, 20)) as pilot:
        chart = pilot.app.query_one(Timeline)
        redraws = Redraws(chart, monkeypatch)
        chart.draw(util, step)
        redraws.count = 0
        before = chart.text()
        util.append(T0 + 42, 40.0)
        chart.draw(util, step)
        assert redraws.count == 1 and chart.text() != before
        assert before.splitlines()[-1] == chart.text().splitlines()[-1]  # same x ticks: the axis stood still


def test_the_axis_ends_on_a_tick_and_stays_until_the_data_crosses_it():
    for span in (7.0, 41.0, 59.9, 61.0, 599.0, 3601.0, 86_400 * 3.2):
        end = time_axis_end(span, 6)
        positions, _ = time_ticks(0.0, end, 6)
        assert span <= end and positions[-1] == end and len(positions) <= 7
    assert time_axis_end(41.0, 6) == time_axis_end(49.0, 6) == 50.0
    assert time_axis_end(50.5, 6) == 60.0


def test_each_dot_column_keeps_the_minimum_and_maximum_of_its_points():
    """10,000 points on 20 columns: the dip at 3,000 and the spike at 7,000 stay (a mean would hide them)."""
    times = [float(i) for i in range(10_000)]
    values = [50.0] * 10_000
    values[3000], values[7000] = 1.0, 99.0
    spans = column_spans(times, values, 0.0, 9999.0, 20)
    assert spans[6] == (1.0, 50.0) and spans[14] == (50.0, 99.0)
    assert all(s == (50.0, 50.0) for i, s in enumerate(spans) if i not in (6, 14))


def test_a_source_without_gpu_samples_says_so_once_it_ended():
    """A replayed log with step times but no GPU records: 'no GPU samples' once the source ended; a live
    source with nothing yet is still waiting; one with nothing at all that ended says that."""
    step = series([(t * 3.0, 0.3) for t in range(20)])
    empty = Series(64)
    _, live = timeline_picture(empty, step, 100, 20, clockless=False, ended=False)
    _, ended = timeline_picture(empty, step, 100, 20, clockless=False, ended=True)
    assert "no GPU samples" not in live and live.startswith("s/step")
    assert ended.startswith("no GPU samples in this source · s/step")
    _, waiting = timeline_picture(empty, Series(64), 100, 20, clockless=False, ended=False)
    _, nothing = timeline_picture(empty, Series(64), 100, 20, clockless=False, ended=True)
    assert waiting.endswith("waiting for data")
    assert nothing.endswith("no GPU samples or step times in this source")
    _, clockless = timeline_picture(empty, step, 100, 20, clockless=True, ended=True)
    assert clockless.endswith("no times in the log")


async def test_the_title_changes_when_the_source_ends_with_nothing_drawn():
    async with ChartApp().run_test(size=(100, 20)) as pilot:
        chart = pilot.app.query_one(Timeline)
        chart.draw(Series(64), Series(64), force=True)
        assert str(chart.border_title).endswith("waiting for data")
        chart.draw(Series(64), Series(64), ended=True, force=True)
        assert str(chart.border_title).endswith("no GPU samples or step times in this source")


async def test_a_resized_timeline_is_drawn_again_at_once_at_its_new_size():
    """Within the once-a-second limit a resize still redraws: the picture's columns are the new width's
    (before, the chart kept its old strips until a later refresh asked again)."""
    util = series([(t, 40.0 + (t % 5)) for t in range(0, 56)])
    async with ChartApp().run_test(size=(100, 20)) as pilot:
        chart = pilot.app.query_one(Timeline)
        chart.draw(util, Series(64))
        await pilot.pause()
        wide = chart.text().splitlines()
        await pilot.resize_terminal(70, 20)
        await pilot.pause()
        await pilot.pause()
        narrow = chart.text().splitlines()
        assert narrow != wide
        assert max(map(len, narrow)) <= chart.size.width < max(map(len, wide))
