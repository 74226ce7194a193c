"""A braille line chart drawn straight into Textual strips (the Line API), without plotext.

The chart is described by a :class:`Picture`: its curves (one span per dot column, see
:mod:`gputui.tui.braille`), a left and an optional right value axis, and an x axis with its ticks. The
widget keeps the picture it shows and builds its strips only when it is handed a different one (or its
size changes): a chart whose data did not change what is drawn costs a comparison, not a render.
Layout, inside the border: an optional title line; the left axis' labels (as wide as its widest label) and
``┤`` ticks, the plot, the right axis (``├`` and labels) when there is one; under the plot a ``└──┬──┘``
axis line, the x tick labels, and an optional line naming the x axis.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

from gputui.tui.braille import Canvas, Span

LEFT = 4  # "100┤": the left axis' labels and its line
RIGHT = 7  # "├0.275": the right axis' line and labels, when there is a right axis


@dataclass(frozen=True)
class Axis:
    lo: float
    hi: float
    ticks: tuple[float, ...] = ()
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Curve:
    spans: tuple[Span | None, ...]  # one per dot column of the plot
    color: str
    right: bool = False  # on the right axis


@dataclass(frozen=True)
class Picture:
    curves: tuple[Curve, ...]
    left: Axis
    right: Axis | None
    x: Axis  # x.lo..x.hi is the plot's width; ticks in the same unit
    title: str = ""  # a line above the plot (a chart without a border title)
    x_name: str = ""  # a line under the x tick labels, saying what x is


def left_width(axis: Axis) -> int:
    """Cells for the left axis: its widest label (3 at least) and the axis line."""
    return max(LEFT, 1 + max(map(len, axis.labels), default=0))


def plot_columns(width: int, right_axis: bool, left: int = LEFT) -> int:
    """How many cells wide the plot of a chart ``width`` cells wide is (``left``: see :func:`left_width`)."""
    return max(1, width - left - (RIGHT if right_axis else 1))


class BrailleChart(Widget):
    DEFAULT_CSS = """
    BrailleChart {
        width: 1fr;
        height: 1fr;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._shown: tuple[Picture | None, object] | None = None  # (picture, size) the strips are of
        self._lines: list[list[tuple[str, str | None]]] = []  # per row: (text, colour or None)
        self._drawn_at = 0.0
        self._again: Callable[[], None] | None = None  # the last draw, asked again on resize

    def offer(
        self,
        picture: Picture | None,
        again: Callable[[], None],
        *,
        every: float,
        force: bool = False,
        title: str | None = None,
    ) -> bool:
        """Show ``picture`` (and set the border ``title``) when either changed, at most once ``every``
        seconds unless ``force``; ``again`` repeats the caller's draw with ``force`` (asked on resize).
        Whether it was drawn."""
        self._again = again
        if (picture, self.size) == self._shown and (title is None or title == self.border_title):
            return False
        now = time.monotonic()
        if not force and now - self._drawn_at < every:
            return False  # asked again at the next refresh
        self._drawn_at = now
        if title is not None and self.border_title != title:  # setting it repaints, even to the same text
            self.border_title = title
        self.show(picture)
        return True

    def on_resize(self) -> None:
        """Drawn again at once at the new size (its columns and rows are the picture's)."""
        if self._again is not None:
            self._again()

    def show(self, picture: Picture | None) -> bool:
        """Show ``picture`` (None: an empty plot); whether anything had to be drawn again."""
        key = (picture, self.size)
        if key == self._shown:
            return False
        self._shown = key
        self._lines = _layout(picture, self.size.width, self.size.height) if picture else []
        self.refresh()
        return True

    def text(self) -> str:
        """The chart as plain text (what the terminal shows, colours left out)."""
        return "\n".join("".join(text for text, _ in line) for line in self._lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if y >= len(self._lines):
            return Strip.blank(width, base)
        segments = [
            Segment(text, base + Style(color=color) if color else base) for text, color in self._lines[y]
        ]
        return Strip(segments).adjust_cell_length(width, base)


def _layout(picture: Picture, width: int, height: int) -> list[list[tuple[str, str | None]]]:
    rows = height - 2 - bool(picture.title) - bool(picture.x_name)  # the plot; the axis line, x labels
    left_cells = left_width(picture.left)
    if rows < 1 or width < left_cells + 2:
        return [[(picture.title.center(width)[:width], None)]] if picture.title and height else []
    columns = plot_columns(width, picture.right is not None, left_cells)
    canvas = Canvas(columns, rows)
    for i, curve in enumerate(picture.curves):
        axis = picture.right if curve.right and picture.right else picture.left
        canvas.spans(curve.spans, axis.lo, axis.hi, i)
    left = _tick_rows(picture.left, rows)
    right = _tick_rows(picture.right, rows) if picture.right else {}
    lines: list[list[tuple[str, str | None]]] = []
    if picture.title:
        lines.append([(picture.title.center(width)[:width], None)])
    for row in range(rows):
        line: list[tuple[str, str | None]] = [(f"{left.get(row, ''):>{left_cells - 1}}", None)]
        line.append(("┤" if row in left else "│", None))
        line += [(text, picture.curves[who].color if who >= 0 else None) for text, who in canvas.runs(row)]
        tail = ("├" + right[row]) if row in right else "│"
        line.append((tail[:RIGHT] if picture.right else "│", None))
        lines.append(line)
    lines += _x_axis(picture.x, columns, width, left_cells)
    if picture.x_name:
        lines.append([(picture.x_name.center(width)[:width], None)])
    return lines


def _tick_rows(axis: Axis, rows: int) -> dict[int, str]:
    """Row (0 at the top) → label of each tick inside the axis."""
    span = axis.hi - axis.lo
    out: dict[int, str] = {}
    for value, label in zip(axis.ticks, axis.labels, strict=True):
        if span > 0 and axis.lo <= value <= axis.hi:
            dot = round((value - axis.lo) / span * (4 * rows - 1))
            out.setdefault(rows - 1 - dot // 4, label)
    return out


def _x_axis(axis: Axis, columns: int, width: int, left: int) -> list[list[tuple[str, str | None]]]:
    """The axis line with a ``┬`` under each tick, and the tick labels centred under them (a label that
    would overlap the one before is left out)."""
    span = axis.hi - axis.lo
    marks = ["─"] * columns
    labels = [" "] * width
    free = 0  # the first cell a label may use
    for value, label in zip(axis.ticks, axis.labels, strict=True):
        if span <= 0 or not axis.lo <= value <= axis.hi:
            continue
        cell = min(columns - 1, int((value - axis.lo) / span * columns))
        marks[cell] = "┬"
        at = min(max(left + cell - len(label) // 2, free), width - len(label))
        if at >= free and at >= 0:
            labels[at : at + len(label)] = label
            free = at + len(label) + 1
    line = " " * (left - 1) + "└" + "".join(marks) + "┘"
    return [[(line[:width], None)], [("".join(labels), None)]]
