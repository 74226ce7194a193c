"""GPU utilisation and step time on one time axis: a stall shows as the two lines parting ways.

GPUs idle while the step time rises point at input or communication; GPUs busy with no step progress
at a hang in a kernel or a collective. The job-wide mean utilisation (left axis, 0-100 %) and the seconds
per step (right axis, from 0) are drawn over the job's elapsed time (``m:ss`` / ``h:mm:ss`` ticks from
:mod:`gputui.tui.axes`), thinned to the plot's width, redrawn at most once a second and only when they
changed. A replayed log that prints no times or durations (``clockless``) has no time axis: the
timeline says so instead of drawing its records over an invented one.
"""

from __future__ import annotations

from gputui.monitor.series import Series
from gputui.tui.axes import tick_room, time_ticks, value_ticks
from gputui.tui.widgets.throttled_plot import ThrottledPlot

AXES_WIDTH = 12  # both y axes' labels and the frame: the plot's data area is this much narrower


class Timeline(ThrottledPlot):
    def draw(self, util: Series, step_time: Series, *, clockless: bool = False, force: bool = False) -> None:
        if not self.due((len(util), util.last, len(step_time), step_time.last, clockless), force=force):
            return
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        times = [t for s in (util, step_time) for t in s.times[:1] + s.times[-1:]]
        if clockless or not times:
            self._title(
                f"GPU util % and step time: {'no times in the log' if clockless else 'waiting for data'}"
            )
            self.refresh()
            return
        start, end = min(times), max(times)
        width = max(10, self.size.width - AXES_WIDTH)
        titles = []
        if len(util):
            xs, ys = _buckets(util, width, start, end)
            plt.plot(xs, ys, marker="braille", color="green")
            plt.ylim(0, 100)  # a fixed 0-100 % axis: noise must not look like swings
            plt.yticks([0, 50, 100])
            titles.append("GPU util % (green, left)")
        if len(step_time):
            xs, ys = _buckets(step_time, width, start, end)
            plt.plot(xs, ys, marker="braille", color="magenta", yside="right")
            top = max(max(ys) * 1.1, 1e-9)  # from 0, like the util axis: a steady step time stays a flat line
            plt.ylim(0, top, yside="right")
            plt.yticks(*value_ticks(0, top, max(2, (self.size.height - 5) // 2)), yside="right")
            titles.append("s/step (magenta, right)")
        plt.xlim(0, max(end - start, 1.0))
        plt.xticks(*time_ticks(0, max(end - start, 1.0), tick_room(width, 8)))
        self._title(" · ".join([*titles, "elapsed"]))  # on the border: the plot keeps every row inside
        self.refresh()

    def _title(self, title: str) -> None:
        if self.border_title != title:  # setting it repaints the widget, even to the same text
            self.border_title = title


def _buckets(series: Series, width: int, start: float, end: float) -> tuple[list[float], list[float]]:
    """The series as ``width`` bucket maxima, x in seconds since ``start`` (empty buckets left out)."""
    values = series.resampled(width, start, end)
    span = max(end - start, 1e-9)
    xs, ys = [], []
    for i, v in enumerate(values):
        if v is not None:
            xs.append((i + 0.5) / width * span)
            ys.append(v)
    return xs, ys
