"""Simulated GPUs that follow real processes: the demo's GPU *i* is busy exactly when rank *i* computes.

Each device's utilisation is its process's CPU use over the last interval (one core fully used = 100 %;
the demo's ranks run with one thread each), so a rank waiting in a collective, loading data or between
epochs shows as an idle GPU, and the aligned utilisation/step-time view shows something true on a laptop.
Memory "used" is the process's resident memory. Every record says ``simulated: true`` and ``source: sim``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import psutil

from gputui.probes.sim import SimBackend
from gputui.stream.records import Record

SIM_MEM_TOTAL = 16 * 1024**3


class ProcessSimBackend(SimBackend):
    name = "sim-process"

    def __init__(
        self, pids: Callable[[], list[int | None]], count: int, env: Mapping[str, str] | None = None
    ):
        base = dict(env or {})
        base["GPUTUI_SIM_GPUS"] = str(count)
        for name in ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"):
            base.pop(name, None)
        super().__init__(base)
        self.pids = pids  # rank → pid (None before it starts or after it ended)
        self._cpu: dict[int, tuple[float, float]] = {}  # pid → (cpu seconds, wall) at the last sample

    def _activity(self, pid: int | None, now: float) -> tuple[float, int]:
        """(CPU % of one core since the previous sample, resident bytes) of ``pid``; (0, 0) if gone."""
        if pid is None:
            return 0.0, 0
        try:
            proc = psutil.Process(pid)
            with proc.oneshot():
                times = proc.cpu_times()
                rss = proc.memory_info().rss
                if proc.status() == psutil.STATUS_ZOMBIE:
                    return 0.0, 0
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            self._cpu.pop(pid, None)
            return 0.0, 0
        cpu = times.user + times.system
        previous = self._cpu.get(pid)
        self._cpu[pid] = (cpu, now)
        if previous is None or now - previous[1] <= 0:
            return 0.0, rss
        return max(0.0, min(100.0, 100.0 * (cpu - previous[0]) / (now - previous[1]))), rss

    def sample(self, *, processes: bool, now: float) -> list[Record]:
        pids = self.pids()
        out = []
        for pos, dev in enumerate(self.devices):
            pid = pids[pos] if pos < len(pids) else None
            util, rss = self._activity(pid, now)
            values = self.common(dev, pos)
            values["processes"] = (
                [{"pid": pid, "used_mem_bytes": rss, "rank": pos, "name": "python"}] if pid and rss else []
            )
            out.append(self.record(dev, now, util, rss, SIM_MEM_TOTAL, **values))
        return out
