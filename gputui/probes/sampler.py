"""The sampling loop shared by ``gputui probe`` and ``gputui --log``.

Ticks are scheduled on a fixed grid (start + k·interval, no drift; a late tick is skipped, not bunched).
Per tick: one ``gpu`` record per visible GPU and one ``host`` record. Process lists are read every
``process_interval`` seconds (5 s by default), not every tick. SIGTERM/SIGINT/SIGHUP (where not ignored)
end the loop at once, even mid-sleep; SIGUSR1/SIGUSR2 are ignored (jobs use them for pre-timeout warnings
meant for the training processes).
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from gputui import __version__
from gputui.argtypes import SAMPLE_INTERVAL_S
from gputui.probes.base import Backend, ProbeError
from gputui.stream.records import Record, event

Emit = Callable[[Record], None]


class _Wakeup(BaseException):
    """Raised by a signal handler to cut a sleep short."""


class Sampler:
    def __init__(
        self,
        backend: Backend,
        host_probe: object | None,
        *,
        interval: float = 1.0,
        count: int | None = None,
        duration: float | None = None,
        process_interval: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        problem = SAMPLE_INTERVAL_S.problem(interval)
        if problem:  # the CLI checks its flags; this guards every other caller (nan would spin)
            raise ValueError(f"sampling interval {interval!r} {problem}")
        self.backend = backend
        self.host_probe = host_probe
        self.interval = interval
        self.count = count
        self.duration = duration
        self.process_interval = max(process_interval, interval)
        self.clock, self.wall = clock, wall
        self.ticks = 0
        self.stop_reason: str | None = None
        self._sleeping = False
        self._errors_seen: set[str] = set()
        if hasattr(backend, "interval"):
            backend.interval = interval

    def request_stop(self, reason: str) -> None:
        """Ask the loop to stop; safe from a signal handler (wakes a sleeping loop at once)."""
        if self.stop_reason is None:
            self.stop_reason = reason
        if self._sleeping:
            self._sleeping = False
            raise _Wakeup

    def request_stop_quiet(self, reason: str) -> None:
        """Ask the loop to stop after the current tick (for callers that are not signal handlers)."""
        if self.stop_reason is None:
            self.stop_reason = reason

    def _sleep_until(self, deadline: float) -> None:
        self._sleeping = True
        try:
            while self.stop_reason is None and (left := deadline - self.clock()) > 0:
                time.sleep(left)
        except _Wakeup:
            pass
        finally:
            self._sleeping = False

    def tick(self, emit: Emit, *, processes: bool) -> None:
        now = self.wall()
        try:
            records = self.backend.sample(processes=processes, now=now)
        except ProbeError as exc:
            records = []
            self._error_once(emit, str(exc))
        for record in records:
            emit(record)
        if self.host_probe is not None:
            emit(self.host_probe.sample(now=now))  # type: ignore[attr-defined]
        for note in getattr(self.backend, "take_events", list)():
            emit(note)
        self.ticks += 1

    def _error_once(self, emit: Emit, message: str) -> None:
        if message not in self._errors_seen:
            self._errors_seen.add(message)
            emit(event("error", message=message, backend=self.backend.name, host=self.backend.host))

    def run(self, emit: Emit) -> str:
        """Sample until count/duration/stop request; returns the reason it stopped."""
        start = self.clock()
        end = start + self.duration if self.duration is not None else None
        last_processes = None
        k = 0
        while self.stop_reason is None:
            now = self.clock()
            due_processes = last_processes is None or now - last_processes >= self.process_interval - 1e-3
            if due_processes:
                last_processes = now
            self.tick(emit, processes=due_processes)
            if self.count is not None and self.ticks >= self.count:
                self.stop_reason = "count"
                break
            k = max(k + 1, int((self.clock() - start) / self.interval) + 1)  # skip missed ticks
            deadline = start + k * self.interval
            if end is not None and deadline > end + 1e-6:
                self._sleep_until(end)
                self.stop_reason = self.stop_reason or "duration"
                break
            self._sleep_until(deadline)
        return self.stop_reason or "stopped"


@dataclass
class RunResult:
    reason: str
    samples: int
    gpus: int


_STOP_SIGNALS = {"SIGTERM": "sigterm", "SIGINT": "sigint", "SIGHUP": "sighup"}


def install_signals(sampler: Sampler, *, survive_hup: bool) -> None:
    """USR1/USR2 ignored; TERM/INT (and HUP unless ``survive_hup``) stop the sampler cleanly."""
    for name in ("SIGUSR1", "SIGUSR2"):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    if survive_hup:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    for name, reason in _STOP_SIGNALS.items():
        if survive_hup and name == "SIGHUP":
            continue
        signal.signal(getattr(signal, name), lambda *_a, r=reason: sampler.request_stop(r))


def started_event(backend: Backend, interval: float, gpus: int) -> Record:
    return event(
        "probe_started",
        message=f"gputui {__version__} probe on {backend.host}: backend {backend.name}, {gpus} GPUs"
        + (" (SIMULATED)" if backend.simulated else ""),
        version=__version__,
        python=sys.executable,
        backend=backend.name,
        host=backend.host,
        pid=_pid(),
        interval_s=interval,
        gpus=gpus,
        simulated=backend.simulated,
        job=backend.job,
    )


def _pid() -> int:
    import os

    return os.getpid()


def run_sampling(
    backend: Backend,
    emit: Emit,
    *,
    interval: float,
    count: int | None,
    duration: float | None,
    survive_hup: bool = False,
    with_host: bool = True,
    process_interval: float = 5.0,
    on_start: Callable[[Sampler], None] | None = None,
) -> RunResult:
    """Open ``backend``, write ``probe_started``, sample, write ``probe_stopped``.

    ``emit`` may raise BrokenPipeError (reader gone: stop quietly) or OSError (the caller reports it).
    """
    devices = backend.open()
    host_probe = None
    if with_host:
        from gputui.probes.host import HostProbe

        host_probe = HostProbe(backend.env)
    sampler = Sampler(
        backend,
        host_probe,
        interval=interval,
        count=count,
        duration=duration,
        process_interval=process_interval,
    )
    install_signals(sampler, survive_hup=survive_hup)
    if on_start is not None:
        on_start(sampler)
    try:
        emit(started_event(backend, interval, len(devices)))
        reason = sampler.run(emit)
    except _Wakeup:  # a signal landed outside the sleep, after the flag was checked
        reason = sampler.stop_reason or "stopped"
    finally:
        for name in _STOP_SIGNALS:
            signal.signal(getattr(signal, name), signal.SIG_IGN)
        backend.close()
    emit(
        event(
            "probe_stopped",
            message=f"probe on {backend.host} stopped ({reason}) after {sampler.ticks} samples",
            reason=reason,
            samples=sampler.ticks,
            host=backend.host,
            backend=backend.name,
            job=backend.job,
        )
    )
    return RunResult(reason=reason, samples=sampler.ticks, gpus=len(devices))
