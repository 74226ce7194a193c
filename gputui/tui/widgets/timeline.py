"""GPU utilisation and step time on one time axis: a stall shows as the two lines parting ways.

GPUs idle while the step time rises point at input or communication; GPUs busy with no step progress
at a hang in a kernel or a collective. The job-wide mean utilisation (left axis, 0-100 %) and the seconds
per step (right axis, from 0) are drawn over the job's elapsed time (``m:ss`` / ``h:mm:ss`` ticks from
:mod:`gputui.tui.axes`), each as its envelope: per dot column of the braille plot, the minimum and
maximum of the points in it (:mod:`gputui.tui.braille`), so a long run's curve is its data's at every
stretch.

The time axis ends at the elapsed time rounded up to its tick step (:func:`~gputui.tui.axes.time_axis_end`):
while the data grows inside that step the columns stand still, and the chart is drawn again only when
what it shows changed (a column's minimum or maximum, a new column, the step-time axis' top, the axis'
end, the title), at most once a second; at once when its size changed. The dashboard asks at every
refresh, so a new point shows within a second plus one refresh interval of reaching the dashboard.

A replayed log that prints no times or durations (``clockless``) has no time axis: the timeline says so
instead of drawing its records over an invented one. A source that ``ended`` without GPU samples says
that, instead of waiting for them.
"""

from __future__ import annotations

from gputui.monitor.series import Series
from gputui.monitor.spikes import Spikes, spikes_text
from gputui.tui.axes import tick_room, time_axis_end, time_ticks, value_ticks
from gputui.tui.braille import column_spans
from gputui.tui.widgets.braille_chart import Axis, BrailleChart, Curve, Picture, plot_columns

MIN_REDRAW_S = 1.0
UTIL_AXIS = Axis(0.0, 100.0, (0.0, 50.0, 100.0), ("0", "50", "100"))  # fixed: noise must not look like swings
NAME = "GPU util % and step time"


class Timeline(BrailleChart):
    def draw(
        self,
        util: Series,
        step_time: Series,
        *,
        clockless: bool = False,
        ended: bool = False,
        force: bool = False,
        spikes: Spikes | None = None,
    ) -> None:
        """Show the two series; ``force`` lifts the once-a-second limit, never the "only when what is
        drawn changed" rule. ``ended``: the source has ended (no more data will come). ``spikes``: where
        the step-time axis ends below them, and what they are."""
        picture, title = timeline_picture(
            util, step_time, self.size.width, self.size.height, clockless, ended, spikes
        )
        again = lambda: self.draw(  # noqa: E731
            util, step_time, clockless=clockless, ended=ended, force=True, spikes=spikes
        )
        self.offer(picture, again, every=MIN_REDRAW_S, force=force, title=title)


def timeline_picture(
    util: Series,
    step_time: Series,
    width: int,
    height: int,
    clockless: bool,
    ended: bool,
    spikes: Spikes | None = None,
) -> tuple[Picture | None, str]:
    """What the timeline shows at ``width`` × ``height`` cells (inside its border), and its title."""
    times = [t for s in (util, step_time) for t in s.times[:1] + s.times[-1:]]
    if clockless:
        return None, f"{NAME}: no times in the log"
    if not times:
        return (
            None,
            f"{NAME}: {'no GPU samples or step times in this source' if ended else 'waiting for data'}",
        )
    start = min(times)
    has_step = len(step_time) > 0
    columns = plot_columns(width, has_step)
    end = time_axis_end(max(times) - start, tick_room(columns, 8))
    x = Axis(0.0, end, *map(tuple, time_ticks(0.0, end, tick_room(columns, 8))))
    curves, titles, right = [], [], None
    if len(util):
        curves.append(Curve(column_spans(util.times, util.values, start, start + end, 2 * columns), "green"))
        titles.append("GPU util % (green, left)")
    elif ended:
        titles.append("no GPU samples in this source")
    if has_step:
        spans = column_spans(step_time.times, step_time.values, start, start + end, 2 * columns)
        top = max(
            max((s[1] for s in spans if s), default=0.0) * 1.1, 1e-9
        )  # from 0: a steady step time stays flat
        cut = ""
        if spikes is not None and spikes.top < top:  # the typical step legible, the spikes cut at the top
            top = spikes.top
            spans = tuple(None if s is None else (min(s[0], top), min(s[1], top)) for s in spans)
            cut = f"; {spikes_text(spikes)}"
        right = Axis(0.0, top, *map(tuple, value_ticks(0.0, top, max(2, (height - 4) // 2))))
        curves.append(Curve(spans, "magenta", right=True))
        titles.append(f"s/step (magenta, right{cut})")
    left = UTIL_AXIS if len(util) else Axis(0.0, 100.0)  # no util curve: no util ticks
    return Picture(tuple(curves), left, right, x), " · ".join([*titles, "elapsed"])
