"""The jobs table: rows from :mod:`gputui.home.rows`, drawn line by line with a cache per row.

A refresh of the list usually changes a cell or two (a running job's time); only those rows are drawn
again, and only the lines on screen are asked for (Textual's line API). The header line stays on top
while the rows scroll; the cursor stays on the same job when the rows are rebuilt. Keys: ↑/↓, pgup/pgdn,
home/end move the cursor, ``enter`` (or a click on the highlighted row) posts :class:`RowSelected`.
Cells are drawn as plain segments, so each goes through :func:`gputui.textsafe.printable` first (names and
reasons already are, where squeue's output is read; this keeps any other cell from reaching the terminal
raw).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from gputui.home.rows import COLUMNS, JobRow
from gputui.textsafe import printable

STATE_COLUMN = COLUMNS.index("STATE")
GAP = 2
MAX_WIDTH = {"NAME": 28, "STATE": 34, "NODES": 24}
STATE_STYLE = {
    "running": Style(color="green"),
    "pending": Style(color="yellow"),
    "failed": Style(color="red"),
    "ended": Style(dim=True),
}
HEADER = Style(bold=True)
CURSOR = Style(reverse=True, bold=True)
CURSOR_UNFOCUSED = Style(reverse=True)
ENDED = Style(dim=True)
BOLD = Style(bold=True)


class JobsTable(ScrollView, can_focus=True):
    BINDINGS = [
        Binding("up,k", "move(-1)", show=False),
        Binding("down,j", "move(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
        Binding("home", "edge(0)", show=False),
        Binding("end", "edge(1)", show=False),
        Binding("enter", "select", show=False),
    ]

    @dataclass
    class RowHighlighted(Message):
        key: str | None

    @dataclass
    class RowSelected(Message):
        key: str | None

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows_shown: list[JobRow] = []
        self.cursor_row = 0
        self.widths: tuple[int, ...] = tuple(len(c) for c in COLUMNS)
        self._strips: dict[tuple, Strip] = {}
        self.row_renders = 0  # rows drawn (cache misses): what a refresh costs

    # ------------------------------------------------------------------ data

    @property
    def row_count(self) -> int:
        return len(self.rows_shown)

    def show(self, rows: list[JobRow]) -> None:
        """Show ``rows``: same jobs → only the changed rows are drawn again; else the cursor follows its
        job."""
        old = self.rows_shown
        selected = self.selected_row()
        same_keys = len(old) == len(rows) and all(a.key == b.key for a, b in zip(old, rows, strict=True))
        self.rows_shown = rows
        widths = self._widths(rows)
        if same_keys and widths == self.widths:
            for index, (before, after) in enumerate(zip(old, rows, strict=True)):
                if before.cells != after.cells or before.style != after.style:
                    self.refresh_line(index + 1)
            return
        self.widths = widths
        if len(self._strips) > 4 * len(rows) + 64:
            self._strips.clear()
        self.virtual_size = Size(sum(widths) + GAP * len(widths), len(rows) + 1)
        keys = [r.key for r in rows]
        if selected is not None and selected.key in keys:
            self.cursor_row = keys.index(selected.key)
        self.cursor_row = max(0, min(self.cursor_row, len(rows) - 1))
        self._scroll_to_cursor()
        self.refresh()

    def _widths(self, rows: list[JobRow]) -> tuple[int, ...]:
        widths = [len(c) for c in COLUMNS]
        for row in rows:
            for i, cell in enumerate(row.cells):
                if len(cell) > widths[i]:
                    widths[i] = len(cell)
        return tuple(min(w, MAX_WIDTH.get(COLUMNS[i], w)) for i, w in enumerate(widths))

    def selected_row(self) -> JobRow | None:
        if not self.rows_shown or not 0 <= self.cursor_row < len(self.rows_shown):
            return None
        return self.rows_shown[self.cursor_row]

    def get_cell(self, key: str, column: str) -> str:
        row = next(r for r in self.rows_shown if r.key == key)
        return row.cells[COLUMNS.index(column)]

    # ------------------------------------------------------------------ drawing

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        if y == 0:
            strip = self._strip(COLUMNS, HEADER, None)
        else:
            index = scroll_y + y - 1
            if not 0 <= index < len(self.rows_shown):
                return Strip.blank(width)
            strip = self._row_strip(index)
        return strip.crop_extend(scroll_x, scroll_x + width, None)

    def _row_strip(self, index: int) -> Strip:
        row = self.rows_shown[index]
        cursor = CURSOR if self.has_focus else CURSOR_UNFOCUSED
        on_cursor = index == self.cursor_row
        key = (
            row.key,
            row.cells,
            row.style,
            row.kind,
            on_cursor and (cursor is CURSOR),
            on_cursor,
            self.widths,
        )
        strip = self._strips.get(key)
        if strip is None:
            self.row_renders += 1
            if on_cursor:  # one even bar: the state colours would turn into blocks when reversed
                strip = self._strip(row.cells, cursor, None)
            else:
                base = ENDED if row.style == "ended" else (BOLD if row.kind == "array" else None)
                strip = self._strip(row.cells, base, STATE_STYLE.get(row.style))
            self._strips[key] = strip
        return strip

    def _strip(self, cells: tuple[str, ...], base: Style | None, state: Style | None) -> Strip:
        segments = []
        for i, (text, width) in enumerate(zip(cells, self.widths, strict=True)):
            cell = printable(text)
            if cell_len(cell) > width:
                cell = set_cell_size(cell, width - 1) + "…"
            style = state if i == STATE_COLUMN and state is not None else base
            segments.append(Segment(set_cell_size(cell, width + GAP), style))
        return Strip(segments)

    # ------------------------------------------------------------------ the cursor

    def move_cursor(self, *, row: int, animate: bool = False) -> None:
        if not self.rows_shown:
            return
        before = self.cursor_row
        self.cursor_row = max(0, min(row, len(self.rows_shown) - 1))
        self._scroll_to_cursor()
        self.refresh_line(before + 1)
        self.refresh_line(self.cursor_row + 1)
        if before != self.cursor_row:
            self.post_message(self.RowHighlighted(self.rows_shown[self.cursor_row].key))

    def _scroll_to_cursor(self) -> None:
        visible = max(1, self.size.height - 1)  # the header line is always on screen
        top = self.scroll_offset.y
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + visible:
            self.scroll_to(y=self.cursor_row - visible + 1, animate=False, immediate=True)

    def action_move(self, by: int) -> None:
        self.move_cursor(row=self.cursor_row + by)

    def action_page(self, by: int) -> None:
        self.move_cursor(row=self.cursor_row + by * max(1, self.size.height - 2))

    def action_edge(self, end: int) -> None:
        self.move_cursor(row=len(self.rows_shown) - 1 if end else 0)

    def action_select(self) -> None:
        row = self.selected_row()
        self.post_message(self.RowSelected(row.key if row else None))

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y - 1
        if event.y == 0 or not 0 <= index < len(self.rows_shown):
            return
        if index == self.cursor_row:
            self.action_select()
        else:
            self.move_cursor(row=index)

    def on_focus(self) -> None:
        self.refresh_line(self.cursor_row + 1)

    def on_blur(self) -> None:
        self.refresh_line(self.cursor_row + 1)

    def on_resize(self) -> None:
        self._scroll_to_cursor()
