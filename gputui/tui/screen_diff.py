"""Send the terminal only the cells that changed, as curses does: Textual repaints whole widget regions
(a chart whose axis moved, a header whose clock ticked) and over SSH every unchanged cell written again
costs bytes.

:class:`ScreenDiff` sits between Textual's driver and the terminal. It keeps what the terminal shows (a
character and its style per cell) and, for each run of text Textual writes at a position, sends only the
part from the first to the last changed cell, with a cursor move before it when the terminal's cursor is
not already there (or the few unchanged cells in between written again, when that is shorter) and its
style as what changed from the terminal's (:class:`gputui.tui.sgr_squeeze.SgrSqueezer`, handed the
pieces as they are found: each frame is parsed once).
Textual-free. What it does not model is passed through and makes it forget the screen (every cell is
then sent again): a control sequence other than a cursor move, a style, an OSC string or the cursor's
and synchronised output's on/off; a style code it does not know; a character not one cell wide. The app
calls :meth:`ScreenDiff.forget` when the terminal is resized. A write must hold whole escape sequences
(Textual writes whole frames).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rich.cells import cell_len

from gputui.tui.sgr_squeeze import DEFAULT, SEEN_ON_BLANK, SgrSqueezer, Style, apply_sgr

_TOKEN = re.compile(
    r"\x1b\[([0-9;]*)m"  # 1: a style (SGR)
    r"|\x1b\[(\d*);?(\d*)H"  # 2, 3: a cursor move (row;column, from 1)
    r"|(\x1b\][^\x07\x1b]*(?:\x07|\x1b\\))"  # 4: an OSC string (a link, the clipboard)
    r"|(\x1b\[\?(?:2026|25)[hl])"  # 5: synchronised output, cursor shown/hidden: change no cell
    r"|(\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b.)"  # 6: anything else
)
MAX_GAP = 3  # unchanged cells sent again rather than jumped over (a jump costs 3-4 bytes)
Cell = tuple[str, Style, str | None]  # character, style, the OSC 8 link in effect


class ScreenDiff:
    """What one terminal shows, and the writes that change only what differs from it, their styles
    squeezed."""

    def __init__(self) -> None:
        self.squeezer = SgrSqueezer()
        self.rows: dict[int, list[Cell | None]] = {}  # None: not known
        self.style: Style = DEFAULT  # the style Textual set last
        self.link: str | None = None
        self.at: tuple[int, int] | None = (0, 0)  # where Textual's next character goes (None: not known)
        self.cursor: tuple[int, int] | None = None  # where the terminal's cursor is (None: not known)
        self.sent_style: tuple[Style, str | None] | None = None  # of the last text sent
        self.cells_sent = 0
        self.cells_skipped = 0

    def forget(self) -> None:
        """The terminal's content is not known any more (a resize, a clear): send everything again."""
        self.rows.clear()
        self.cursor = self.sent_style = None

    def diff(self, data: str) -> str:
        """What to send the terminal for Textual's ``data``."""
        out: list[str] = []
        position = 0
        for match in _TOKEN.finditer(data):
            if match.start() > position:
                self._text(out, data[position : match.start()])
            position = match.end()
            sgr, row, column, osc, harmless, other = match.groups()
            if sgr is not None:
                style = apply_sgr(self.style, sgr)
                if style is None:  # not understood: the rest of this write as it is (styles squeezed)
                    self.forget()
                    self.squeezer.feed(out, data[match.start() :])
                    self.squeezer.sync(out)
                    self.style = DEFAULT
                    return "".join(out)
                self.style = style
            elif row is not None:
                self.at = (int(row or 1) - 1, int(column or 1) - 1)
            elif osc is not None:
                out.append(osc)
                if osc.startswith("\x1b]8;"):  # a link begins (with a URL) or ends (without)
                    self.link = osc if not osc.rstrip("\x07\x1b\\").endswith(";") else None
            elif harmless is not None:
                self.squeezer.control(out, harmless)
            else:
                self.squeezer.control(out, other)
                self.forget()
                self.at = None  # e.g. leaving the alternate screen restores a cursor: not known here
        if position < len(data):
            self._text(out, data[position:])
        if self.at is not None and self.cursor != self.at:  # leave the cursor where Textual put it
            out.append(_move(self.at, self.cursor))
            self.cursor = self.at
        self.squeezer.sync(out)  # the terminal left in the style Textual left it in
        return "".join(out)

    def _text(self, out: list[str], text: str) -> None:
        if self.at is None:  # after a control sequence and before a cursor move: written as it is
            self.squeezer.text(out, text)
            return
        for part in re.split(r"([\r\n])", text):
            if part == "\r":
                self.at = (self.at[0], 0)
            elif part == "\n":
                self.at = (self.at[0] + 1, self.at[1])
            elif part:
                self._run(out, part)

    def _run(self, out: list[str], text: str) -> None:
        """``text`` in the current style at ``self.at``: send the changed part only."""
        row, column = self.at
        width = cell_len(text)
        line = self.rows.setdefault(row, [])
        if len(line) < column + width:
            line.extend([None] * (column + width - len(line)))
        if width != len(text) or not text.isprintable():  # wide, zero-width or control characters
            self._send(out, text, row, column)
            line[column : column + width] = [None] * width
            self.at = (row, column + width)
            self.cursor = None if width != len(text) else self.at
            return
        new = [(char, self.style, self.link) for char in text]
        old = line[column : column + width]
        self.at = (row, column + width)
        if old == new:
            self.cells_skipped += width
            return
        first = next(i for i in range(width) if old[i] != new[i])
        last = next(i for i in range(width - 1, -1, -1) if old[i] != new[i])
        line[column + first : column + last + 1] = new[first : last + 1]
        self._send(out, text[first : last + 1], row, column + first)
        self.cells_skipped += width - (last + 1 - first)

    def _send(self, out: list[str], text: str, row: int, column: int) -> None:
        if self.cursor != (row, column):
            gap = self._gap(row, column)
            if gap:
                self.squeezer.text(out, gap)
            else:
                out.append(_move((row, column), self.cursor))
        self.squeezer.want(self.style)
        self.sent_style = (self.style, self.link)
        self.squeezer.text(out, text)
        self.cells_sent += len(text)
        self.cursor = (row, column + len(text))

    def _gap(self, row: int, column: int) -> str:
        """The few cells between the cursor and ``column`` written again as they are, when that is
        shorter than a cursor move: single-byte characters in the style last sent; else ''."""
        cursor = self.cursor
        if cursor is None or cursor[0] != row or not 0 < column - cursor[1] <= MAX_GAP:
            return ""
        cells = self.rows[row][cursor[1] : column]
        if self.sent_style is None or not all(self._same_as_sent(cell) for cell in cells):
            return ""
        return "".join(cell[0] for cell in cells)  # type: ignore[index]

    def _same_as_sent(self, cell: Cell | None) -> bool:
        """``cell`` looks the same written in the style last sent: the same style, or a space on the same
        background (a space's foreground is not seen)."""
        if cell is None or cell[0] > "~" or self.sent_style is None:
            return False
        sent, link = self.sent_style
        if cell[1:] == (sent, link):
            return True
        style = cell[1]
        return (
            cell[0] == " "
            and cell[2] == link
            and style[2] == sent[2]
            and not (style[0] | sent[0]) & SEEN_ON_BLANK
        )

    def diffing(self, write: Callable[[str], None]) -> Callable[[str], None]:
        """``write`` that is given only what changes the screen."""

        def write_diffed(data: str) -> None:
            write(self.diff(data))

        return write_diffed


def _move(at: tuple[int, int], cursor: tuple[int, int] | None = None) -> str:
    """The cursor to ``at``: forward along its row from ``cursor`` when it is on that row (shorter), else
    there (not backward: after the last column a terminal's cursor stays on it, so counting back from
    there would land one cell off)."""
    if cursor is not None and cursor[0] == at[0] and at[1] > cursor[1]:
        step = at[1] - cursor[1]
        return f"\x1b[{step if step > 1 else ''}C"
    return f"\x1b[{at[0] + 1};{at[1] + 1}H"
