"""Ending gputui by a signal ends gputui's own child processes (an attach's probe step and its srun, a
local run's ranks), never a job.

SIGHUP (the terminal closed: a dropped SSH link, ``tmux kill-session``) and SIGTERM would end the Python
process at once and skip every ``finally``. The probe step's srun runs in its own session (so a Ctrl-C in
the terminal reaches only gputui, which stops the step itself), so it would outlive gputui on the login
node, and its probes would run on every node of the job until the job ends. :class:`OrderlyStop` turns both
signals into the same orderly stop as ``q``/Ctrl-C. After a hang-up the terminal is gone: a write to it
fails with EIO (:func:`terminal_gone`), and a full-screen app may block on it, so :func:`exit_when_stuck`
ends the process once the children are stopped if the app has not returned by then.

What gputui owns while it runs (every record source: an attach, a local run, a replay) is registered here
(:func:`own`), so however it ends (``q``, a signal, the interpreter exiting after an error) one call,
:func:`stop_owned`, ends all of it.
"""

from __future__ import annotations

import atexit
import errno
import os
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Protocol

#: The signals that end gputui in order (Ctrl-C is SIGINT: KeyboardInterrupt, or a key in the dashboard).
ENDING_SIGNALS = (signal.SIGHUP, signal.SIGTERM)
EXIT_GRACE_S = 5.0  # after the children ended, how long a full-screen app gets to restore and return
STOP_WAIT_S = 15.0  # how long ending gputui waits for what it owns (a probe step's srun: 2 × 5 s at most)


class Owned(Protocol):
    """Something gputui runs that must end with it (a record source)."""

    finished: threading.Event  # set once it has ended

    def stop(self) -> None: ...


_owned: set[Owned] = set()
_owned_lock = threading.Lock()


def own(thing: Owned) -> None:
    """Register ``thing`` (running now) to be stopped when gputui ends."""
    with _owned_lock:
        _owned.add(thing)


def release(thing: Owned) -> None:
    """``thing`` has ended by itself."""
    with _owned_lock:
        _owned.discard(thing)


def stop_owned(timeout: float = STOP_WAIT_S) -> bool:
    """Stop everything gputui owns (from any thread) and wait at most ``timeout`` seconds for it to end;
    True when nothing is left."""
    with _owned_lock:
        things = list(_owned)
    for thing in things:
        thing.stop()
    deadline = time.monotonic() + timeout
    return all(thing.finished.wait(max(0.0, deadline - time.monotonic())) for thing in things)


atexit.register(stop_owned)  # the interpreter exiting (after an error in the main thread) ends it too


class OrderlyStop:
    """While inside ``with OrderlyStop(stop)``, SIGHUP and SIGTERM call ``stop(signum)`` (in the main
    thread, between two Python steps: it must only set flags or schedule work) instead of ending the
    process; the previous handlers come back on leaving. Outside the main thread it installs nothing."""

    def __init__(self, stop: Callable[[int], None]) -> None:
        self.stop = stop
        self.signum: int | None = None  # the signal that asked for the stop, once one did
        self._previous: dict[int, signal.Handlers | Callable | int | None] = {}

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        self.signum = signum
        self.stop(signum)

    def __enter__(self) -> OrderlyStop:
        if threading.current_thread() is threading.main_thread():
            for sig in ENDING_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *_exc: object) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()


def terminal_gone(exc: OSError) -> bool:
    """Whether a failed write means the terminal hung up (EIO), rather than, say, a full disk."""
    return exc.errno == errno.EIO


def exit_when_stuck(wait_children: Callable[[float], object], children_s: float, code: int) -> None:
    """A daemon thread that waits for the children to end (``wait_children(children_s)``), then gives the
    main thread :data:`EXIT_GRACE_S` to return in order, then ends the process with ``code``: an app that
    writes to a terminal which is gone may never return, and gputui must not stay behind."""

    def watch() -> None:
        wait_children(children_s)
        time.sleep(EXIT_GRACE_S)
        os._exit(code)

    threading.Thread(target=watch, name="gputui-exit-watch", daemon=True).start()
