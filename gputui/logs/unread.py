"""What was not understood: lines that look like metrics but gave no record, counted per shape.

A line *looks like a metric line* when, after its log prefix, it has words and at least two numbers, one
of them with a fraction or an exponent (``iter 120 => l=0.52 @ 0.31s``); prose, counters alone, digits of
names (``adam_beta1``), module and tensor printouts, tracebacks, drawn tables and progress bars do not. A
shape (the line with its digits, spaces and number punctuation deleted, as :mod:`gputui.logs.thinning`
shapes frames) is *listed* once :data:`MIN_LINES` of its lines were not read and their numbers changed.
Work is per shape, not per line: a line costs one ``translate`` and one dict lookup; the test above runs
once per new shape. Memory is bounded: :data:`MAX_TRACKED` shapes are kept (more lines are counted, not
listed).

In catch-up mode the parser sees only some frames of a run (:mod:`gputui.logs.thinning`); every skipped
frame has the shape of a kept one of its block, so a block's unread lines are counted from the shapes of
all its frames (:meth:`Unread.block`): the counts are those of a full read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gputui.logs.bounded import remember
from gputui.logs.formats.extract import PREFIX
from gputui.logs.thinning import SHAPE_DELETE

MAX_TRACKED = 64
MAX_VERDICTS = 4096
#: a shape is listed once this many of its lines were not read (a setting printed once per rank is not)
MIN_LINES = 3
# a number on its own, not a digit of a name (``beta1``, ``layer1.0.conv1``); a unit may follow (``310ms``)
NUMBER = re.compile(r"(?<![A-Za-z_\d.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\d.])")
MEASURED = re.compile(r"(?<![A-Za-z_\d.])\d+\.\d|(?<![A-Za-z_\d.])\d[eE][-+]?\d")
WORD = re.compile(r"[A-Za-z]{2,}")
# lines with numbers that are not metrics of the run: module and tensor printouts, tuples and lists of
# values, traceback frames, tables drawn with bars (nvidia-smi), progress bars of any library (their
# parsers read the frames that hold metrics) and tool chatter (wandb's uploads)
NOT_METRICS = re.compile(
    r"^\s*(?:\(\w+\):\s*)?[A-Z]\w*\("
    r"|torch\.Size\(|\barray\(|\btensor\("
    r"""|^\s*[\[(]\s*['"]|\[['"]|^\s*File "|^\s*[|+]|(?:/[\w.-]+){3}"""
    r"|it/s\b|s/it\b|\d%\s*\||[━─█▏▎▍▌▋▊▉]|\[[=>.]{5,}\]"
    r"|^\s*wandb:"
)
TF_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] \S+\] ")  # TensorFlow's C++ log


@dataclass
class UnreadShape:
    """One shape of unread lines: an example line, how many lines, whether their numbers changed."""

    example: str
    count: int = 0
    changed: bool = False


def looks_like_metrics(text: str) -> bool:
    """Words and at least two numbers after the log prefix, one of them measured (a fraction), and none of
    the shapes of :data:`NOT_METRICS` (printouts, tables, progress bars: they are no miss)."""
    text = TF_PREFIX.sub("", text)
    m = PREFIX.match(text)
    body = text[m.end() :] if m is not None else text
    if WORD.search(body) is None or not MEASURED.search(body) or len(NUMBER.findall(body)) < 2:
        return False
    return NOT_METRICS.search(body) is None and NOT_METRICS.match(text) is None


class Unread:
    """The unread shapes of one log (all its ranks)."""

    def __init__(self) -> None:
        self.shapes: dict[bytes, UnreadShape] = {}
        self.untracked = 0  # lines of metric-looking shapes past MAX_TRACKED
        self._verdicts: dict[bytes, bool] = {}
        self._thin: dict[bytes, UnreadShape] = {}  # catch-up frame shape → its unread shape

    def see(self, text: str, frame_shape: bytes | None = None) -> None:
        """A frame that gave no record. ``frame_shape``: its catch-up shape (counted by :meth:`block`)."""
        key = text.encode("utf-8", "replace").translate(None, SHAPE_DELETE)
        entry = self.shapes.get(key)
        if entry is None:
            verdict = self._verdicts.get(key)
            if verdict is None:
                verdict = remember(self._verdicts, key, looks_like_metrics(text), MAX_VERDICTS)
            if not verdict:
                return
            if len(self.shapes) >= MAX_TRACKED:
                if frame_shape is None:
                    self.untracked += 1
                return
            entry = self.shapes[key] = UnreadShape(text)
        elif not entry.changed and text != entry.example:
            entry.changed = True
        if frame_shape is None:
            entry.count += 1
        else:
            remember(self._thin, frame_shape, entry, MAX_VERDICTS)  # the shapes met again are mapped again

    def read(self, frame_shape: bytes) -> None:
        """A catch-up frame of this shape gave records: its shape is no longer counted as unread."""
        self._thin.pop(frame_shape, None)

    def block(self, kept: list[bytes], every: list[bytes]) -> None:
        """Catch-up: count the unread lines of a block from the shapes of the frames kept and of all."""
        if not self._thin:
            return
        for shape in set(kept).intersection(self._thin):
            entry = self._thin[shape]
            n = every.count(shape)
            entry.count += n
            if n > 1:
                entry.changed = True  # its lines were not all read: several lines of a metric shape

    def listed(self) -> list[UnreadShape]:
        """The shapes that repeat with changing numbers, most lines first."""
        found = [s for s in self.shapes.values() if s.count >= MIN_LINES and s.changed]
        return sorted(found, key=lambda s: -s.count)

    def summary(self) -> tuple[int, int]:
        """(lines, shapes) of :meth:`listed`."""
        found = self.listed()
        return sum(s.count for s in found), len(found)


def unread_line(lines: int, shapes: int, hint: str) -> str:
    """``12,000 lines in 3 shapes were not read: HINT`` (one rule for the CLI and the dashboard)."""
    noun = "line" if lines == 1 else "lines"
    return f"{lines:,} {noun} in {shapes} shape{'' if shapes == 1 else 's'} were not read: {hint}"
