"""Only the changed cells reach the terminal (issue 25 part 5): what a terminal shows after the diffed
writes is what it shows after Textual's own, cell by cell and with the cursor in the same place, while a
repaint of unchanged content sends (nearly) nothing."""

from __future__ import annotations

import re

import tui_data
from test_ssh_frugal import SIZE, CountingDriver

from gputui.tui.screen_diff import ScreenDiff
from gputui.tui.sgr_squeeze import DEFAULT, apply_sgr

TOKEN = re.compile(
    r"\x1b\[([0-9;]*)m|\x1b\[(\d*);?(\d*)H|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-9;?]*[a-zA-Z]"
)


class Terminal:
    """Just enough of a terminal: cursor moves, styles, text, ``\\r`` and ``\\n``."""

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], tuple[str, object]] = {}
        self.row = self.column = 0
        self.style = DEFAULT

    def feed(self, data: str) -> None:
        position = 0
        for match in TOKEN.finditer(data):
            self._text(data[position : match.start()])
            position = match.end()
            sgr, row, column = match.groups()
            if sgr is not None:
                self.style = apply_sgr(self.style, sgr)
            elif row is not None:
                self.row, self.column = int(row or 1) - 1, int(column or 1) - 1
        self._text(data[position:])

    def _text(self, text: str) -> None:
        for char in text:
            if char == "\r":
                self.column = 0
            elif char == "\n":
                self.row += 1
            else:
                self.cells[self.row, self.column] = (char, self.style)
                self.column += 1


def frames() -> list[str]:
    """Textual-like frames: a header with a ticking clock, a table where one cell changes, whole rows."""
    out = []
    for tick in range(5):
        frame = (
            f"\x1b[1;1H\x1b[1;38;5;253;48;5;17m gputui \x1b[0m\x1b[38;5;253;48;5;17m 12:00:0{tick} \x1b[0m"
        )
        for row in range(2, 6):
            util = 90 if row != 3 else 50 + tick
            frame += (
                f"\x1b[{row};1H\x1b[38;5;214m│\x1b[0m gpu {row}  \x1b[38;5;112m{'█' * (util // 10)}\x1b[0m"
            )
            frame += f"\x1b[38;5;253m {util:3d}%\x1b[0m\r\n"
        out.append(frame + "\x1b[2;5H")
    return out


def test_the_terminal_shows_the_same_cells_and_only_changed_cells_are_sent():
    plain, diffed = Terminal(), Terminal()
    diff = ScreenDiff()
    sizes = []
    for frame in frames():
        plain.feed(frame)
        sent = diff.diff(frame)
        diffed.feed(sent)
        assert diffed.cells == plain.cells
        assert (diffed.row, diffed.column) == (plain.row, plain.column)
        sizes.append(len(sent))
    assert sizes[1] < 0.15 * len(frames()[1])  # the clock's digit and GPU 3's percentage


def test_after_forget_everything_is_sent_again():
    diff = ScreenDiff()
    first = frames()[0]
    diff.diff(first)
    assert "gpu 4" not in diff.diff(first)
    diff.forget()  # a resize: the terminal may have cleared
    assert "gpu 4" in diff.diff(first)
    diff.diff("\x1b[2J")  # a sequence it does not model: forgets too
    assert "gpu 4" in diff.diff(first)


async def test_a_full_repaint_of_an_unchanged_dashboard_sends_almost_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = tui_data.make_app(tui_data.one_node(tmp_path))
    app.driver_class = CountingDriver
    async with app.run_test(size=SIZE, headless=False) as pilot:
        screen = await tui_data.wait_loaded(pilot)
        await pilot.pause(0.2)
        before = CountingDriver.written
        for widget in screen.query("*"):
            widget.refresh()  # every widget repainted, nothing changed
        await pilot.pause(0.2)
        assert CountingDriver.written - before < 200  # was a whole screen: ~15 KB at 120×40


def test_changed_cells_further_along_a_row_are_reached_by_moving_forward():
    diff = ScreenDiff()
    diff.diff("\x1b[1;1Habc\x1b[1mdef\x1b[0mghij")
    out = diff.diff("\x1b[1;1HaBc\x1b[1mdef\x1b[0mghIj")
    assert out == "\x1b[1;2HB\x1b[6CI\x1b[C"  # to B, 6 cells on to I, then where Textual left it


def test_leaving_the_alternate_screen_moves_no_cursor() -> None:
    """The terminal restores the main screen's cursor when the app leaves the alternate screen: nothing
    the diff adds may move it (it once sent the cursor back to the last frame's position, so the shell's
    next line was written over the top of the screen)."""
    diff = ScreenDiff()
    diff.diff("\x1b[?1049h\x1b[1;1Hframe text\x1b[5;7H")
    assert diff.diff("\x1b[?1049l") == "\x1b[?1049l\x1b[0m"  # the style known again: no cursor move
    assert diff.diff("\x1b[?25h") == "\x1b[?25h\x1b[0m"
    assert diff.diff("after") == "after"  # where the terminal's cursor is, as it is
    assert diff.diff("\x1b[?1049h\x1b[2;3Hx").endswith("\x1b[2;3H\x1b[0mx")  # back on a known position


def test_a_short_unchanged_gap_in_the_same_look_is_written_again_instead_of_jumped():
    diff = ScreenDiff()
    diff.diff("\x1b[1;1H 4%\x1b[38;5;1m x\x1b[0m")
    out = diff.diff("\x1b[1;1H 5%\x1b[38;5;1m y\x1b[0m")
    # "5", then "%" (the style just sent) and " " (a space: its colour is not seen) again, then "y"; each
    # style as what changed from the one before
    assert out == "\x1b[1;2H\x1b[0m5% \x1b[38;5;1my"
    out = diff.diff("\x1b[1;1H 6\x1b[1m%\x1b[0m\x1b[38;5;1m z\x1b[0m")  # "%" now bold: changed, sent
    assert out == "\x1b[1;2H\x1b[0m6\x1b[1m% \x1b[0;38;5;1mz"
