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

Speed: a block is split on ``\\n`` once; a plain line is decoded and stripped as one frame; a line of
``\\r`` frames is decoded once and split; Keras' trailing backspace runs are dropped on the bytes. Only
a backspace inside a frame or an over-long frame takes the frame-by-frame path (:meth:`_frames_slow`,
the reference the fast path is tested against). An optional *gate* (bytes → offsets, see
:func:`gputui.logs.outcome.gate`) marks in :attr:`Normalizer.hot` the lines that may hold an outcome
signal, so the other frames can skip those checks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import repeat

CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
DEFAULT_MAX_FRAME = 64 * 1024
ELLIPSIS = b" [...] "

#: A finished frame: (physical line number counted from 1, text without trailing whitespace).
Frame = tuple[int, str]
#: Bytes → offsets where something of interest may start (a superset; see ``OutcomeTracker.gate``).
Gate = Callable[[bytes], list[int]]


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

    __slots__ = ("_gate", "_head", "_line", "_max", "_overflow", "_pending", "hot")

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME, gate: Gate | None = None) -> None:
        self._max = max(16, max_frame)
        self._head = self._max // 2
        self._pending = b""  # bytes of the unfinished frame (bounded)
        self._overflow = False  # the unfinished frame was already cut
        self._line = 1  # physical line number of the unfinished frame
        self._gate = gate
        #: Line numbers of the last frames returned that the gate flagged; ``None``: every line.
        self.hot: set[int] | None = None

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
        """Frames of a block that ends with ``\\r`` or ``\\n`` (C-speed splits, one decode per line).

        A plain line (no ``\\r``, backspace or escape) is one frame; other lines go through
        :meth:`_split_line`. Sets :attr:`hot`: the lines where the gate found something.
        """
        if first_overflow:
            self.hot = None
            frames = self._frames_slow(block, True)
            self._line += block.count(b"\n")
            return frames
        gate = self._gate
        hot: set[int] | None = None
        out: list[Frame] = []
        append = out.append
        line = first = self._line
        lines = block.split(b"\n")
        tail = lines.pop()  # empty, or the rest of a line ended by \r only
        limit = self._max
        for raw in lines:
            if 13 in raw or 8 in raw or 27 in raw or len(raw) > limit:  # \r, \b, ESC (int: no buffer)
                hot = self._split_line(raw, line, out, hot)
            else:
                text = raw.decode("utf-8", "replace").rstrip()
                if text:
                    append((line, text))
            line += 1
        if tail:
            hot = self._split_line(tail, line, out, hot)
        self._line = line
        if gate is not None:
            hot = hot or set()
            at, number = 0, first
            for hit in gate(block):
                number += block.count(b"\n", at, hit)
                at = hit
                hot.add(number)
        self.hot = hot if gate is not None else None
        return out

    def _split_line(self, raw: bytes, line: int, out: list[Frame], hot: set[int] | None) -> set[int] | None:
        """The frames of one physical line with ``\\r``, backspaces, escapes or a long part. Returns
        ``hot`` plus this line where the raw bytes cannot stand for the text (the gate reads bytes)."""
        parts = raw.split(b"\r")
        if len(raw) > self._max and max(map(len, parts)) > self._max:
            out.extend(self._frames_slow(raw + b"\n", False, line))
            return (hot or set()) | {line}
        cleaned = 27 in raw  # ESC
        if 8 in raw:  # Keras: text + \b*N + \r. Backspaces only at frame ends are just dropped
            trimmed = b"\r".join(map(bytes.rstrip, parts, repeat(b"\x08")))
            if 8 not in trimmed:
                raw = trimmed
            else:
                cleaned = True
        text = raw.decode("utf-8", "replace")
        if "\x1b" in text:
            text = CSI.sub("", text)  # never spans a \r: the same as frame by frame
        frames = [(apply_backspaces(p) if "\b" in p else p).rstrip() for p in text.split("\r")]
        out.extend([(line, f) for f in frames if f])
        if cleaned and self._gate is not None and self._gate("\r".join(frames).encode()):
            return (hot or set()) | {line}
        return hot

    def _frames_slow(self, block: bytes, first_overflow: bool, line: int | None = None) -> list[Frame]:
        """Frame by frame, bounding each frame (the reference behaviour of the fast path)."""
        out: list[Frame] = []
        line = self._line if line is None else line
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
                text = clean(part.decode("utf-8", "replace"))
                if text:
                    out.append((line, text))
            if index < last:
                line += 1
        return out
