"""Line charts in braille, as text: each cell holds 2 × 4 dots, so a chart ``columns`` cells wide has
``2 * columns`` dot columns. Pure functions and a small canvas, no Textual.

A curve is given as one *span* per dot column: the minimum and maximum of the points that fall in that
column (:func:`column_spans`), so a long series is drawn as its envelope: every spike and dip of every
stretch stays, however many points a column stands for. Each span is drawn as a vertical run of dots,
joined to the previous column's span by a line (across empty columns, as a line between the points).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Span = tuple[float, float]  # the minimum and maximum of a dot column's points
DOT_BITS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))  # [row in the cell][column in it]
BLANK = 0x2800  # the empty braille cell; a cell's character is BLANK + its dots' bits


def column_spans(
    times: Sequence[float], values: Sequence[float], start: float, end: float, columns: int
) -> tuple[Span | None, ...]:
    """Per dot column of ``[start, end]``, the ``(min, max)`` of the points in it, or None for none."""
    if columns <= 0:
        return ()
    scale = columns / max(end - start, 1e-9)
    out: list[Span | None] = [None] * columns
    for t, v in zip(times, values, strict=True):
        if t < start or t > end or not math.isfinite(v):  # NaN and inf have no place on an axis
            continue
        k = min(columns - 1, int((t - start) * scale))
        cur = out[k]
        out[k] = (v, v) if cur is None else (min(cur[0], v), max(cur[1], v))
    return tuple(out)


class Canvas:
    """``rows`` × ``columns`` braille cells; each dot set by a curve remembers it (the last curve drawn
    over a cell gives it its colour)."""

    def __init__(self, columns: int, rows: int) -> None:
        self.columns, self.rows = columns, rows
        self.bits = [[0] * columns for _ in range(rows)]
        self.owner = [[-1] * columns for _ in range(rows)]

    def dot(self, x: int, y: int, curve: int) -> None:
        """Set the dot at dot column ``x`` and dot row ``y`` (0 at the bottom)."""
        if 0 <= x < 2 * self.columns and 0 <= y < 4 * self.rows:
            row, sub = divmod(4 * self.rows - 1 - y, 4)
            self.bits[row][x // 2] |= DOT_BITS[sub][x % 2]
            self.owner[row][x // 2] = curve

    def line(self, x0: int, y0: int, x1: int, y1: int, curve: int) -> None:
        """Dots from (x0, y0) to (x1, y1) (Bresenham)."""
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x1 > x0 else -1), (1 if y1 > y0 else -1)
        err = dx + dy
        while True:
            self.dot(x0, y0, curve)
            if x0 == x1 and y0 == y1:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def spans(self, spans: Sequence[Span | None], lo: float, hi: float, curve: int) -> None:
        """Draw one span per dot column, values mapped from ``[lo, hi]`` to the canvas' height."""
        top = 4 * self.rows - 1
        scale = top / (hi - lo) if hi > lo else 0.0

        def y(v: float) -> int:
            return max(0, min(top, round((v - lo) * scale)))

        previous: tuple[int, int, int] | None = None  # (column, low dot, high dot)
        for x, span in enumerate(spans):
            if span is None:
                continue
            a, b = y(span[0]), y(span[1])
            if previous is not None:
                px, pa, pb = previous
                near = min(max((a + b) // 2, pa), pb)  # the previous span's dot nearest to this one
                reach = min(max(near, a), b)
                if x == px + 1:  # neighbours: stretch this span to meet the previous one
                    a, b = min(a, near), max(b, near)
                else:
                    self.line(px, near, x, reach, curve)
            self.line(x, a, x, b, curve)
            previous = (x, a, b)

    def runs(self, row: int) -> list[tuple[str, int]]:
        """The cells of ``row`` as runs of ``(text, curve)``; -1 for blank cells."""
        out: list[tuple[str, int]] = []
        for bits, owner in zip(self.bits[row], self.owner[row], strict=True):
            char, who = (chr(BLANK + bits), owner) if bits else (" ", -1)
            if out and out[-1][1] == who:
                out[-1] = (out[-1][0] + char, who)
            else:
                out.append((char, who))
        return out
