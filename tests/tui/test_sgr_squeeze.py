"""The colour-code squeezer (issue 25 part 5): what the terminal shows is unchanged, character by
character, while a style change sends only what changed."""

from __future__ import annotations

import io

from rich.console import Console
from rich.style import Style
from rich.text import Text

from gputui.tui.sgr_squeeze import SgrSqueezer, apply_sgr, transition

ROW = Text.assemble(
    ("│", "#d7af00 on grey7"),
    (" ", "on grey7"),
    ("vm          1 ", "bold grey85 on grey7"),
    ("███████████▍  ", "chartreuse3 on grey7"),
    ("  88%", "grey85 on grey7"),
    (" ▂▃▄▅▆▇█", "dark_cyan on grey7"),
    ("  14.8/40.0 GB ", "grey85 on grey7"),
    (" hot ⚠", "bold yellow on grey7"),
    (" idle", "dim on grey7"),
    (" LOST", "bold red reverse on grey7"),
    (" x", "italic underline strike on rgb(10,20,30)"),
    (" plain", ""),
    (" link", Style(bold=True, link="https://example.org")),
    (" 2u", Style(underline2=True, color="red")),
    (" after", "blue"),
)


def rendered(text: Text) -> str:
    """``text`` as Textual's driver gets it: Rich's segments, each style in full and reset after."""
    console = Console(file=io.StringIO(), color_system="truecolor", force_terminal=True, width=200)
    console.print(text, end="")
    return console.file.getvalue()


def styles(ansi: str) -> list[tuple]:
    """(character, its style as the terminal shows it) for every character, ``default`` colours as none,
    a space's foreground and weight left out (not seen)."""
    decoded = Text.from_ansi(ansi)
    out = []
    for i, char in enumerate(decoded.plain):
        style = decoded.get_style_at_offset(Console(), i)
        colour = None if style.color is None or style.color.is_default else style.color
        back = None if style.bgcolor is None or style.bgcolor.is_default else style.bgcolor
        attrs = (style.bold, style.dim, style.italic, style.underline, style.underline2, style.reverse)
        if char == " " and not (style.underline or style.underline2 or style.reverse or style.strike):
            colour, attrs = None, ()  # a space shows only its background
        out.append((char, colour, back, tuple(bool(a) for a in attrs), style.strike or False, style.link))
    return out


def test_every_character_keeps_its_style_and_fewer_bytes_are_sent():
    original = rendered(ROW) + "\x1b[5;1H" + rendered(ROW)
    squeezed = SgrSqueezer().squeeze(original)
    assert styles(squeezed) == styles(original)
    assert len(squeezed) < 0.8 * len(original)


def test_the_same_stream_in_several_writes_is_squeezed_the_same():
    original = rendered(ROW)
    writes = ["\x1b[" + piece for piece in original.split("\x1b[") if piece]  # cut before each CSI
    squeezer = SgrSqueezer()
    assert styles("".join(squeezer.squeeze(w) for w in writes)) == styles(original)


def test_a_change_of_foreground_sends_the_foreground_only():
    grey = apply_sgr((frozenset(), None, None), "38;5;253;48;5;233")
    cyan = apply_sgr(grey, "0;38;5;80;48;5;233")
    assert transition(grey, cyan) == "\x1b[38;5;80m"
    assert transition(apply_sgr(grey, "1;2"), apply_sgr(grey, "2")) == "\x1b[22;2m"  # 22 ends bold and dim
    assert transition(None, grey) == "\x1b[0;38;5;253;48;5;233m"  # the terminal's style unknown: in full


def test_other_sequences_pass_through_and_the_style_is_then_sent_in_full():
    squeezer = SgrSqueezer()
    out = squeezer.squeeze("\x1b[1mA\x1b[0m\x1b[?2026h\x1b[1mB\x1b[0m\x1b]52;c;eA==\x07C")
    assert out == "\x1b[0;1mA\x1b[0m\x1b[?2026h\x1b[0;1mB\x1b]52;c;eA==\x07\x1b[0mC"


def test_a_change_of_foreground_before_spaces_is_not_sent():
    squeezer = SgrSqueezer()
    assert (
        squeezer.squeeze("\x1b[38;5;1mA\x1b[0m\x1b[38;5;2m   \x1b[0m\x1b[38;5;1mB") == "\x1b[0;38;5;1mA   B"
    )
    assert squeezer.squeeze("\x1b[0m\x1b[4m  ") == "\x1b[0;4m  "  # underlined spaces are seen: sent
