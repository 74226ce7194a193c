"""Raw bytes of a training log → frames of text.

A *frame* is what a terminal would show between two carriage returns or newlines: Keras and tqdm redraw
their bars with ``\\r`` (and Keras with backspaces), so one physical line can hold thousands of frames.
Rules (``docs/log-formats.md``):

- the bytes are split on ``\\n`` and ``\\r`` *before* decoding (neither byte occurs inside a UTF-8
  sequence), then decoded with ``errors="replace"``, so invalid UTF-8 never stops the parse;
- ANSI CSI sequences are removed; backspaces move the cursor left as on a terminal (later characters
  overwrite, trailing ones stay), so Keras' ``text + \\b*N + \\r`` keeps its text;
- a frame is *finished* by the next ``\\r`` or ``\\n``; only finished frames are returned by
  :meth:`Normalizer.feed`. The unfinished tail is kept (bounded) and shown by :attr:`Normalizer.tail`;
- a frame longer than ``max_frame`` bytes keeps its first and last ``max_frame // 2`` bytes joined by
  `` [...] ``: memory stays bounded and the epoch label (head) and metrics (tail) survive. The result
  depends only on the frame's bytes, never on how they were split into reads.
"""

from __future__ import annotations

import re

CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
DEFAULT_MAX_FRAME = 64 * 1024
ELLIPSIS = b" [...] "

#: A finished frame: (physical line number counted from 1, text without trailing whitespace).
Frame = tuple[int, str]


def apply_backspaces(text: str) -> str:
    """Apply ``\\b`` as cursor-left: characters written after it overwrite, nothing is erased."""
    trimmed = text.rstrip("\b")
    if "\b" not in trimmed:
        return trimmed  # Keras: text followed by backspaces only (the common case)
    out: list[str] = []
    pos = 0
    for ch in text:
        if ch == "\b":
            pos = max(0, pos - 1)
        elif pos < len(out):
            out[pos] = ch
            pos += 1
        else:
            out.append(ch)
            pos += 1
    return "".join(out)


def clean(text: str) -> str:
    """ANSI removed, backspaces applied, trailing whitespace dropped."""
    if "\x1b" in text:
        text = CSI.sub("", text)
    if "\b" in text:
        text = apply_backspaces(text)
    return text.rstrip()


class Normalizer:
    """Incremental bytes → finished frames. Feed any read sizes; the frames do not depend on them."""

    __slots__ = ("_head", "_line", "_max", "_overflow", "_pending")

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self._max = max(16, max_frame)
        self._head = self._max // 2
        self._pending = b""  # bytes of the unfinished frame (bounded)
        self._overflow = False  # the unfinished frame was already cut
        self._line = 1  # physical line number of the unfinished frame

    @property
    def line_number(self) -> int:
        """Physical line number (from 1) of the frame being written."""
        return self._line

    @property
    def tail(self) -> str:
        """The unfinished frame, for display only (never parsed into records before it is finished)."""
        return clean(self._bound(self._pending, self._overflow).decode("utf-8", "replace"))

    def _bound(self, frame: bytes, overflow: bool = False) -> bytes:
        if overflow or len(frame) > self._max:
            keep = self._max - self._head
            return frame[: self._head] + ELLIPSIS + frame[-keep:]
        return frame

    def feed(self, data: bytes) -> list[Frame]:
        """Add bytes; return the frames they finished (blank frames are dropped)."""
        if not data:
            return []
        cut = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if cut < 0:
            pending = self._pending + data
            if len(pending) > self._max:
                keep = self._max - self._head
                pending = pending[: self._head] + pending[-keep:]
                self._overflow = True
            self._pending = pending
            return []
        first_overflow = self._overflow
        block = self._pending + data[: cut + 1]
        rest = data[cut + 1 :]
        self._pending, self._overflow = b"", False
        if rest:
            self.feed(rest)  # never contains \r or \n: only updates the pending frame
        return self._frames(block, first_overflow)

    def finish(self) -> list[Frame]:
        """End of input: the unfinished frame counts as finished (a whole file, or a writer that exited)."""
        if not self._pending:
            return []
        frames = self._frames(self._pending + b"\n", self._overflow)
        self._pending, self._overflow = b"", False
        return frames

    def _frames(self, block: bytes, first_overflow: bool) -> list[Frame]:
        out: list[Frame] = []
        line = self._line
        lines = block.split(b"\n")
        last = len(lines) - 1  # the part after the final \n is empty or ends with \r
        first = True
        for index, raw in enumerate(lines):
            if index == last and not raw:
                break
            parts = raw.split(b"\r") if b"\r" in raw else (raw,)
            for part in parts:
                if not part:
                    first = False
                    continue
                if first and first_overflow:
                    part = self._bound(part, True)
                elif len(part) > self._max:
                    part = self._bound(part)
                first = False
                text = part.decode("utf-8", "replace")
                text = clean(text) if ("\x1b" in text or "\b" in text) else text.rstrip()
                if text:
                    out.append((line, text))
            if index < last:
                line += 1
        self._line = line
        return out
