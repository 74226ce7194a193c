"""Frames Textual wrote, recorded (``python benchmarks/writer_chain.py record``: the attach dashboard for
20 s at 160×45), and the writer chain as it was before it became one pass, kept only to compare against
(tests/tui/test_writer_chain.py, benchmarks/writer_chain.py): :class:`TwoPassScreenDiff` is
gputui/tui/screen_diff.py's ScreenDiff sending whole styles before every run, as it did until 2026-11-26,
whose output :meth:`gputui.tui.sgr_squeeze.SgrSqueezer.squeeze` then parsed again to shorten the styles."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from gputui.tui.screen_diff import ScreenDiff
from gputui.tui.sgr_squeeze import SgrSqueezer, Style, transition

FRAMES = Path(__file__).parent / "data" / "attach_frames.jsonl.gz"
SIZE = (160, 45)  # columns, rows they were recorded at


class _Verbatim:
    """In place of ScreenDiff's squeezer: what the diff sent before the chain became one pass, the whole
    style before each run of changed cells (gap cells and text after a control as they are)."""

    def __init__(self) -> None:
        self.pending: Style | None = None

    def feed(self, out: list[str], data: str) -> None:
        out.append(data)

    def sync(self, out: list[str]) -> None:
        pass

    def control(self, out: list[str], sequence: str) -> None:
        out.append(sequence)

    def want(self, style: Style) -> None:
        self.pending = style

    def text(self, out: list[str], text: str) -> None:
        if self.pending is not None:
            out.append(transition(None, self.pending))
            self.pending = None
        out.append(text)


class TwoPassScreenDiff(ScreenDiff):
    """The diff's first pass as it was: the same cells, each run with its whole style (byte for byte the
    frozen copy this replaced, on the recorded frames)."""

    def __init__(self) -> None:
        super().__init__()
        self.squeezer = _Verbatim()  # type: ignore[assignment]


def two_pass(frames: list[str]) -> list[str]:
    """What the old chain sent the terminal for each of ``frames``: diffed, then squeezed."""
    diff, squeezer = TwoPassScreenDiff(), SgrSqueezer()
    return [squeezer.squeeze(diff.diff(frame)) for frame in frames]


def recorded_frames(path: Path = FRAMES) -> list[str]:
    """The strings Textual handed its driver's ``write``, in order."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
