"""The replay source: record files and plain training logs, with a time cursor, still-growing files followed.

Each path is a file or a run directory, resolved to its files and their kinds by
:mod:`gputui.sources.inputs`: record files (JSON lines) are read with the project's record reader, metric
files by their readers; anything else is a training log, parsed by the project's log parser (its text
is shown in the log pane). A log without timestamps is laid out by the step or epoch times it prints
(:mod:`gputui.sources.log_clock`), ending at the file's modification time; one that prints no durations
either has no clock: its records are laid out one per second, and the state says so (``clockless``: no
elapsed time is shown). Lines appended while following get the time they are read. Lines that are not
records are counted (``skipped``), never fatal.

A training log of 16 MiB or more is shown tail first (:mod:`gputui.logs.catchup`): its last part, parsed
on its own, and a "reading history N %" mark while the whole file is read; then the full state.

The cursor starts at the end (the whole run). ``←``/``→`` move it by a fiftieth of the run (at least 1 s),
``space`` plays from it at ``speed``× real time (from the start when at the end), ``[``/``]`` halve and
double the speed. A jump back rebuilds the dashboard state in this thread and hands it over whole; going
forward only adds the records in between. While the cursor is at the end (``live``), data appended to
the files is shown as it comes.
A pattern taught from the dashboard (:meth:`ReplaySource.relearn`) reloads every file from the start, as
a new ``gputui replay`` would: the cursor goes to the end.
"""

from __future__ import annotations

import bisect
import copy
import os
import threading
import time

from gputui.logs.catchup import PREVIEW_MIN_BYTES, preview_records, read_tail
from gputui.logs.files.metric_files import MetricFileFollower
from gputui.logs.follower import LogFollower
from gputui.logs.outcome import has_ended
from gputui.monitor.logtext import LogText
from gputui.monitor.state import DashboardState, JobInfo
from gputui.sources.base import Feed, RecordSource
from gputui.sources.inputs import LOG, RECORDS, RunError, RunFile, run_files
from gputui.sources.log_clock import place
from gputui.sources.record_file import RecordFile
from gputui.stream.records import Record

SPEEDS = (0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
TICK_S = 0.1


class ReplaySource(RecordSource):
    kind = "replay"

    def __init__(self, paths: list[str], thresholds=None, *, follow: bool = True) -> None:
        super().__init__()
        self.paths = paths
        self.follow = follow  # False: read what is there, hand over the state, return (headless)
        self.thresholds = thresholds
        self.records: list[Record] = []
        self.times: list[float] = []
        self.at: float | None = None
        self.playing = False
        self.speed_index = SPEEDS.index(1)
        self.live = True
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._jump: float | None = None  # a cursor target set by the UI
        self._logs: dict[str, LogText] = {}  # the training logs' text so far: a rebuilt state gets a copy
        self._said: list[tuple[str, str, float]] = []  # the source's own notices: a rebuilt state keeps them
        self.skipped = 0
        self._told: dict | None = None  # the last position sent
        self._read: dict[str, tuple[int, int]] = {}  # large logs being read: (bytes read, size)
        self._unread: dict[str, tuple] = {}  # log path → its unread lines (a rebuilt state gets them)
        self._ended: dict[str, tuple] = {}  # log path → (outcome, line) of the run end it said (said once)
        self._relearn: str | None = None  # reload everything (a pattern was taught), saying this note
        self._began: float | None = None  # where the logs' durations say the run began
        self._clocked = False  # some records carry a time or a printed duration
        self._invented = False  # some log printed neither: its records' times are only an order

    def job_info(self) -> JobInfo:
        names = ", ".join(os.path.basename(p) for p in self.paths[:3]) + (" …" if len(self.paths) > 3 else "")
        return JobInfo(kind="replay", title=f"replay {names}", state="RECORDED")

    # ------------------------------------------------------------------ controls (UI thread)

    @property
    def span(self) -> tuple[float, float]:
        """From the run's start (the first record, or earlier where a log's first duration ends there)."""
        if not self.times:
            return (0.0, 0.0)
        return (min(self.times[0], self._began or self.times[0]), self.times[-1])

    def step_s(self) -> float:
        start, end = self.span
        return max(1.0, (end - start) / 50)

    def move(self, steps: float) -> None:
        with self._lock:
            base = self._jump if self._jump is not None else self.at
            if base is None:
                return
            start, end = self.span
            self._jump = min(end, max(start, base + steps * self.step_s()))
        self._wake.set()

    def to_start(self) -> None:
        self.move(-1e12)

    def to_end(self) -> None:
        self.move(1e12)

    def toggle_play(self) -> None:
        with self._lock:
            self.playing = not self.playing
            if self.playing and self.at is not None and self.at >= self.span[1]:
                self._jump = self.span[0]
        self._wake.set()

    def faster(self, by: int = 1) -> None:
        self.speed_index = min(len(SPEEDS) - 1, max(0, self.speed_index + by))
        self._wake.set()

    @property
    def speed(self) -> float:
        return SPEEDS[self.speed_index]

    def relearn(self, note: str = "") -> bool:
        if not self.follow or self.finished.is_set():
            return False
        self._relearn = note
        self._wake.set()
        return True

    # ------------------------------------------------------------------ the worker

    def _open(self, feed: Feed) -> list:
        """A reader per file of each path (:func:`gputui.sources.inputs.run_files`: a file, or a run
        directory's metric files); a path that gives none is said, one line."""
        readers: list = []
        for path in self.paths:
            try:
                files = run_files(path, job_ids=False)
            except RunError as exc:
                self._say(feed, "error", str(exc))
                continue
            readers += [(file.path, self._reader(feed, file)) for file in files]
        return readers

    def _reader(self, feed: Feed, file: RunFile):
        """A follower by the file's kind: records, a training log (its text kept), else a metric file."""
        if file.kind == RECORDS:
            return RecordFile(file.path)
        if file.kind != LOG:
            return MetricFileFollower(file.path)
        path = file.path
        self._logs[path] = LogText(path)
        return LogFollower(
            path,
            on_data=lambda d: self._text(feed, path, d),
            on_reset=lambda why: self._text_reset(feed, path, why),
            on_progress=lambda done, size: self._progress(feed, path, done, size),
            on_unread=lambda count: self._note_unread(feed, path, count),
        )

    def _progress(self, feed: Feed, path: str, done: int, size: int) -> None:
        self._read[path] = (done, size)
        feed.catch_up(sum(d for d, _ in self._read.values()), sum(s for _, s in self._read.values()))

    def _note_unread(self, feed: Feed, path: str, count: tuple) -> None:
        self._unread[path] = count
        feed.unread(path, count)

    def _preview(self, feed: Feed, readers: list) -> None:
        """Tail first: a large log's last part, parsed on its own, is shown while its history is read."""
        big = []
        for path, reader in readers:
            try:
                size = os.path.getsize(path)
            except OSError:
                continue
            if isinstance(reader, LogFollower) and size >= PREVIEW_MIN_BYTES:
                big.append((path, size))
        if not big:
            return
        state = self.new_state(self.thresholds)
        records: list[Record] = []
        for path, size in big:
            try:
                records += self._retime(path, preview_records(path, size))
                tail = read_tail(path, size)
            except OSError:
                continue
            log = state.logs[path] = LogText(path)
            log.feed(tail, time.time())
        records.sort(key=lambda r: r.time)
        state.ingest(records)
        state.clockless = self._invented and not self._clocked
        state.catch_up = (0, sum(size for _, size in big))
        feed.replace_state(state)

    def _say(self, feed: Feed, level: str, message: str) -> None:
        self._said.append((level, message, time.time()))
        feed.say(level, message)

    def _text(self, feed: Feed, path: str, data: bytes) -> None:
        self._logs[path].feed(data, time.time())
        feed.text(path, data)

    def _text_reset(self, feed: Feed, path: str, why: str) -> None:
        """A followed log was rewritten, replaced or deleted: said in its text (kept for rebuilt states)."""
        self._logs[path].reset(why)
        feed.text_reset(path, why)

    def _gained(self, readers: list) -> list[tuple[str, bool, list[Record]]]:
        """What each file gained: (path, whether it is a log or metric file, its records)."""
        out = []
        for path, reader in readers:
            try:
                records = reader.poll()
            except OSError:
                continue
            if records:
                out.append((path, isinstance(reader, LogFollower | MetricFileFollower), records))
        self.skipped = sum(r.stats.skipped for _p, r in readers if isinstance(r, RecordFile))
        return out

    def _poll(self, readers: list) -> list[Record]:
        """Followed lines: those without a printed time get the time they were read (none earlier than
        the last record), still ``estimated`` (no epoch time is measured from them)."""
        new: list[Record] = []
        last = self.times[-1] if self.times else 0.0
        gained = set()
        for path, log, records in self._gained(readers):
            for rec in records if log else ():
                if rec.get("time_source", "read") == "read":
                    rec.time = max(rec.time, last)
                    rec.fields["time_source"] = "estimated"
            new.extend(records)
            gained.add(path)
        return new + self._ended_runs(readers, gained, max([r.time for r in new], default=last))

    def _read_all(self, readers: list) -> list[Record]:
        """Everything there is now; each log's records without a printed time placed once all is read."""
        logs: dict[str, list[Record]] = {}
        new: list[Record] = []
        while batch := self._gained(readers):
            for path, log, records in batch:
                (logs.setdefault(path, []) if log else new).extend(records)
                self._clocked = self._clocked or not log
        for path, records in logs.items():
            new.extend(self._retime(path, records))
        return new + self._ended_runs(readers, set(logs), max((r.time for r in new), default=time.time()))

    def _ended_runs(self, readers: list, gained: set[str], at: float) -> list[Record]:
        """The ``outcome`` event of each log that gained lines and now says its run is over (completed,
        failed), at ``at``: a followed log is never finished, so its parser's final event never comes,
        and without it the dashboard would go on saying the log is followed and an epoch is running."""
        out = []
        for path, reader in readers:
            if path not in gained or not isinstance(reader, LogFollower):
                continue
            outcome = reader.parser.outcome_so_far()
            key = (outcome.get("outcome"), outcome.get("line"))
            if has_ended(key[0]) and self._ended.get(path) != key:
                self._ended[path] = key
                outcome.time = at
                out.append(outcome)
        return out

    def _retime(self, path: str, records: list[Record]) -> list[Record]:
        """Log records read without a printed time: placed by the durations the log prints, else one per
        second (:func:`gputui.sources.log_clock.place`), ending at the file's mtime; ``estimated``."""
        untimed = [r for r in records if r.get("time_source", "read") == "read"]
        self._clocked = self._clocked or len(untimed) < len(records)
        if not untimed:
            return records
        try:
            end = os.stat(path).st_mtime
        except OSError:
            end = time.time()
        placement = place(untimed)
        start = end - placement.total_s
        for rec, offset in zip(untimed, placement.offsets, strict=True):
            rec.time = start + offset
            rec.fields["time_source"] = "estimated"  # placed on the timeline, not measured: no epoch times
        self._began = start if self._began is None else min(self._began, start)
        self._clocked = self._clocked or placement.by is not None
        self._invented = self._invented or placement.by is None
        return records

    def _add(self, records: list[Record]) -> None:
        records.sort(key=lambda r: r.time)
        if self.times and records and records[0].time < self.times[-1]:
            merged = sorted(self.records + records, key=lambda r: r.time)
            self.records, self.times = merged, [r.time for r in merged]
        else:
            self.records.extend(records)
            self.times.extend(r.time for r in records)

    def _state_at(self, at: float) -> DashboardState:
        state = self.new_state(self.thresholds)
        end = bisect.bisect_right(self.times, at)
        state.job.started = self.span[0] if self.times else None
        state.clockless = self._invented and not self._clocked
        state.ingest(self.records[:end])
        state.logs = {path: copy.deepcopy(log) for path, log in self._logs.items()}
        for level, message, when in self._said:
            state.say(level, message, when)
        for path, count in self._unread.items():
            state.training.note_unread(path, *count)
        state.clock = at
        state.skipped = self.skipped
        return state

    def _tell(self, feed: Feed) -> None:
        """Send the cursor's position, only when it changed (each one makes the screen redraw)."""
        start, end = self.span
        position = {
            "start": start,
            "end": end,
            "at": self.at,
            "playing": self.playing,
            "speed": self.speed,
            "live": self.live,
            "skipped": self.skipped,
        }
        if position != self._told:
            self._told = position
            feed.cursor(**position)

    def _load(self, feed: Feed) -> list | None:
        """Open the files, read all there is now, hand over the state (None: nothing to replay, said)."""
        readers = self._open(feed)
        if not readers:
            problems = "; ".join(message for level, message, _ in self._said if level == "error")
            self._say(feed, "error", f"nothing to replay: {problems}" if problems else "nothing to replay")
            return None
        self._preview(feed, readers)
        self._began, self._clocked, self._invented = None, False, False  # the preview's tail said nothing
        self._add(self._read_all(readers))
        if not self.records:
            self._say(feed, "warning", "no records found in " + ", ".join(self.paths))
        if self.skipped:
            self._say(feed, "warning", f"{self.skipped} line(s) were not records and were skipped")
        self.at = self.span[1]
        self.live = True
        feed.replace_state(self._state_at(self.at))
        self._tell(feed)
        return readers

    def _reload(self, feed: Feed, readers: list, note: str) -> list:
        """Everything read again from the start (the patterns in effect now), the cursor at the end."""
        for _path, reader in readers:  # each holds its FileFollower as .file (a record file: .follower)
            (getattr(reader, "file", None) or reader.follower).close()
        self.records, self.times, self.at, self.playing = [], [], None, False
        self._logs, self._said, self._read, self._unread = {}, [], {}, {}
        self._ended = {}
        self.skipped, self._told = 0, None
        if note:
            self._say(feed, "info", note)
        return self._load(feed) or []

    def run(self, feed: Feed) -> None:
        readers = self._load(feed)
        if readers is None or not self.follow:
            return
        last_poll = time.monotonic()
        while not self.stopping.is_set():
            self._wake.wait(TICK_S if self.playing else 0.5)
            self._wake.clear()
            if self.stopping.is_set():
                return
            if self._relearn is not None:
                note, self._relearn = self._relearn, None
                readers = self._reload(feed, readers, note)
                continue
            with self._lock:
                jump, self._jump = self._jump, None
            if jump is not None:
                self._go(feed, jump)
            elif self.playing and self.at is not None:
                target = min(self.span[1], self.at + TICK_S * self.speed)
                self._go(feed, target)
                if target >= self.span[1]:
                    self.playing = False
            if time.monotonic() - last_poll >= 0.5:
                last_poll = time.monotonic()
                self._follow(feed, readers)
            self._tell(feed)

    def _go(self, feed: Feed, target: float) -> None:
        assert self.at is not None
        if target < self.at:
            feed.replace_state(self._state_at(target))
        elif target > self.at:
            lo = bisect.bisect_right(self.times, self.at)
            hi = bisect.bisect_right(self.times, target)
            feed.records(self.records[lo:hi])
        self.at = target
        self.live = target >= self.span[1]

    def _follow(self, feed: Feed, readers: list) -> None:
        new = self._poll(readers)
        if not new:
            return
        was_live = self.live
        before = self.span[1]
        self._add(new)
        if was_live:
            self._go(feed, self.span[1]) if self.span[1] > before else feed.records(new)
