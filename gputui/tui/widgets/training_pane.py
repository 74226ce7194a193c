"""The training pane: the chosen metric as a chart, epoch-time bars, images/s, and epoch progress (for a
run that counts steps and no epochs: step progress, the loss and its trend, step time, throughput, MFU;
the text is :mod:`gputui.tui.widgets.training_text`).

The chart is a :class:`~gputui.tui.widgets.throttled_plot.ThrottledPlot` (redrawn only when its data
changed, at most once a second), each series cut to its envelope at the plot's width (per stretch of x,
its minimum and maximum), so a long run's curve is the log's at every stretch.
"""

from __future__ import annotations

import math

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from gputui.analysis.energy import RunEnergy
from gputui.monitor.series import Series, envelope
from gputui.monitor.training import TrainingState
from gputui.tui.axes import step_ticks, tick_room, time_ticks, value_ticks
from gputui.tui.format import needs_layout, number, spark
from gputui.tui.widgets.throttled_plot import ThrottledPlot
from gputui.tui.widgets.training_text import epoch_lines


class MetricChart(ThrottledPlot):
    """One metric against step or epoch, else elapsed time; in the log's order where the log has no clock
    (``clockless``: a replayed log without times or durations)."""

    def draw(
        self, training: TrainingState, name: str | None, *, clockless: bool = False, force: bool = False
    ) -> None:
        series = training.metrics.get(name) if name else None
        key = (name, len(series.by_time) if series else 0, series.last if series else None, clockless)
        if not self.due(key, force=force):
            return
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        if series is None:
            plt.title("no training metrics yet")
        else:
            axis, points = series.x_axis()
            width = max(10, self.size.width - 10)
            xs, ys = envelope(points.times, points.values, width)  # braille: 2 dots per cell
            if axis == "time":
                xs = [x - xs[0] for x in xs]
                axis = "order" if clockless else "elapsed"
            plt.plot(xs, ys, marker="braille")
            _ticks(plt, axis, xs, ys, width, self.size.height)
            if axis == "order":
                plt.xticks([])  # the records' order, not a time: no numbers on the axis
            plt.title(f"{name}" + (f"  ({series.nonfinite} seen)" if series.nonfinite else ""))
            plt.xlabel("in the log's order (no times in it)" if axis == "order" else axis)
        self.refresh()


def _ticks(plt, axis: str, xs: list[float], ys: list[float], width: int, height: int) -> None:
    """Readable ticks (:mod:`gputui.tui.axes`): elapsed ``m:ss``, whole steps/epochs, short values."""
    if xs:
        lo, hi = min(xs), max(xs)
        ticks = (
            time_ticks(lo, hi, tick_room(width, 8))
            if axis == "elapsed"
            else step_ticks(lo, hi, tick_room(width, 7))
        )
        plt.xticks(*ticks)
    finite = [y for y in ys if math.isfinite(y)]
    if finite:
        plt.yticks(*value_ticks(min(finite), max(finite), max(2, (height - 4) // 3)))


def spark_line(name: str, series: Series | None, top: float | None = None, width: int = 24) -> str:
    """``name ▁▂▄▆█ last``: a one-line chart of the series' last ``width`` points (no braille), scaled to
    ``top`` or to the points' own range. What the low-bandwidth dashboard shows instead of a chart."""
    values = [v for v in (series.tail(width) if series is not None else []) if math.isfinite(v)]
    if not values:
        return f"{name} –"
    lo = 0.0 if top is not None else min(values)
    span = (top if top is not None else max(values)) - lo
    scaled = [100.0 * (v - lo) / span if span > 0 else 50.0 for v in values]
    return f"{name} {spark(scaled, len(scaled))} {number(values[-1])}"


class TrainingPane(Vertical):
    """The metric chart (or, with ``low_bandwidth``, a one-line sparkline) over the epoch lines."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.low_bandwidth = False
        self._shown: dict[str, object] = {}  # each line's last content

    def compose(self) -> ComposeResult:
        yield MetricChart(id="metric-chart")
        yield Static(id="metric-spark")
        yield Static(id="epoch-lines")

    def draw_chart(
        self, training: TrainingState, metric: str | None, *, clockless: bool = False, force: bool = False
    ) -> None:
        if not self.low_bandwidth:
            self.query_one(MetricChart).draw(training, metric, clockless=clockless, force=force)
            return
        series = training.metrics.get(metric) if metric else None
        self._update(
            "#metric-spark", spark_line(metric or "no metric yet", series.x_axis()[1] if series else None)
        )

    def show_epochs(self, training: TrainingState, energy: RunEnergy | None = None) -> None:
        self._update("#epoch-lines", epoch_lines(training, self.size.width, energy))

    def _update(self, selector: str, content: object) -> None:
        """Repaint a line only when its content changed."""
        old = self._shown.get(selector)
        if old != content:
            self._shown[selector] = content
            layout = old is None or needs_layout(old, content)  # same number of lines: no layout pass
            self.query_one(selector, Static).update(content, layout=layout)  # type: ignore[arg-type]
