"""The training pane: the chosen metric as a chart, epoch-time bars, images/s, and epoch progress (for a
run that counts steps and no epochs: step progress, the loss and its trend, step time, throughput, MFU;
the text is :mod:`gputui.tui.widgets.training_text`).

The chart is a :class:`~gputui.tui.widgets.throttled_plot.ThrottledPlot` (redrawn only when its data
changed, at most once a second), each series cut to its envelope at the plot's width (per stretch of x,
its minimum and maximum), so a long run's curve is the log's at every stretch.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from gputui.monitor.series import envelope
from gputui.monitor.training import TrainingState
from gputui.tui.widgets.throttled_plot import ThrottledPlot
from gputui.tui.widgets.training_text import epoch_lines


class MetricChart(ThrottledPlot):
    """One metric against step or epoch."""

    def draw(self, training: TrainingState, name: str | None, *, force: bool = False) -> None:
        series = training.metrics.get(name) if name else None
        if not self.due(
            (name, len(series.by_time) if series else 0, series.last if series else None), force=force
        ):
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
                xs = [(x - xs[0]) / 60 for x in xs]
                axis = "minutes"
            plt.plot(xs, ys, marker="braille")
            plt.title(f"{name}" + (f"  ({series.nonfinite} seen)" if series.nonfinite else ""))
            plt.xlabel(axis)
        self.refresh()


class TrainingPane(Vertical):
    def compose(self) -> ComposeResult:
        yield MetricChart(id="metric-chart")
        yield Static(id="epoch-lines")

    def draw_chart(self, training: TrainingState, metric: str | None, *, force: bool = False) -> None:
        self.query_one(MetricChart).draw(training, metric, force=force)

    def show_epochs(self, training: TrainingState) -> None:
        self.query_one("#epoch-lines", Static).update(epoch_lines(training, self.size.width))
