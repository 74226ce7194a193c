"""The record-source interface and the thread-safe feed between a source and the dashboard state.

A :class:`RecordSource` runs (blocking) in a worker thread and writes what it learns into a
:class:`Feed`: records, raw output text, job information, one-line notices. The consumer (the UI thread,
or ``demo --headless``) calls :meth:`Feed.apply` to move everything into a
:class:`~gputui.monitor.state.DashboardState`. ``notify`` is called once when the feed goes from empty to
non-empty, so a UI posts one message per batch, never one per record. A source that produces faster than
the consumer applies is slowed down (bounded memory).

A running source is owned by gputui (:func:`gputui.hangup.own`): however gputui ends (the dashboard's ``q``,
a signal, the interpreter exiting after an error) it is stopped, so its probe step or local ranks end.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from gputui.hangup import own, release
from gputui.monitor.state import DashboardState, JobInfo
from gputui.stream.records import Record

MAX_PENDING_RECORDS = 200_000


class Feed:
    def __init__(
        self,
        notify: Callable[[], None] | None = None,
        *,
        max_pending: int = MAX_PENDING_RECORDS,
        tap: Callable[[list[Record]], None] | None = None,
    ):
        self._notify = notify
        self._tap = tap  # sees every batch of records as it is applied (``demo --record FILE``)
        self._lock = threading.Lock()
        self._items: list[tuple[Any, ...]] = []
        self._pending_records = 0
        self.max_pending = max_pending
        self.closed = threading.Event()  # set by the consumer when it goes away: producers stop waiting

    def _put(self, item: tuple[Any, ...], records: int = 0) -> None:
        while self._pending_records > self.max_pending and not self.closed.is_set():
            time.sleep(0.01)  # back-pressure: the consumer is behind
        with self._lock:
            was_empty = not self._items
            self._items.append(item)
            self._pending_records += records
        if was_empty and self._notify is not None:
            self._notify()

    # -- producer side (any thread)
    def records(self, records: list[Record]) -> None:
        if records:
            self._put(("records", records), len(records))

    def record(self, record: Record) -> None:
        self._put(("records", [record]), 1)

    def text(self, path: str, data: bytes) -> None:
        if data:
            self._put(("text", path, data, time.time()))

    def text_reset(self, path: str, why: str) -> None:
        self._put(("reset", path, why))

    def say(self, level: str, message: str) -> None:
        self._put(("say", level, message, time.time()))

    def job(self, **changes: Any) -> None:
        """Update fields of the job header (``state`` also stamps ``ended`` for a final state)."""
        self._put(("job", changes))

    def catch_up(self, done: int, total: int) -> None:
        """How much of a large log's history has been read (bytes); ``done == total``: all of it."""
        self._put(("catchup", done, total))

    def cursor(self, **position: Any) -> None:
        """A replay's position: ``start``, ``end``, ``at``, ``playing``, ``speed``, ``live``."""
        self._put(("cursor", position))

    def unread(self, path: str, count: tuple) -> None:
        """A log's lines that look like metrics but gave no record (a follower's ``on_unread``)."""
        self._put(("unread", path, count))

    def forget_metrics(self) -> None:
        """The logs are read again from the start (a pattern taught): the training shown so far goes."""
        self._put(("forget",))

    def replace_state(self, state: DashboardState) -> None:
        """Hand over a whole new state (a replay rebuilt at a new cursor); the producer lets go of it."""
        self._put(("state", state))

    # -- consumer side
    def drain(self) -> list[tuple[Any, ...]]:
        with self._lock:
            items, self._items = self._items, []
            self._pending_records = 0
        return items

    def apply(self, state: DashboardState) -> DashboardState:
        """Move everything pending into ``state``; returns the state to use from now on."""
        for item in self.drain():
            kind = item[0]
            if kind == "records":
                if self._tap is not None:
                    self._tap(item[1])
                state.ingest(item[1])
            elif kind == "text":
                state.text(item[1], item[2], item[3])
            elif kind == "reset":
                state.text_reset(item[1], item[2])
            elif kind == "say":
                state.say(item[1], item[2], item[3])
            elif kind == "job":
                changes = dict(item[1])
                new_state = changes.pop("state", None)
                for key, value in changes.items():
                    setattr(state.job, key, value)
                if new_state is not None:
                    state.set_state(new_state)
                state.version += 1
            elif kind == "catchup":
                state.catch_up = (item[1], item[2]) if item[1] < item[2] else None
                state.version += 1
            elif kind == "cursor":
                state.cursor = dict(item[1])
                state.clock = state.cursor.get("at")
                state.version += 1
            elif kind == "unread":
                state.training.note_unread(item[1], *item[2])
                state.version += 1
            elif kind == "forget":
                state.forget_metrics()
            elif kind == "state":
                state = item[1]
        return state


class RecordSource(ABC):
    """One place records come from. :meth:`run` blocks (call it in a worker thread) until the source is
    exhausted or :meth:`stop` is called; failures are told through ``feed.say("error", ...)``, in one
    line, never raised to the UI."""

    kind = "base"

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self.finished = threading.Event()  # set by whoever ran :meth:`run` once it returned

    def run_to_end(self, feed: Feed) -> None:
        """:meth:`run`, then mark the source finished (whatever happened)."""
        own(self)
        try:
            if not self.stopping.is_set():
                self.run(feed)
        except Exception as exc:  # a source must never take its consumer down
            feed.say("error", f"{self.kind} source failed: {type(exc).__name__}: {exc}")
        finally:
            release(self)
            self.finished.set()

    @abstractmethod
    def job_info(self) -> JobInfo:
        """The header before the first record arrives."""

    @abstractmethod
    def run(self, feed: Feed) -> None: ...

    def relearn(self, note: str = "") -> bool:
        """Read the followed logs again from the start with the patterns in effect now (one just taught):
        the training shown is replaced by what they give, and ``note`` is said as that starts. Only asks
        (any thread): the source's own thread does it. False where this source cannot (it does not
        follow logs, or it has ended)."""
        return False

    def stop(self) -> None:
        """End the source: only gputui's own processes (a probe step, the demo's ranks), never a job."""
        self.stopping.set()

    def new_state(self, thresholds=None) -> DashboardState:
        return DashboardState(self.job_info(), thresholds)
