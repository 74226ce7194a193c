"""One pass over each frame: the writer between Textual and the terminal (cells that changed, styles as
changes) parses each frame once, and on frames recorded from a real dashboard a terminal emulator (pyte)
shows after every frame what it shows after Textual's own frames and after the old two-pass chain, with
no more bytes sent than the old chain sent."""

from __future__ import annotations

import re

import pyte
import tui_data
from test_ssh_frugal import SIZE as APP_SIZE
from test_ssh_frugal import CountingDriver
from two_pass_chain import SIZE, recorded_frames, two_pass

from gputui.tui import screen_diff, sgr_squeeze
from gputui.tui.screen_diff import ScreenDiff

KEYBOARD_MODE = re.compile(r"\x1b\[[<>=][0-9;]*u")  # kitty's keyboard protocol: pyte would print the "u"


class Emulator:
    """A pyte terminal of the recorded size."""

    def __init__(self) -> None:
        self.screen = pyte.Screen(*SIZE)
        self.stream = pyte.Stream(self.screen)

    def feed(self, data: str) -> list:
        """Feed ``data``; then every cell as seen (a plain space's foreground and weight are not seen) and
        the cursor."""
        self.stream.feed(KEYBOARD_MODE.sub("", data))
        cells = []
        for y in range(self.screen.lines):
            row = self.screen.buffer[y]
            for x in range(self.screen.columns):
                char = row[x]
                if char.data == " " and not (char.reverse or char.underscore or char.strikethrough):
                    cells.append((" ", char.bg))
                else:
                    cells.append(char)
        return [cells, (self.screen.cursor.x, self.screen.cursor.y)]


def test_recorded_frames_show_the_same_as_textual_and_the_old_chain_with_no_more_bytes():
    frames = recorded_frames()
    assert len(frames) > 20 and sum(map(len, frames)) > 100_000  # a real session: first frame, updates
    old_sent = two_pass(frames)
    writer = ScreenDiff()
    textual, old, new = Emulator(), Emulator(), Emulator()
    for number, (frame, before) in enumerate(zip(frames, old_sent, strict=True)):
        sent = writer.diff(frame)
        shown = new.feed(sent)
        assert shown == textual.feed(frame), f"frame {number}: not what Textual's frame shows"
        assert shown == old.feed(before), f"frame {number}: not what the two-pass chain showed"
        assert len(sent.encode()) <= len(before.encode()), f"frame {number}: more bytes than before"
    assert writer.cells_skipped > writer.cells_sent  # most of each repaint was not sent again


async def test_the_app_parses_each_frame_once(tmp_path, monkeypatch):
    """Every write Textual makes is parsed once on its way to the terminal (the diff's parser), and the
    squeezer works on the pieces the diff found: its own parser is not run."""
    parsed: dict[str, int] = {"screen_diff": 0, "sgr_squeeze": 0}

    def counting(module):
        pattern = module._TOKEN

        class Counting:
            def finditer(self, data: str):
                parsed[module.__name__.rsplit(".", 1)[1]] += 1
                return pattern.finditer(data)

        monkeypatch.setattr(module, "_TOKEN", Counting())

    counting(screen_diff)
    counting(sgr_squeeze)
    monkeypatch.chdir(tmp_path)
    app = tui_data.make_app(tui_data.one_node(tmp_path))
    app.driver_class = CountingDriver
    async with app.run_test(size=APP_SIZE, headless=False) as pilot:
        await tui_data.wait_loaded(pilot)
        await pilot.pause(0.2)
    assert parsed["screen_diff"] > 0  # frames were written
    assert parsed["sgr_squeeze"] == 0
    assert "\x1b[0m\x1b[" not in CountingDriver.last  # the styles are still sent as changes
