"""THE file follower of gputui: polling (network filesystems give other clients' writes no inotify
events), constant memory, never re-reading from the start.

:class:`FileFollower` keeps an open descriptor and an offset and reads only new bytes, at most
``max_bytes`` per :meth:`~FileFollower.poll` (so starting on a 1 GB log streams it through in pieces;
``more`` says another poll has data at once). It handles:

- a missing file (not created yet): ``poll`` returns nothing until it appears;
- a deleted file (the path gone while open): said once (``notice="deleted"``); the open descriptor is
  read on, since the job usually still writes to it, and when a file appears at the path again it is
  read from 0 with ``reset="created"``. (The deleted file's space stays in use until the follower
  is closed, as with ``tail -f``.)
- truncation (size below the offset on the same inode): restart at 0, ``reset="truncated"``;
- truncate-and-rewrite between two polls (``--open-mode=truncate`` on a requeue, ``> file``), where
  the new content is already as long as the old offset: the follower keeps a fingerprint, the last
  up to 64 bytes it returned (the bytes just before the offset). On a poll that finds the file
  changed (size above the offset, or the same size with a new mtime) it reads as usual and then
  checks with one ``pread`` of those <= 64 bytes that they are still there; if not, the data just
  read is dropped and the file is read from 0 with ``reset="truncated"``. Checking after the read
  also catches a rewrite racing the read. Idle polls (same size, same mtime) read nothing;
- rotation or replacement (the path now names another inode): the old descriptor is drained first
  (a writer may still append to the renamed file), then the new file is read from 0, ``reset="rotated"``;
- a partial last line: bytes are returned as they come; the consumer (:class:`~gputui.logs.normalize.
  Normalizer`) keeps the unfinished frame, so nothing is parsed twice.

Limitation: a rewrite that leaves the bytes just before the offset identical (for instance a job that
prints the same first lines again and has reached at least the old offset) cannot be told from an
append, and is read on from the old offset; so is a same-size rewrite whose last 64 bytes match.
Conversely, a writer that edits those bytes in place is treated as a rewrite.

:class:`LogFollower` joins a follower and a :class:`~gputui.logs.parser.LogParser` (a new parser after
a reset). A reset or a deletion is never silent: ``on_reset(why)`` puts a line in the log pane (after
``"deleted"`` the text goes on) and a ``warning`` event reaches the banner (for a reset, once text was
parsed: a new run). The Slurm ``attach`` side reuses both. Catching up on a large file (more than one
read behind): the log pane gets the file's tail first (:mod:`gputui.logs.catchup`), the parser reads
the history in catch-up mode (:mod:`gputui.logs.thinning`), ``on_progress`` tells how far it is.
``on_unread`` hears the parser's count of lines that look like metrics but gave no record
(:mod:`gputui.logs.unread`) whenever it changed; :meth:`LogFollower.reread` parses what was read again
from the start with a new parser (a pattern taught since: :mod:`gputui.logs.formats.taught`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from gputui.logs.catchup import TAIL_BYTES, read_tail
from gputui.logs.parser import LogParser
from gputui.stream.records import Record, event

DEFAULT_MAX_BYTES = 4 << 20
FINGERPRINT_BYTES = 64
MAX_UNREAD_EXAMPLES = 16
#: (lines, shapes, ((lines, example line) per shape, most lines first)) of a log's unread lines
UnreadCount = tuple[int, int, tuple[tuple[int, str], ...]]


@dataclass(slots=True)
class Change:
    data: bytes
    reset: str | None = None  # None | "created" | "truncated" | "rotated"
    more: bool = False  # more bytes are ready: poll again without waiting
    notice: str | None = None  # "deleted": the path is gone (told once; the open file is read on)


class FileFollower:
    """Poll one path for new bytes; see the module docstring for what is detected."""

    def __init__(
        self, path: str | os.PathLike[str], *, from_end: bool = False, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        self.path = os.fspath(path)
        self.from_end = from_end
        self.max_bytes = max(1, max_bytes)
        self.offset = 0
        self._fd: int | None = None
        self._ino: tuple[int, int] | None = None
        self._opened_once = False
        self._tail = b""  # the bytes just before ``offset`` (at most FINGERPRINT_BYTES); b"": no check
        self._mtime = 0  # st_mtime_ns seen by the last poll
        self._deleted = False  # the path was gone at the last poll (the open file is still read)

    @property
    def exists(self) -> bool:
        return self._fd is not None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
        self._fd, self._ino, self._deleted = None, None, False

    def __enter__(self) -> FileFollower:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> str | None:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return None
        st = os.fstat(fd)
        self._fd, self._ino, self._mtime = fd, (st.st_dev, st.st_ino), st.st_mtime_ns
        reset = "created" if self._opened_once else None
        self.offset, self._tail = 0, b""
        if self.from_end and not self._opened_once:
            # Starting at the end: fingerprint the bytes before it, so that a rewrite before our first
            # read is caught too. A short read (truncated meanwhile) leaves no fingerprint.
            n = min(FINGERPRINT_BYTES, st.st_size)
            tail = os.pread(fd, n, st.st_size - n)
            self.offset, self._tail = st.st_size, tail if len(tail) == n else b""
        self._opened_once = True
        return reset

    def _advance(self, data: bytes) -> None:
        self.offset += len(data)
        if len(data) >= FINGERPRINT_BYTES:
            self._tail = data[-FINGERPRINT_BYTES:]
        elif data:
            self._tail = (self._tail + data)[-FINGERPRINT_BYTES:]

    def _read(self, limit: int) -> bytes:
        assert self._fd is not None
        data = os.pread(self._fd, limit, self.offset)
        self._advance(data)
        return data

    def _tail_intact(self) -> bool:
        """Are the fingerprinted bytes still just before ``offset``? (one pread of <= 64 bytes)"""
        assert self._fd is not None
        n = len(self._tail)
        return n == 0 or os.pread(self._fd, n, self.offset - n) == self._tail

    def _restart(self) -> str:
        self.offset, self._tail = 0, b""
        return "truncated"

    def poll(self) -> Change:
        """New bytes since the last poll (possibly empty)."""
        reset = None
        if self._fd is None:
            reset = self._open()
            if self._fd is None:
                return Change(b"")
        try:
            st = os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            st = None
        if st is not None and (st.st_dev, st.st_ino) != self._ino:
            rest = self._read(self.max_bytes)  # drain what the old file still holds
            if rest:
                return Change(rest, reset, more=True)
            was_deleted = self._deleted
            self.close()
            self._open()
            if self._fd is None:  # gone again between stat and open
                return Change(b"", reset)
            reset = "created" if was_deleted else "rotated"  # _open started it at 0, no fingerprint
        notice = None
        if st is None and not self._deleted:
            notice = "deleted"  # said once; the open descriptor is read on (its writer may go on)
        self._deleted = st is None
        fst = os.fstat(self._fd)
        size = fst.st_size
        changed = size != self.offset or fst.st_mtime_ns != self._mtime
        self._mtime = fst.st_mtime_ns
        if size < self.offset:
            reset = self._restart()
        data = (
            os.pread(self._fd, min(self.max_bytes, size - self.offset), self.offset)
            if size > self.offset
            else b""
        )
        if changed and not self._tail_intact():  # rewritten past our offset since the last poll
            reset = self._restart()
            data = os.pread(self._fd, min(self.max_bytes, size), 0)
        self._advance(data)
        return Change(data, reset, more=self.offset < size, notice=notice)


class LogFollower:
    """Follow a text log and parse it: :meth:`poll` gives the records of newly finished frames."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        formats: str = "auto",
        job: str | None = None,
        from_end: bool = False,
        max_bytes: int = DEFAULT_MAX_BYTES,
        on_reset: Callable[[str], None] | None = None,
        on_data: Callable[[bytes], None] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        on_unread: Callable[[UnreadCount], None] | None = None,
    ) -> None:
        self.file = FileFollower(path, from_end=from_end, max_bytes=max_bytes)
        self.formats, self.job = formats, job
        self.parser = LogParser(formats, job=job, path=self.file.path)
        # "truncated"/"rotated"/"created": the text starts again; "deleted": a notice, the text goes on
        self.on_reset = on_reset
        self.on_data = on_data  # the raw bytes as read (the dashboard's log pane shows them)
        self.on_progress = on_progress  # (bytes read, file size) while catching up, then (n, n) once
        self.on_unread = on_unread  # the unread lines' count, when it changed
        self._unread_told: UnreadCount = (0, 0, ())
        self._text_from = 0  # bytes before this offset were not given to on_data (the tail went first)
        self._catching_up = False

    @property
    def tail(self) -> str:
        return self.parser.tail

    def poll(self, *, max_rounds: int = 64) -> list[Record]:
        """Records of what was appended since the last poll. While more than one read is waiting (a
        large file being caught up), the parser is in catch-up mode (:mod:`gputui.logs.thinning`)."""
        out: list[Record] = []
        for _ in range(max_rounds):
            change = self.file.poll()
            if change.reset in ("truncated", "rotated", "created"):
                if self.parser.frames:  # what follows is a new run: the epoch table must not merge them
                    out.append(
                        event(
                            "warning",
                            message=f"{os.path.basename(self.file.path)} was {change.reset} and is written"
                            " again: a new run starts",
                            reset=change.reset,
                            path=self.file.path,
                        )
                    )
                self.parser = LogParser(self.formats, job=self.job, path=self.file.path)
                self._text_from, self._catching_up = 0, False
                if self.on_reset is not None:
                    self.on_reset(change.reset)
            if change.notice == "deleted":  # said before the bytes read with it (most come after)
                out.append(self._deleted_event())
            if change.data:
                end = self.file.offset
                if change.more and not self._catching_up:
                    self._start_catching_up(end - len(change.data))
                if self.on_data is not None and end > self._text_from:
                    self.on_data(change.data[max(0, self._text_from - (end - len(change.data))) :])
                self.parser.thin = change.more
                out.extend(self.parser.feed(change.data))
                if self._catching_up and self.on_progress is not None:
                    self.on_progress(end, max(end, self._size()))
            if not change.more:
                if self._catching_up:
                    self._catching_up = False
                    if self.on_progress is not None:
                        self.on_progress(self.file.offset, self.file.offset)
                break
        self._tell_unread()
        return out

    def _tell_unread(self) -> None:
        if self.on_unread is None:
            return
        listed = self.parser.unread.listed()
        count = (
            sum(s.count for s in listed),
            len(listed),
            tuple((s.count, s.example) for s in listed[:MAX_UNREAD_EXAMPLES]),
        )
        if count != self._unread_told:
            self._unread_told = count
            self.on_unread(count)

    def reread(self) -> list[Record]:
        """The records of everything read so far, parsed again from the start by a new parser (with the
        patterns in effect now); the text is not given to ``on_data`` again, and records without a
        printed time are marked ``estimated``. Later polls go on from where the follower was."""
        self.parser = LogParser(self.formats, job=self.job, path=self.file.path)
        out: list[Record] = []
        fd, end, at = self.file._fd, self.file.offset, 0
        while fd is not None and at < end:
            data = os.pread(fd, min(self.file.max_bytes, end - at), at)
            if not data:
                break
            at += len(data)
            self.parser.thin = at < end  # catch-up mode while more is waiting, as poll() reads
            out.extend(self.parser.feed(data))
            if self.on_progress is not None:
                self.on_progress(at, end)
        self.parser.thin = False
        for record in out:  # all parsed now: when each line was written is not known (no epoch times)
            if record.fields.get("time_source") == "read":
                record.fields["time_source"] = "estimated"
        self._tell_unread()
        return out

    def _deleted_event(self) -> Record:
        """The output file was deleted: a warning, and ``on_reset("deleted")`` (a line in the log pane);
        what the job still writes to the open file is shown, and a new file at the path when one comes."""
        if self.on_reset is not None:
            self.on_reset("deleted")
        name = os.path.basename(self.file.path)
        return event(
            "warning",
            message=f"{name} was deleted: showing what is still written to it, and a new {name} if one"
            " appears",
            path=self.file.path,
        )

    def _size(self) -> int:
        try:
            return os.stat(self.file.path).st_size
        except OSError:
            return 0

    def _start_catching_up(self, start: int) -> None:
        """Behind by more than one read: the log pane gets the file's tail now (a person wants the last
        screen, not the first), the bytes before it are parsed without being shown."""
        self._catching_up = True
        size = self._size()
        if self.on_data is None or start > 0 or size <= TAIL_BYTES:
            return
        try:
            tail = read_tail(self.file.path, size)
        except OSError:
            return
        self._text_from = size
        if tail:
            self.on_data(tail)

    def finish(self) -> list[Record]:
        """The writer is done (job ended): parse the unfinished frame and decide the outcome."""
        out = self.poll()
        out.extend(self.parser.finish())
        self._tell_unread()
        self.file.close()
        return out

    def follow(self, interval: float = 0.1, stop: Callable[[], bool] | None = None) -> Iterator[Record]:
        """Records as they appear, polling every ``interval`` seconds until ``stop()`` is true."""
        while stop is None or not stop():
            records = self.poll()
            yield from records
            if not records:
                time.sleep(interval)
