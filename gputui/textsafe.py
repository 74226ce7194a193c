"""Text from outside (job names, log lines, paths) made safe to show on a terminal.

A terminal acts on control characters: ``ESC ] 0 ; … BEL`` sets its title, ``ESC c`` resets it, ``CSI 2 J``
clears it, a lone ``\\r`` or ``\\b`` overwrites what was shown, a bidi override reverses what follows. Rich
and Textual pass ESC and most C0/C1 controls through to the terminal (they drop only BEL, BS, VT, FF and CR;
``Text.from_ansi`` keeps ``ESC c``, C1 ``CSI`` and NUL), so every such text goes through :func:`printable`
before it is printed or drawn:

* complete escape sequences (CSI, OSC/DCS/APC/PM/SOS strings, two- and three-byte escapes) are removed;
* every other control character, and the bidi overrides/isolates, is shown escaped: ``\\x1b``, ``\\n``,
  ``\\u202e``; tab stays a tab.

``keep_colours=True`` keeps SGR sequences (``ESC [ 31 m``) for a view that turns them into styles
(``Text.from_ansi`` in the log pane). Standard library only, no Textual.
"""

from __future__ import annotations

import re

_CSI = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
_STRING = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
_OTHER_ESCAPE = r"\x1b[ -/]*[0-~]"
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_UNSAFE_CHAR = "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"
_PATTERN = re.compile(f"(?P<sequence>{_CSI}|{_STRING}|{_OTHER_ESCAPE})|{_UNSAFE_CHAR}")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def printable(text: str, *, keep_colours: bool = False) -> str:
    """``text`` with escape sequences removed and other control characters shown escaped (see module)."""
    if text.isprintable():  # the common case: nothing to do
        return text

    def replace(match: re.Match[str]) -> str:
        found = match.group()
        if match.group("sequence") is not None:
            return found if keep_colours and _SGR.fullmatch(found) else ""
        if found in _NAMED:
            return _NAMED[found]
        return f"\\x{ord(found):02x}" if ord(found) < 0x100 else f"\\u{ord(found):04x}"

    return _PATTERN.sub(replace, text)
