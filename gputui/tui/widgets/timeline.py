"""GPU utilisation and step time on one time axis: a stall shows as the two lines parting ways.

GPUs idle while the step time rises point at input or communication; GPUs busy with no step progress
at a hang in a kernel or a collective. The job-wide mean utilisation (left axis, %) and the seconds per
step (right axis) are drawn over the same minutes, thinned to the plot's width, redrawn at most once a
second and only when they changed.
"""

from __future__ import annotations

from gputui.monitor.series import Series
from gputui.tui.widgets.throttled_plot import ThrottledPlot


class Timeline(ThrottledPlot):
    def draw(self, util: Series, step_time: Series, *, force: bool = False) -> None:
        if not self.due((len(util), util.last, len(step_time), step_time.last), force=force):
            return
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        times = [t for s in (util, step_time) for t in s.times[:1] + s.times[-1:]]
        if not times:
            plt.title("GPU util % and step time: waiting for data")
            self.refresh()
            return
        start, end = min(times), max(times)
        width = max(10, self.size.width - 12)
        title = "GPU util % (green, left)"
        if len(util):
            xs, ys = _buckets(util, width, start, end)
            plt.plot(xs, ys, marker="braille", color="green")
            plt.ylim(0, 100)  # a fixed 0-100 % axis: noise must not look like swings
            plt.yticks([0, 50, 100])
        if len(step_time):
            xs, ys = _buckets(step_time, width, start, end)
            plt.plot(xs, ys, marker="braille", color="magenta", yside="right")
            title += " · s/step (magenta, right)"
        plt.title(title)
        plt.xlabel("minutes")
        self.refresh()


def _buckets(series: Series, width: int, start: float, end: float) -> tuple[list[float], list[float]]:
    values = series.resampled(width, start, end)
    span = max(end - start, 1e-9)
    xs, ys = [], []
    for i, v in enumerate(values):
        if v is not None:
            xs.append((i + 0.5) / width * span / 60)
            ys.append(v)
    return xs, ys
