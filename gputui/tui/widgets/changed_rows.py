"""Repaint only what changed: a pane's rows are compared with the ones on screen and only the rows that
differ are sent to the terminal again (over SSH every repainted row costs bytes, ~100-300 each).

A pane built on :class:`ChangedRows` makes its rows in :meth:`build_rows` (one :class:`~rich.text.Text`
per screen row) and calls :meth:`show_rows` when its data may have changed: unchanged rows, and an
unchanged pane, cost nothing. Textual's ``refresh(*regions)`` marks only those rows dirty; its compositor
then writes only them. A border title is set only when it changed (setting one repaints the whole pane).
"""

from __future__ import annotations

from collections.abc import Hashable

from rich.text import Text
from textual.geometry import Region
from textual.widget import Widget


def same_row(a: Text, b: Text) -> bool:
    """The same characters with the same styles (``Text ==`` ignores the line's base style)."""
    return a.plain == b.plain and a.style == b.style and a.spans == b.spans


class ChangedRows(Widget):
    """A widget whose rows are repainted one by one, and only when they changed."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._rows: list[Text] | None = None
        self._rows_key: Hashable = None
        self._title_set: str | None = None
        self.rows_repainted = 0  # rows sent again by show_rows (a full repaint counts every row)

    def build_rows(self) -> list[Text]:
        """The pane's rows for its data and size now."""
        raise NotImplementedError

    def rows_key(self) -> Hashable:
        """What the rows depend on besides the data (the size, focus): a change rebuilds them in render."""
        return (self.size, self.has_focus)

    def show_rows(self) -> None:
        """Rebuild the rows; refresh only those that differ from the ones shown (none: no repaint)."""
        old, old_key = self._rows, self._rows_key
        rows = self.build_rows()
        self._rows, self._rows_key = rows, self.rows_key()
        if old is None or old_key != self._rows_key or len(old) != len(rows) or not self.size:
            self.rows_repainted += len(rows)
            self.refresh()
            return
        width = self.size.width
        changed = [y for y, (a, b) in enumerate(zip(old, rows, strict=True)) if not same_row(a, b)]
        self.rows_repainted += len(changed)
        for start, count in _runs(changed):
            self.refresh(Region(0, start, width, count))

    def set_title(self, title: str) -> None:
        """Set the border title only when it changed (Textual repaints the whole pane on every set)."""
        if self._title_set != title:
            self._title_set = title
            self.border_title = title

    def render(self) -> Text:
        if self._rows is None or self._rows_key != self.rows_key():
            self._rows, self._rows_key = self.build_rows(), self.rows_key()
        out = Text(no_wrap=True, overflow="ellipsis")
        for y, row in enumerate(self._rows):
            if y:
                out.append("\n")
            out.append_text(row)
        return out


def _runs(rows: list[int]) -> list[tuple[int, int]]:
    """Consecutive row numbers as (first, count) runs: [1, 2, 3, 7] → [(1, 3), (7, 1)]."""
    runs: list[tuple[int, int]] = []
    for y in rows:
        if runs and runs[-1][0] + runs[-1][1] == y:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((y, 1))
    return runs
