"""The job's output as a person sees it in a terminal: finished lines plus the current frame.

``\\r`` starts the frame again (a progress bar redrawn in place shows its latest frame only), ``\\n`` ends
a line. ANSI colour codes are kept (the screen renders them); bytes are decoded as UTF-8 with
replacement. Memory is bounded: the last ``max_lines`` lines per file, and a frame longer than
``max_frame`` characters keeps its end.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

RECORD_MARK = "@gputui {"


def _is_record_line(text: str) -> bool:
    """A line holding only gputui records (possibly after an ``srun --label`` prefix)."""
    head = text.lstrip()
    if head[:1].isdigit():
        head = head.split(":", 1)[-1].lstrip()
    return head.startswith(RECORD_MARK)


@dataclass
class LogText:
    path: str
    max_lines: int = 5000
    max_frame: int = 4000
    lines: deque[str] = field(init=False)
    current: str = ""  # the unfinished last line (its latest frame)
    total_lines: int = 0
    record_lines: int = 0  # ``@gputui {...}`` lines: records for the charts, not kept as text
    last_data_time: float | None = None
    _pending: bytes = b""
    _cr: bool = False  # the current frame ended with \r: the next text replaces it

    def __post_init__(self) -> None:
        self.lines = deque(maxlen=self.max_lines)

    def feed(self, data: bytes, now: float) -> None:
        if not data:
            return
        self.last_data_time = now
        data = self._pending + data
        # keep an incomplete UTF-8 sequence for the next chunk
        cut = len(data)
        for back in range(1, min(4, len(data)) + 1):
            byte = data[-back]
            if byte & 0xC0 == 0x80:
                continue
            if byte >= 0xC0 and back < (2 if byte < 0xE0 else 3 if byte < 0xF0 else 4):
                cut = len(data) - back
            break
        self._pending = data[cut:]
        text = data[:cut].decode("utf-8", "replace")
        parts = text.split("\n")
        for i, part in enumerate(parts):
            frame = part if self._cr and part.strip("\r") else self.current + part
            if part:
                self._cr = part.endswith("\r")
            if "\r" in frame:
                frames = [f for f in frame.split("\r") if f]
                frame = frames[-1] if frames else ""
            if i < len(parts) - 1:
                self.total_lines += 1
                if RECORD_MARK in frame and _is_record_line(frame):
                    self.record_lines += 1
                    if self.lines and not self.lines[-1]:
                        self.lines.pop()  # the reporter's blank line before its records
                else:
                    self.lines.append(frame[-self.max_frame :])
                self.current = ""
                self._cr = False
            else:
                self.current = frame[-self.max_frame :]

    def reset(self, why: str) -> None:
        """The file was truncated or replaced (``why``): say so in the text, start a fresh frame. A
        ``deleted`` file is only said: what is still written to it goes on (see :meth:`note`)."""
        if why == "deleted":
            self.note(f"── {self.path} was deleted: showing what is still written to it ──")
            return
        if self.current:
            self.lines.append(self.current)
        self.lines.append(f"── {self.path} {why}: reading it again from the start ──")
        self.current = ""
        self._pending = b""
        self._cr = False

    def note(self, message: str) -> None:
        """A line of gputui's own in the text, after the finished lines and before the current frame
        (an unfinished progress bar goes on being redrawn below it)."""
        self.lines.append(message)

    def view(self) -> list[str]:
        """Every kept line, the current frame last (when there is one)."""
        out = list(self.lines)
        if self.current:
            out.append(self.current)
        return out
