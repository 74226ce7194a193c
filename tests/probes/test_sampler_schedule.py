"""The sampler's schedule: ticks on the grid start + k·interval, a stall skips to the grid, no bunching.

A fake clock: the sampler takes its clock as an argument, and ``time.sleep`` (patched) advances it. The
backend below stalls or overruns by moving the same clock forward inside ``sample``.
"""

from __future__ import annotations

from typing import Any

import pytest

from gputui.probes import sampler as sampler_mod
from gputui.probes.base import Backend
from gputui.stream.records import Record, gpu_sample

WALL = 1_795_000_000.0  # the wall clock is the fake clock plus this


class FakeClock:
    """Seconds since the start; ``sleep`` advances it."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds > 0
        self.now += seconds


class SlowBackend(Backend):
    """One GPU; ``sample`` takes ``cost`` seconds, and ``stalls[tick]`` more on the given ticks."""

    name = "slow"
    vendor = "nvidia"
    source = "sim"

    def __init__(self, clock: FakeClock, *, cost: float = 0.0, stalls: dict[int, float] | None = None):
        super().__init__({"SLURMD_NODENAME": "node1"})
        self.clock = clock
        self.cost = cost
        self.stalls = stalls or {}
        self.starts: list[float] = []
        self.processes: list[bool] = []

    def sample(self, *, processes: bool, now: float) -> list[Record]:
        self.starts.append(self.clock.now)
        self.processes.append(processes)
        self.clock.now += self.cost + self.stalls.get(len(self.starts) - 1, 0.0)
        return [gpu_sample(host=self.host, gpu_id="GPU-0", vendor="nvidia", source="sim", time=now)]


def run(clock: FakeClock, backend: SlowBackend, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> list[Record]:
    """Run a sampler on the fake clock; the records it emitted."""
    monkeypatch.setattr(sampler_mod.time, "sleep", clock.sleep)
    out: list[Record] = []
    sampler = sampler_mod.Sampler(
        backend, None, clock=clock.monotonic, wall=lambda: WALL + clock.now, process_interval=5.0, **kw
    )
    sampler.run(out.append)
    return out


def test_a_stall_skips_to_the_schedule_instead_of_bunching(monkeypatch):
    clock = FakeClock()
    backend = SlowBackend(clock, stalls={1: 4.5})  # the tick at 1.0 s returns at 5.5 s
    out = run(clock, backend, monkeypatch, interval=1.0, count=6)
    # not 0, 1, 5.5, 5.5, 5.5, 5.5 (catching up on the missed ticks at once): the next grid point is 6
    assert backend.starts == [0.0, 1.0, 6.0, 7.0, 8.0, 9.0]
    assert [r.time for r in out] == [WALL + t for t in (0.0, 1.0, 6.0, 7.0, 8.0, 9.0)]
    assert backend.processes == [True, False, True, False, False, False]  # every 5 s, from the clock


def test_slow_samples_do_not_drift_the_grid(monkeypatch):
    clock = FakeClock()
    backend = SlowBackend(clock, cost=0.3)  # each sample takes 0.3 of the 1 s interval
    run(clock, backend, monkeypatch, interval=1.0, count=5)
    assert backend.starts == [0.0, 1.0, 2.0, 3.0, 4.0]  # not 0, 1.3, 2.6, ...


def test_a_stall_of_several_short_intervals_costs_those_ticks_only(monkeypatch):
    clock = FakeClock()
    backend = SlowBackend(clock, cost=0.0625, stalls={2: 0.5})  # binary fractions: exact arithmetic
    run(clock, backend, monkeypatch, interval=0.25, count=6)
    # the tick at 0.5 returns at 1.0625: the ticks due at 0.75 and 1.0 are skipped, not run late
    assert backend.starts == [0.0, 0.25, 0.5, 1.25, 1.5, 1.75]


def test_duration_ends_on_time_after_a_stall(monkeypatch):
    clock = FakeClock()
    backend = SlowBackend(clock, stalls={0: 2.5})
    out = run(clock, backend, monkeypatch, interval=1.0, count=None, duration=5.0)
    assert backend.starts == [0.0, 3.0, 4.0, 5.0]
    assert len(out) == 4 and clock.now == 5.0
