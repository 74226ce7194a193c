"""The training pane's chart: one metric against step or epoch, else elapsed time, in braille.

The curve is the metric's envelope (:mod:`gputui.tui.braille`): per dot column, the minimum and maximum of
the points in it, so a 20,000-step run's curve keeps every spike and dip. Ticks come from
:mod:`gputui.tui.axes`: whole steps or epochs, ``m:ss`` elapsed time, values with the decimals their
spacing needs. A replayed log without times or durations (``clockless``) is drawn in the log's order, with
no numbers on that axis (its records have no time to put there).

The x axis ends at the data's end rounded up to its tick step, so while a run grows inside that step the
columns already drawn stand still; the chart is drawn again only when what it shows changed (a column's
minimum or maximum, a new column, the value axis, the title), at most once a second; at once when its size
changed.
"""

from __future__ import annotations

import math

from gputui.monitor.training import MetricSeries, TrainingState
from gputui.tui.axes import FLAT, nice_step, step_ticks, tick_room, time_axis_end, time_ticks, value_ticks
from gputui.tui.braille import column_spans
from gputui.tui.widgets.braille_chart import Axis, BrailleChart, Curve, Picture, left_width, plot_columns

MIN_REDRAW_S = 1.0
COLOR = "cyan"
ORDER = "in the log's order (no times in it)"
EMPTY = Picture((), Axis(0.0, 1.0), None, Axis(0.0, 1.0), title="no training metrics yet")


class MetricChart(BrailleChart):
    """One metric against step or epoch, else elapsed time; in the log's order where the log has no clock
    (``clockless``: a replayed log without times or durations)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.metric: str | None = None  # the metric the chart shows

    def draw(
        self, training: TrainingState, name: str | None, *, clockless: bool = False, force: bool = False
    ) -> None:
        """Show metric ``name`` of ``training``; ``force`` lifts the once-a-second
        limit, never the "only when what is drawn changed" rule."""
        series = training.metrics.get(name) if name else None
        picture = metric_picture(series, self.size.width, self.size.height, clockless)
        again = lambda: self.draw(training, name, clockless=clockless, force=True)  # noqa: E731
        if self.offer(picture, again, every=MIN_REDRAW_S, force=force):
            self.metric = name if series is not None else None


def metric_picture(series: MetricSeries | None, width: int, height: int, clockless: bool) -> Picture:
    """What the chart shows of ``series`` at ``width`` × ``height`` cells."""
    if series is None:
        return EMPTY
    axis, points = series.x_axis()
    title = series.name + (f"  ({series.nonfinite} seen)" if series.nonfinite else "")
    times, values = points.times, points.values
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return Picture((), Axis(0.0, 1.0), None, Axis(0.0, 1.0), title=title)
    y = _value_axis(min(finite), max(finite), max(2, (height - 6) // 3))
    columns = plot_columns(width, False, left_width(y))
    room = tick_room(columns, 8 if axis == "time" else 7)
    if axis == "time":
        start, x_name = times[0], ORDER if clockless else "elapsed"
        end = max(times[-1] - start, 1e-9) if clockless else time_axis_end(times[-1] - start, room)
        ticks = ((), ()) if clockless else tuple(map(tuple, time_ticks(0.0, end, room)))
        x = Axis(0.0, end, *ticks)
    else:
        start, x_name, lo = 0.0, axis, min(times)
        end = step_axis_end(lo, max(times), room)
        x = Axis(lo, end, *map(tuple, step_ticks(lo, end, room)))
    spans = column_spans(times, values, start + x.lo, start + x.hi, 2 * columns)
    return Picture((Curve(spans, COLOR),), y, None, x, title=title, x_name=x_name)


def step_axis_end(lo: float, hi: float, most: int) -> float:
    """Where a step (or epoch) axis from ``lo`` showing up to ``hi`` ends: ``hi`` rounded up to a whole
    tick step (past ``lo``), so the axis stays put while the run grows inside that step."""
    step = max(1.0, nice_step(hi - lo, most))
    return step * max(math.ceil(hi / step - 1e-9), math.floor(lo / step) + 1)


def _value_axis(lo: float, hi: float, most: int) -> Axis:
    """The value axis over ``lo``..``hi`` with its ticks; a flat series gets room around its value, so
    it is drawn across the middle at its one tick."""
    ticks = tuple(map(tuple, value_ticks(lo, hi, most)))
    if hi - lo <= FLAT * max(abs(lo), abs(hi)):
        pad = max(FLAT * abs(hi), 1e-9)
        lo, hi = (lo + hi) / 2 - pad, (lo + hi) / 2 + pad
    return Axis(lo, hi, *ticks)
