"""Tail first: what a dashboard shows of a large log before its history has been read.

Opening a job whose output is already 1 GB must not make the user wait for the whole file: the reader
takes the last :data:`TAIL_BYTES` (from the first line that starts in them), shows them in the log pane
and, for a replay, parses them with a fresh parser for the current epoch and latest values. The full
history is then back-filled from the start in catch-up mode (:mod:`gputui.logs.thinning`), with progress
reported, and replaces the preview once read.
"""

from __future__ import annotations

import os

from gputui.logs.parser import LogParser
from gputui.records import Record

#: How much of a log's end is shown (and previewed) first.
TAIL_BYTES = 256 << 10
#: Logs at least this large get a preview before their history is read.
PREVIEW_MIN_BYTES = 16 << 20


def read_tail(path: str | os.PathLike[str], size: int, nbytes: int = TAIL_BYTES) -> bytes:
    """The last ``nbytes`` of the first ``size`` bytes of ``path``, from the first line start in them
    (the whole of it when it is shorter)."""
    start = max(0, size - nbytes)
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(size - start)
    if start > 0:
        cut = data.find(b"\n")
        data = data[cut + 1 :] if cut >= 0 else b""
    return data


def preview_records(
    path: str | os.PathLike[str], size: int, *, formats: str = "auto", job: str | None = None
) -> list[Record]:
    """Records of the log's tail, read by a parser that starts there (no outcome: the file goes on)."""
    parser = LogParser(formats, job=job)
    parser.thin = True
    records = parser.feed(read_tail(path, size))
    records += parser.finish(outcome=False)
    return records
