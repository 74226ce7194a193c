"""gputui.hangup on its own: SIGHUP/SIGTERM become a call (and the old handlers come back), a failed write
tells a closed terminal from a full disk, and stop_owned ends what is registered. The end-to-end
behaviour (a closed tmux session, signals to the real CLI) is in tests/test_e2e_hangup.py."""

from __future__ import annotations

import errno
import os
import signal
import threading

import pytest

from gputui.hangup import ENDING_SIGNALS, OrderlyStop, own, release, stop_owned, terminal_gone


@pytest.mark.parametrize("sig", ENDING_SIGNALS)
def test_a_signal_calls_stop_and_the_previous_handler_comes_back(sig):
    seen: list[int] = []
    before = signal.getsignal(sig)
    with OrderlyStop(seen.append) as ending:
        os.kill(os.getpid(), sig)  # handled before the next bytecode of this (main) thread
        assert seen == [sig] and ending.signum == sig
    assert signal.getsignal(sig) == before


def test_outside_the_main_thread_nothing_is_installed():
    handlers: list[object] = []

    def enter() -> None:
        with OrderlyStop(lambda _s: None):
            handlers.append(signal.getsignal(signal.SIGHUP))

    before = signal.getsignal(signal.SIGHUP)
    thread = threading.Thread(target=enter)
    thread.start()
    thread.join()
    assert handlers == [before]


def test_only_eio_means_the_terminal_is_gone():
    assert terminal_gone(OSError(errno.EIO, "Input/output error"))
    assert not terminal_gone(OSError(errno.ENOSPC, "No space left on device"))
    assert not terminal_gone(BrokenPipeError(errno.EPIPE, "Broken pipe"))


class Child:
    """Stands for a record source: stop() ends it (here at once)."""

    def __init__(self) -> None:
        self.finished = threading.Event()
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True
        self.finished.set()


def test_stop_owned_stops_what_is_registered_and_not_what_was_released():
    running, ended = Child(), Child()
    own(running)
    own(ended)
    release(ended)
    try:
        assert stop_owned(timeout=1.0)
        assert running.stopped and not ended.stopped
    finally:
        release(running)


def test_stop_owned_says_when_something_did_not_end():
    stuck = Child()
    stuck.stop = lambda: None  # type: ignore[method-assign]  # ignores the stop
    own(stuck)
    try:
        assert not stop_owned(timeout=0.05)
    finally:
        release(stuck)
