"""The training pane: the chosen metric as a chart, epoch-time bars, images/s, and epoch progress (for a
run that counts steps and no epochs: step progress, the loss and its trend, step time, throughput, MFU;
the text is :mod:`gputui.tui.widgets.training_text`).

The chart is a :class:`~gputui.tui.widgets.metric_chart.MetricChart` (braille, drawn again only when what
it shows changed, at most once a second; each dot column the envelope of its points).
"""

from __future__ import annotations

import math

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from gputui.analysis.energy import RunEnergy
from gputui.monitor.series import Series
from gputui.monitor.training import TrainingState
from gputui.tui.format import needs_layout, number, spark
from gputui.tui.widgets.metric_chart import MetricChart
from gputui.tui.widgets.training_text import epoch_lines


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
