"""The training pane's metric chart in braille (gputui/tui/widgets/metric_chart.py): a long run keeps its
spikes and dips, step ticks are whole numbers, a clockless log has no x numbers and says so, and a point
that changes nothing drawn is not drawn again."""

from __future__ import annotations

import re

import pytest
from textual.app import App, ComposeResult

from gputui.monitor.training import MetricSeries, TrainingState
from gputui.tui.widgets import metric_chart as metric_chart_module
from gputui.tui.widgets.metric_chart import ORDER, MetricChart, metric_picture

T0 = 1_800_000_000.0
WHOLE = re.compile(r"^\d{1,3}(,\d{3})*$")


def training_with(steps: int, value=lambda step: 2.0, per_step_s: float = 0.3) -> TrainingState:
    """A run that logged ``loss`` at steps 1..``steps``, one every ``per_step_s`` seconds."""
    training = TrainingState()
    series = training.metrics["loss"] = MetricSeries("loss")
    for step in range(1, steps + 1):
        add(series, step, value(step), per_step_s)
    return training


def add(series: MetricSeries, step: int, value: float, per_step_s: float = 0.3) -> None:
    series.by_step.append(step, value)
    series.by_time.append(T0 + step * per_step_s, value)
    series.last = value


class ChartApp(App):
    def compose(self) -> ComposeResult:
        yield MetricChart(id="metric-chart")


def column(picture, x: float) -> int:
    """The dot column that x falls in."""
    dots = len(picture.curves[0].spans)
    return min(dots - 1, int((x - picture.x.lo) / (picture.x.hi - picture.x.lo) * dots))


def test_a_20000_step_run_keeps_a_spike_and_a_dip_in_their_columns():
    """20,000 steps (the series thins its older part) on ~180 dot columns: each column is ~110 steps,
    and the one spike and the one dip stay as their column's maximum and minimum (a mean would hide them)."""
    values = {5_000: 9.0, 15_000: -1.0}
    training = training_with(20_000, lambda step: values.get(step, 2.0 - step / 20_000))
    picture = metric_picture(training.metrics["loss"], 100, 24, clockless=False)
    spans = picture.curves[0].spans
    assert spans[column(picture, 5_000)][1] == 9.0
    assert spans[column(picture, 15_000)][0] == -1.0
    assert max(s[1] for s in spans if s) == 9.0 and min(s[0] for s in spans if s) == -1.0
    assert picture.left.lo <= -1.0 and picture.left.hi >= 9.0  # both inside the value axis


def test_step_and_epoch_ticks_are_whole_numbers():
    for steps in (2, 7, 33, 20_000):
        picture = metric_picture(training_with(steps).metrics["loss"], 60, 20, clockless=False)
        assert picture.x_name == "step" and picture.x.ticks
        assert all(t == int(t) for t in picture.x.ticks)
        assert all(WHOLE.match(label) for label in picture.x.labels)
        assert picture.x.lo <= 1 and picture.x.hi >= steps
    series = MetricSeries("val_loss")  # fractional epoch positions: 0.5 .. 3.7
    for i, epoch in enumerate((0.5, 1.2, 2.9, 3.7)):
        series.by_epoch.append(epoch, 1.0 - i / 10)
    picture = metric_picture(series, 60, 20, clockless=False)
    assert picture.x_name == "epoch" and picture.x.labels
    assert all(WHOLE.match(label) for label in picture.x.labels)


async def test_a_clockless_log_has_no_x_numbers_and_says_so():
    training = TrainingState()
    series = training.metrics["loss"] = MetricSeries("loss")
    for i in range(50):  # no steps, no epochs: against the records' (invented) times
        series.by_time.append(T0 + i, 1 - i / 100)
        series.last = 1 - i / 100
    async with ChartApp().run_test(size=(80, 20)) as pilot:
        chart = pilot.app.query_one(MetricChart)
        chart.draw(training, "loss", clockless=True, force=True)
        *_, axis_line, x_labels, x_name = chart.text().splitlines()
        assert x_name.strip() == ORDER
        assert "┬" not in axis_line and not x_labels.strip()  # no ticks, no numbers
        chart.draw(training, "loss", clockless=False, force=True)  # the same records with a clock
        *_, x_labels, x_name = chart.text().splitlines()
        assert x_name.strip() == "elapsed" and re.search(r"\d:\d\d", x_labels)


async def test_the_title_says_what_is_shown():
    training = training_with(10)
    training.metrics["loss"].nonfinite = "nan"
    async with ChartApp().run_test(size=(80, 20)) as pilot:
        chart = pilot.app.query_one(MetricChart)
        chart.draw(TrainingState(), None, force=True)
        assert chart.text().splitlines()[0].strip() == "no training metrics yet"
        chart.draw(training, "loss", force=True)
        assert chart.text().splitlines()[0].strip() == "loss  (nan seen)"
        assert chart.metric == "loss"


async def test_a_point_that_changes_nothing_drawn_is_not_drawn_again(monkeypatch: pytest.MonkeyPatch):
    """Steps alternating 1.0 / 1.5: every column spans 1.0..1.5. A new step inside its column's span
    changes no dot: no repaint, even when asked twice. A spike in it does."""
    monkeypatch.setattr(metric_chart_module, "MIN_REDRAW_S", 0.0)
    training = training_with(900, lambda step: 1.0 + 0.5 * (step % 2))
    series = training.metrics["loss"]
    async with ChartApp().run_test(size=(80, 20)) as pilot:
        chart = pilot.app.query_one(MetricChart)
        chart.draw(training, "loss")
        picture = metric_picture(series, 80, 20, clockless=False)
        step = next(s for s in range(901, 999) if column(picture, s) == column(picture, s - 2))
        for s in range(901, step):
            add(series, s, 1.0 + 0.5 * (s % 2))
        chart.draw(training, "loss")
        await pilot.pause()
        repaints = []
        monkeypatch.setattr(chart, "refresh", lambda *a, **k: repaints.append(1))
        before = chart.text()
        add(series, step, 1.25)  # inside 1.0..1.5 of the column the two steps before it drew
        chart.draw(training, "loss")
        chart.draw(training, "loss")
        assert repaints == [] and chart.text() == before
        add(series, step + 1, 1.6)  # a spike: the value axis and the column change
        chart.draw(training, "loss")
        assert repaints == [1] and chart.text() != before
