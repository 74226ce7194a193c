"""Host samples through psutil: CPU %, memory, load, and the probe's own CPU time and RSS."""

from __future__ import annotations

import os
from collections.abc import Mapping

from gputui.probes.base import host_name, job_id
from gputui.stream.records import Record, host_sample


class HostProbe:
    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        import psutil

        self._psutil = psutil
        self.host = host_name(env)
        self.job = job_id(env)
        self._me = psutil.Process()
        self._cpu_count = psutil.cpu_count() or os.cpu_count()
        psutil.cpu_percent(interval=None)  # primes the counter: the next call measures since now

    def sample(self, *, now: float) -> Record:
        ps = self._psutil
        mem = ps.virtual_memory()
        load = os.getloadavg()
        with self._me.oneshot():
            times = self._me.cpu_times()
            rss = self._me.memory_info().rss
        values = {
            "cpu_pct": ps.cpu_percent(interval=None),
            "cpu_count": self._cpu_count,
            "mem_used_bytes": mem.total - mem.available,
            "mem_total_bytes": mem.total,
            "load_1m": round(load[0], 2),
            "load_5m": round(load[1], 2),
            "load_15m": round(load[2], 2),
            "probe_cpu_s": round(times.user + times.system, 3),
            "probe_rss_bytes": rss,
        }
        if self.job:
            values["job"] = self.job
        return host_sample(host=self.host, time=now, **values)
