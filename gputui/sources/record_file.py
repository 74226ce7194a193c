"""A record file (JSON lines) read as it grows, for the replay source."""

from __future__ import annotations

from gputui.logs.follower import FileFollower
from gputui.stream.io import DEFAULT_MAX_LINE_BYTES, ReadStats, records_of_line
from gputui.stream.records import Record


class RecordFile:
    """A record file read as it grows: complete lines only, each read as every gputui reader reads it
    (:func:`gputui.stream.io.records_of_line`); bad and overlong lines counted in ``stats``."""

    def __init__(self, path: str) -> None:
        self.follower = FileFollower(path)
        self.partial = b""
        self.stats = ReadStats()
        self.line = 0
        self.dropping = False  # inside an overlong line: skip to its end

    def poll(self) -> list[Record]:
        out: list[Record] = []
        while True:
            change = self.follower.poll()
            if change.reset:
                self.partial, self.dropping = b"", False
            lines = (self.partial + change.data).split(b"\n")
            self.partial = lines.pop()
            if self.dropping and lines:  # the end of an overlong line: already counted
                self.dropping = False
                lines.pop(0)
            for raw in lines:
                self.line += 1
                out.extend(records_of_line(raw, self.line, self.stats))
            if len(self.partial) > DEFAULT_MAX_LINE_BYTES:
                self.line += 1
                self.stats.note("too_long", self.line, f"longer than {DEFAULT_MAX_LINE_BYTES} bytes")
                self.partial, self.dropping = b"", True
            if not change.more:
                return out
