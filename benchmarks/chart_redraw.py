"""Redraw cost of Textual chart widgets on the same data at the same size: gputui's own braille chart
(gputui/tui/widgets/braille_chart.py, what the dashboard draws with), textual-plotext (the plotext wrapper
it drew with before) and textual-plot (a native Textual plotting widget with zoom and pan, drawn on
textual-hires-canvas). Issue 25, item 3.

    python benchmarks/chart_redraw.py [--size 100x24] [--points 2000] [--redraws 60]

Each widget fills a headless app of ``--size``. Per redraw, one step is appended to a loss-like curve of
``--points`` steps, the chart is cleared and given the curve again (thinned to two points per column, as
the dashboard does), and the app is let to paint. Printed per widget: the median CPU milliseconds per
redraw (the process's CPU time from the new data to the frame written) and the mean bytes per frame the
app writes to the terminal (counted by a driver in place of the headless one). The braille chart is given
the whole curve (it keeps each dot column's minimum and maximum itself). The peers are not gputui
dependencies: ``pip install textual-plotext textual-plot``; a peer not installed is left out.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import time

from textual.app import App, ComposeResult

from gputui.tui.braille import column_spans
from gputui.tui.widgets.braille_chart import Axis, BrailleChart, Curve, Picture, plot_columns


def curve(points: int) -> tuple[list[float], list[float]]:
    xs = [float(i) for i in range(1, points + 1)]
    ys = [2.2 * math.exp(-i / (points / 4)) + 0.05 + 0.03 * math.sin(i / 7.0) for i in range(1, points + 1)]
    return xs, ys


def thin(xs: list[float], ys: list[float], columns: int) -> tuple[list[float], list[float]]:
    step = max(1, len(xs) // (2 * columns))
    return xs[::step], ys[::step]


def draw_braille(widget: BrailleChart, xs: list[float], ys: list[float]) -> None:
    columns = plot_columns(widget.size.width, False)
    spans = column_spans(xs, ys, xs[0], xs[-1], 2 * columns)
    x, y = Axis(xs[0], xs[-1]), Axis(min(ys), max(ys))
    widget.show(Picture((Curve(spans, "cyan"),), y, None, x, title="loss", x_name="step"))


def draw_plotext(widget, xs: list[float], ys: list[float]) -> None:
    plt = widget.plt
    plt.clear_data()
    plt.clear_figure()
    plt.plot(xs, ys, marker="braille")
    plt.title("loss")
    widget.refresh()


def draw_textual_plot(widget, xs: list[float], ys: list[float]) -> None:
    from textual_plot import HiResMode

    widget.clear()
    widget.plot(xs, ys, hires_mode=HiResMode.BRAILLE)
    widget.set_xlabel("step")


class ChartApp(App):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def compose(self) -> ComposeResult:
        if self.kind == "gputui-braille":
            yield BrailleChart(id="chart")
        elif self.kind == "textual-plotext":
            from textual_plotext import PlotextPlot

            yield PlotextPlot(id="chart")
        else:
            from textual_plot import PlotWidget

            yield PlotWidget(id="chart")


async def measure(kind: str, size: tuple[int, int], points: int, redraws: int) -> tuple[float, float]:
    """(median ms per redraw, mean bytes per frame) for one widget kind."""
    app = ChartApp(kind)
    draw = {"gputui-braille": draw_braille, "textual-plotext": draw_plotext}.get(kind, draw_textual_plot)
    xs, ys = curve(points + redraws)
    async with app.run_test(size=size) as pilot:
        written: list[int] = []
        driver = app._driver
        # the headless driver writes nothing and makes the app skip composing frames: this one counts
        driver.__class__ = type("CountingDriver", (type(driver),), {"is_headless": property(lambda _: False)})
        driver.write = lambda data: written.append(len(data.encode()))  # type: ignore[method-assign]
        driver.flush = lambda: None  # type: ignore[method-assign]
        chart = app.query_one("#chart")
        timings: list[float] = []
        frames: list[int] = []
        for k in range(redraws + 5):
            n = points + k
            tx, ty = (xs[:n], ys[:n]) if kind == "gputui-braille" else thin(xs[:n], ys[:n], size[0])
            written.clear()
            start = time.process_time()  # CPU time: the pauses' idle waits are not counted
            draw(chart, tx, ty)
            await pilot.pause()
            await pilot.pause()
            if k >= 5:  # the first frames (layout, canvas sizing) are not a redraw
                timings.append((time.process_time() - start) * 1000)
                frames.append(sum(written))
    return statistics.median(timings), statistics.fmean(frames)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="100x24")
    ap.add_argument("--points", type=int, default=2000)
    ap.add_argument("--redraws", type=int, default=60)
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    kinds = ["gputui-braille"]
    for peer, module in (("textual-plotext", "textual_plotext"), ("textual-plot", "textual_plot")):
        try:
            __import__(module)
            kinds.append(peer)
        except ImportError:
            print(f"{peer} is not installed (pip install {peer}): left out")
    print(f"{args.size}, {args.points} points (+1 per redraw), {args.redraws} redraws")
    for kind in kinds:
        ms, frame = asyncio.run(measure(kind, (width, height), args.points, args.redraws))
        print(f"{kind:16s} {ms:7.2f} ms per redraw  {frame:9.0f} bytes per frame")


if __name__ == "__main__":
    main()
