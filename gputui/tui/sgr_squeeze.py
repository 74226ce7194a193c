"""Fewer colour-code bytes to the terminal: Textual (through Rich) closes every segment with ``ESC[0m`` and
opens the next with its full style, ``ESC[38;5;253;48;5;233m``, even when only the foreground changes.
Over SSH that was 41-51 % of the dashboard's bytes. :class:`SgrSqueezer` rewrites the stream the driver
writes so that each change of style sends only what changed (``ESC[38;5;80m``), with the same colours and
attributes on every character (spaces keep their background; their foreground is not seen and not sent).

Textual-free. It keeps the terminal's style as it goes: a style code (SGR) is held back until text
follows, then the shortest way from the terminal's style to the wanted one is sent (the changed parts, or
a reset and the full style when that is shorter). Cursor moves (``ESC[row;colH``, ``ESC[nC``) and OSC strings
(links) keep the style. Any other control sequence is passed through after the wanted style is sent,
and the terminal's style is then taken as unknown (the next change resets it). A code it does not know
(e.g. double underline) is sent as written, and so is every style code after it until a reset. Each
write ends with the terminal in the style Rich left it in. A write must hold whole escape sequences
(Textual writes whole frames).
"""

from __future__ import annotations

import re
from functools import lru_cache

_TOKEN = re.compile(
    r"\x1b\[([0-9;]*)m"  # a style (SGR)
    r"|\x1b\[[0-9;]*[HC]"  # a cursor move (to a cell, forward)
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # an OSC string (a link, the clipboard)
    r"|\x1b\[[0-9;?<>=]*[ -/]*[@-~]"  # any other CSI sequence
    r"|\x1b."  # any other escape
)
_ATTR_ON = {
    1: "bold",
    2: "dim",
    3: "italic",
    4: "underline",
    5: "blink",
    7: "reverse",
    8: "conceal",
    9: "strike",
}
_ATTR_CODE = {name: str(code) for code, name in _ATTR_ON.items()}
_ATTR_OFF = {22: ("bold", "dim"), 23: ("italic",), 24: ("underline",), 25: ("blink",), 27: ("reverse",),
             28: ("conceal",), 29: ("strike",)}  # fmt: skip
_OFF_CODE = {name: str(code) for code, names in _ATTR_OFF.items() for name in names}

SEEN_ON_BLANK = frozenset({"reverse", "underline", "strike", "conceal"})
Style = tuple[frozenset[str], str | None, str | None]  # attributes, foreground, background (SGR params)
DEFAULT: Style = (frozenset(), None, None)


@lru_cache(maxsize=4096)
def apply_sgr(style: Style, params: str) -> Style | None:
    """``style`` after ``ESC[<params>m``; None when a code is not understood (cached: a screen uses a few
    dozen styles)."""
    attrs, fg, bg = set(style[0]), style[1], style[2]
    codes = params.split(";") if params else ["0"]
    i = 0
    while i < len(codes):
        if not codes[i].isdigit():
            return None
        code = int(codes[i])
        if code in (38, 48):  # 38;5;n or 38;2;r;g;b
            width = {"5": 3, "2": 5}.get(codes[i + 1] if i + 1 < len(codes) else "", 0)
            if not width or i + width > len(codes):
                return None
            colour = ";".join(codes[i : i + width])
            fg, bg = (colour, bg) if code == 38 else (fg, colour)
            i += width
            continue
        if code == 0:
            attrs, fg, bg = set(), None, None
        elif code in _ATTR_ON:
            attrs.add(_ATTR_ON[code])
        elif code in _ATTR_OFF:
            attrs.difference_update(_ATTR_OFF[code])
        elif 30 <= code <= 37 or 90 <= code <= 97:
            fg = str(code)
        elif 40 <= code <= 47 or 100 <= code <= 107:
            bg = str(code)
        elif code == 39:
            fg = None
        elif code == 49:
            bg = None
        else:
            return None
        i += 1
    return frozenset(attrs), fg, bg


def _full(style: Style) -> list[str]:
    attrs, fg, bg = style
    return ["0", *sorted(_ATTR_CODE[a] for a in attrs), *(c for c in (fg, bg) if c)]


@lru_cache(maxsize=4096)
def transition(now: Style | None, want: Style) -> str:
    """The shortest SGR sequence from ``now`` (None: unknown) to ``want``."""
    full = _full(want)
    if now is None:
        return f"\x1b[{';'.join(full)}m"
    attrs, fg, bg = want
    off = now[0] - attrs
    offs = sorted({_OFF_CODE[a] for a in off})
    back_on = {a for a in attrs if _OFF_CODE[a] in offs}  # 22 turns off bold and dim together
    ons = sorted(_ATTR_CODE[a] for a in (attrs - now[0]) | back_on)
    diff = [*offs, *ons]
    if fg != now[1]:
        diff.append(fg or "39")
    if bg != now[2]:
        diff.append(bg or "49")
    if not diff:
        return ""
    codes = full if len(";".join(full)) < len(";".join(diff)) else diff
    return f"\x1b[{';'.join(codes)}m"


class SgrSqueezer:
    """Rewrites what is written to the terminal with minimal style changes (one per terminal).

    :meth:`squeeze` parses a string; :class:`gputui.tui.screen_diff.ScreenDiff`, which parses Textual's
    frames already, hands its pieces to :meth:`want`, :meth:`text`, :meth:`control` and :meth:`sync`
    instead, and cursor moves and OSC strings straight to the output (they keep the style)."""

    def __init__(self) -> None:
        self.shown: Style | None = None  # the terminal's style (None: unknown)
        self.wanted: Style = DEFAULT
        self.opaque = False  # after a code not understood: styles pass as written until a reset

    def squeeze(self, data: str) -> str:
        out: list[str] = []
        self.feed(out, data)
        self.sync(out)
        return "".join(out)

    def feed(self, out: list[str], data: str) -> None:
        """``data`` parsed, its pieces squeezed onto ``out`` (the wanted style not sent yet at its end)."""
        position = 0
        for match in _TOKEN.finditer(data):
            if match.start() > position:
                self.text(out, data[position : match.start()])
            position = match.end()
            params = match.group(1)
            if params is not None:  # a style
                self._style(out, match.group(), params)
            elif match.group().endswith(("H", "C")) or match.group().startswith("\x1b]"):
                out.append(match.group())  # a cursor move, an OSC string (a link): the style stays
            else:
                self.control(out, match.group())
        if position < len(data):
            self.text(out, data[position:])

    def want(self, style: Style) -> None:
        """The next text is in ``style`` (as ``ESC[0;...m`` with its codes would say)."""
        self.opaque, self.wanted = False, style

    def control(self, out: list[str], sequence: str) -> None:
        """A control sequence that may use or change the style: sent after the wanted style."""
        self.sync(out)
        out.append(sequence)
        self.shown = None

    def _style(self, out: list[str], code: str, params: str) -> None:
        resets = params.split(";")[0] in ("", "0")
        if self.opaque and not resets:
            out.append(code)
            return
        wanted = apply_sgr(self.wanted if not self.opaque else DEFAULT, params)
        if wanted is None:  # not understood: the wanted style, then the code as written
            self.sync(out)
            out.append(code)
            self.opaque, self.shown = True, None
            return
        self.opaque, self.wanted = False, wanted

    def text(self, out: list[str], text: str) -> None:
        """``text`` (no escape sequence in it) in the wanted style."""
        if not self._blank_looks_the_same(text):
            self.sync(out)
        out.append(text)

    def _blank_looks_the_same(self, text: str) -> bool:
        """Spaces show only their background (unless reversed, underlined, struck or hidden): a change
        of foreground or weight before them is not sent."""
        shown, wanted = self.shown, self.wanted
        if self.opaque or shown is None or shown[2] != wanted[2] or text.strip(" "):
            return False
        return not (shown[0] | wanted[0]) & SEEN_ON_BLANK

    def sync(self, out: list[str]) -> None:
        """The terminal in the wanted style (each write ends so)."""
        if not self.opaque and self.shown != self.wanted:
            out.append(transition(self.shown, self.wanted))
            self.shown = self.wanted
