"""The jobs table: rows from :mod:`gputui.home.rows`, redrawn in place (cursor kept on the same job)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from gputui.home.rows import COLUMNS, JobRow

ROW_STYLE = {"running": "green", "pending": "yellow", "failed": "red", "ended": "dim"}
STATE_COLUMN = COLUMNS.index("STATE")


def _cells(row: JobRow) -> list[Text | str]:
    style = ROW_STYLE.get(row.style, "")
    cells: list[Text | str] = list(row.cells)
    if row.kind == "array":
        cells[0] = Text(row.cells[0], style="bold")
    if style:
        cells[STATE_COLUMN] = Text(row.cells[STATE_COLUMN], style=style)
        if row.style == "ended":
            cells = [Text(str(c), style="dim") for c in cells]
    return cells


class JobsTable(DataTable):
    """Only what changed is redrawn: same row keys → changed cells; otherwise the rows are rebuilt."""

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self.rows_shown: list[JobRow] = []

    def on_mount(self) -> None:
        for name in COLUMNS:
            self.add_column(name, key=name)

    def show(self, rows: list[JobRow]) -> None:
        old = self.rows_shown
        if [r.key for r in old] == [r.key for r in rows]:
            for before, after in zip(old, rows, strict=True):
                if before.cells != after.cells or before.style != after.style:
                    for column, value in enumerate(_cells(after)):
                        if before.cells[column] != after.cells[column] or before.style != after.style:
                            self.update_cell(after.key, COLUMNS[column], value)
            self.rows_shown = rows
            return
        selected = self.selected_row()
        self.clear()
        for row in rows:
            self.add_row(*_cells(row), key=row.key)
        self.rows_shown = rows
        keys = [r.key for r in rows]
        if selected is not None and selected.key in keys:
            self.move_cursor(row=keys.index(selected.key), animate=False)

    def selected_row(self) -> JobRow | None:
        if not self.rows_shown or self.cursor_row < 0 or self.cursor_row >= len(self.rows_shown):
            return None
        return self.rows_shown[self.cursor_row]
