"""Frames Textual wrote, recorded (``python benchmarks/writer_chain.py record``: the attach dashboard for
20 s at 160×45), and the writer chain as it was before it became one pass, kept only to compare against
(tests/tui/test_writer_chain.py, benchmarks/writer_chain.py): :class:`TwoPassScreenDiff` is
gputui/tui/screen_diff.py's ScreenDiff as of 2026-11-26 (whole styles before every run it sends), whose
output :meth:`gputui.tui.sgr_squeeze.SgrSqueezer.squeeze` then parsed again to shorten the styles."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from rich.cells import cell_len

from gputui.tui.sgr_squeeze import DEFAULT, SEEN_ON_BLANK, SgrSqueezer, Style, apply_sgr, transition

FRAMES = Path(__file__).parent / "data" / "attach_frames.jsonl.gz"
SIZE = (160, 45)  # columns, rows they were recorded at

_TOKEN = re.compile(
    r"\x1b\[([0-9;]*)m"  # 1: a style (SGR)
    r"|\x1b\[(\d*);?(\d*)H"  # 2, 3: a cursor move (row;column, from 1)
    r"|(\x1b\][^\x07\x1b]*(?:\x07|\x1b\\))"  # 4: an OSC string (a link, the clipboard)
    r"|(\x1b\[\?(?:2026|25)[hl])"  # 5: synchronised output, cursor shown/hidden: change no cell
    r"|(\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b.)"  # 6: anything else
)
MAX_GAP = 3  # unchanged cells sent again rather than jumped over (a jump costs 3-4 bytes)
Cell = tuple[str, Style, str | None]  # character, style, the OSC 8 link in effect


class TwoPassScreenDiff:
    """What one terminal shows, and the writes that change only what differs from it."""

    def __init__(self) -> None:
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
        out: list[str] = []
        position = 0
        for match in _TOKEN.finditer(data):
            if match.start() > position:
                self._text(out, data[position : match.start()])
            position = match.end()
            sgr, row, column, osc, harmless, other = match.groups()
            if sgr is not None:
                style = apply_sgr(self.style, sgr)
                if style is None:  # not understood: the rest of this write as it is
                    self.forget()
                    out.append(data[match.start() :])
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
                out.append(harmless)
            else:
                out.append(other)
                self.forget()
                self.at = None  # e.g. leaving the alternate screen restores a cursor: not known here
        if position < len(data):
            self._text(out, data[position:])
        if self.at is not None and self.cursor != self.at:  # leave the cursor where Textual put it
            out.append(_move(self.at, self.cursor))
            self.cursor = self.at
        return "".join(out)

    def _text(self, out: list[str], text: str) -> None:
        if self.at is None:  # after a control sequence and before a cursor move: written as it is
            out.append(text)
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
            out.append(self._gap(row, column) or _move((row, column), self.cursor))
        out.append(transition(None, self.style))
        self.sent_style = (self.style, self.link)
        out.append(text)
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


def _move(at: tuple[int, int], cursor: tuple[int, int] | None = None) -> str:
    """The cursor to ``at``: forward along its row from ``cursor`` when it is on that row (shorter), else
    there (not backward: after the last column a terminal's cursor stays on it, so counting back from
    there would land one cell off)."""
    if cursor is not None and cursor[0] == at[0] and at[1] > cursor[1]:
        step = at[1] - cursor[1]
        return f"\x1b[{step if step > 1 else ''}C"
    return f"\x1b[{at[0] + 1};{at[1] + 1}H"


def two_pass(frames: list[str]) -> list[str]:
    """What the old chain sent the terminal for each of ``frames``: diffed, then squeezed."""
    diff, squeezer = TwoPassScreenDiff(), SgrSqueezer()
    return [squeezer.squeeze(diff.diff(frame)) for frame in frames]


def recorded_frames(path: Path = FRAMES) -> list[str]:
    """The strings Textual handed its driver's ``write``, in order."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
