"""Tail first: what a dashboard shows of a large log before its history has been read.

Opening a job whose output is already 1 GB must not make the user wait for the whole file: the reader
takes the last :data:`TAIL_BYTES` (from the first line that starts in them), shows them in the log pane
and, for a replay, parses them with a fresh parser for the current epoch and latest values. The full
history is then back-filled from the start in catch-up mode (:mod:`gputui.logs.thinning`), with progress
reported, and replaces the preview once read.
"""

from __future__ import annotations

import os
from typing import BinaryIO

from gputui.logs.parser import LogParser
from gputui.stream.records import Record

#: How much of a log's end is shown (and previewed) first.
TAIL_BYTES = 256 << 10
#: Logs at least this large get a preview before their history is read.
PREVIEW_MIN_BYTES = 16 << 20
#: How far back the start of one long unfinished line is looked for (the lines before it are shown).
LINE_SEARCH_BYTES = 64 << 20


def read_tail(path: str | os.PathLike[str], size: int, nbytes: int = TAIL_BYTES) -> bytes:
    """The last ``nbytes`` of the first ``size`` bytes of ``path``, from the first line start in them
    (the whole of it when it is shorter).

    When one unfinished line fills those bytes (a progress bar redrawn with ``\\r`` for hours, never
    ended by a newline), that is its latest frame, and before it the lines that precede the long line
    (up to ``nbytes`` of them), found by searching back at most :data:`LINE_SEARCH_BYTES`."""
    start = max(0, size - nbytes)
    with open(path, "rb") as f:
        data = _pread(f, start, size)
        if start == 0 or 0 <= data.find(b"\n") < len(data) - 1:
            return _from_line_start(data, start)
        begin = _line_start(f, start, nbytes)
        if begin is None:  # a line longer than the search: its latest frame only
            return _latest_frames(data)
        before_start = max(0, begin - nbytes)
        before = _from_line_start(_pread(f, before_start, begin), before_start)
    return before + _latest_frames(data)


def _pread(f: BinaryIO, start: int, end: int) -> bytes:
    f.seek(start)
    return f.read(end - start)


def _from_line_start(data: bytes, start: int) -> bytes:
    """``data`` read from offset ``start``, from its first line start; when no line starts in it before
    its last byte (the end of one long line), that line's latest frame."""
    if start == 0:
        return data
    cut = data.find(b"\n")
    if cut < 0 or cut == len(data) - 1:
        return _latest_frames(data)
    return data[cut + 1 :]


def _latest_frames(data: bytes) -> bytes:
    """The part of a line's end that holds its latest ``\\r`` frame (the bytes from the ``\\r`` before it),
    or all of ``data`` when it has no ``\\r``."""
    cut = data.rstrip(b"\r\n").rfind(b"\r")
    return data[cut:] if cut >= 0 else data


def _line_start(f: BinaryIO, end: int, chunk: int) -> int | None:
    """The offset just after the last newline before ``end`` (0 at the file's start); None when there is
    none within :data:`LINE_SEARCH_BYTES`."""
    pos = end
    while pos > 0 and end - pos < LINE_SEARCH_BYTES:
        start = max(0, pos - chunk)
        cut = _pread(f, start, pos).rfind(b"\n")
        if cut >= 0:
            return start + cut + 1
        pos = start
    return 0 if pos == 0 else None


def preview_records(
    path: str | os.PathLike[str], size: int, *, formats: str = "auto", job: str | None = None
) -> list[Record]:
    """Records of the log's tail, read by a parser that starts there (no outcome: the file goes on)."""
    parser = LogParser(formats, job=job, path=os.fspath(path))
    parser.thin = True
    records = parser.feed(read_tail(path, size))
    records += parser.finish(outcome=False)
    return records
