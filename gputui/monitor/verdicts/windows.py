"""Bounded per-window sums of GPU and host samples: what the verdict rules read.

Every series shares one grid of windows (``width`` seconds from the first record), so the GPUs of
different nodes can be compared window by window. When a run outgrows :data:`MAX_WINDOWS` windows the
width doubles and neighbouring windows merge: memory stays bounded on a job of any length, and the
whole run stays covered (coarser the longer it runs).
"""

from __future__ import annotations

from dataclasses import dataclass

from gputui.stream.records import Record

MAX_WINDOWS = 720  # per GPU and per host; a 10-hour run keeps windows of 80 s


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(slots=True)
class GpuWindow:
    """One GPU's samples in one window: sums and counts (means on demand), extremes."""

    t_first: float = 0.0
    t_last: float = 0.0
    n: int = 0
    util_n: int = 0
    util_sum: float = 0.0
    util_idle: int = 0  # samples under the idle threshold
    power_n: int = 0
    power_sum: float = 0.0
    power_limit: float | None = None
    clock_n: int = 0
    clock_sum: float = 0.0
    temp_max: float | None = None
    mem_n: int = 0
    mem_sum: float = 0.0
    mem_total: float | None = None

    def add(self, rec: Record, idle_pct: float) -> None:
        f = rec.fields
        self.t_first = rec.time if not self.n else min(self.t_first, rec.time)
        self.t_last = max(self.t_last, rec.time)
        self.n += 1
        if (util := _num(f.get("util_gpu_pct"))) is not None:
            self.util_n += 1
            self.util_sum += util
            self.util_idle += util < idle_pct
        if (power := _num(f.get("power_w"))) is not None:
            self.power_n += 1
            self.power_sum += power
        self.power_limit = _num(f.get("power_limit_w")) or self.power_limit
        if (clock := _num(f.get("clock_sm_mhz"))) is not None:
            self.clock_n += 1
            self.clock_sum += clock
        if (temp := _num(f.get("temp_c"))) is not None:
            self.temp_max = temp if self.temp_max is None else max(self.temp_max, temp)
        if (mem := _num(f.get("mem_used_bytes"))) is not None:
            self.mem_n += 1
            self.mem_sum += mem
        self.mem_total = _num(f.get("mem_total_bytes")) or self.mem_total

    def merge(self, other: GpuWindow) -> None:
        for name in ("n", "util_n", "util_sum", "util_idle", "power_n", "power_sum", "clock_n", "clock_sum"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.mem_n, self.mem_sum = self.mem_n + other.mem_n, self.mem_sum + other.mem_sum
        self.t_first, self.t_last = min(self.t_first, other.t_first), max(self.t_last, other.t_last)
        self.power_limit = other.power_limit or self.power_limit
        self.mem_total = other.mem_total or self.mem_total
        temps = [t for t in (self.temp_max, other.temp_max) if t is not None]
        self.temp_max = max(temps) if temps else None

    @property
    def util(self) -> float | None:
        return self.util_sum / self.util_n if self.util_n else None

    @property
    def idle_share(self) -> float | None:
        return self.util_idle / self.util_n if self.util_n else None

    @property
    def power(self) -> float | None:
        return self.power_sum / self.power_n if self.power_n else None

    @property
    def clock(self) -> float | None:
        return self.clock_sum / self.clock_n if self.clock_n else None

    @property
    def mem(self) -> float | None:
        return self.mem_sum / self.mem_n if self.mem_n else None


@dataclass(slots=True)
class HostWindow:
    t_first: float = 0.0
    t_last: float = 0.0
    cpu_n: int = 0
    cpu_sum: float = 0.0

    def add(self, rec: Record) -> None:
        cpu = _num(rec.get("cpu_pct"))
        if cpu is None:
            return
        self.t_first = rec.time if not self.cpu_n else min(self.t_first, rec.time)
        self.t_last = max(self.t_last, rec.time)
        self.cpu_n += 1
        self.cpu_sum += cpu

    def merge(self, other: HostWindow) -> None:
        self.t_first = other.t_first if not self.cpu_n else min(self.t_first, other.t_first)
        self.t_last = max(self.t_last, other.t_last)
        self.cpu_n += other.cpu_n
        self.cpu_sum += other.cpu_sum

    @property
    def cpu(self) -> float | None:
        return self.cpu_sum / self.cpu_n if self.cpu_n else None


@dataclass
class GpuSeries:
    """One GPU: its label, its windows and its run-level counts."""

    host: str
    gpu_id: str
    index: int | None = None
    windows: dict[int, GpuWindow] | None = None
    util_n: int = 0
    util_idle: int = 0
    clock_max: float | None = None

    @property
    def name(self) -> str:
        return f"{self.host} GPU {self.index if self.index is not None else self.gpu_id}"


class Windows:
    """The grid: GPU series by (host, gpu_id), host CPU windows by host."""

    def __init__(self, width: float, idle_pct: float) -> None:
        self.width = width
        self.idle_pct = idle_pct
        self.origin: float | None = None
        self.gpus: dict[tuple[str, str], GpuSeries] = {}
        self.hosts: dict[str, dict[int, HostWindow]] = {}
        self.first: float | None = None
        self.last: float | None = None

    def _slot(self, when: float) -> int:
        if self.origin is None:
            self.origin = when
        slot = max(0, int((when - self.origin) // self.width))
        while slot >= MAX_WINDOWS:
            self._coarsen()
            slot = max(0, int((when - self.origin) // self.width))
        self.first = when if self.first is None else min(self.first, when)
        self.last = when if self.last is None else max(self.last, when)
        return slot

    def _coarsen(self) -> None:
        self.width *= 2
        for series in self.gpus.values():
            series.windows = _halve(series.windows or {})
        self.hosts = {host: _halve(windows) for host, windows in self.hosts.items()}

    def add_gpu(self, rec: Record) -> None:
        host, gpu_id = rec.get("host"), rec.get("gpu_id")
        if not isinstance(host, str) or not isinstance(gpu_id, str) or rec.get("lost"):
            return
        slot = self._slot(rec.time)
        series = self.gpus.get((host, gpu_id))
        if series is None:
            series = self.gpus[(host, gpu_id)] = GpuSeries(host, gpu_id, windows={})
        if isinstance(rec.get("index"), int):
            series.index = rec.get("index")
        assert series.windows is not None
        series.windows.setdefault(slot, GpuWindow()).add(rec, self.idle_pct)
        if (util := _num(rec.get("util_gpu_pct"))) is not None:
            series.util_n += 1
            series.util_idle += util < self.idle_pct
        if (clock := _num(rec.get("clock_sm_mhz"))) is not None:
            series.clock_max = clock if series.clock_max is None else max(series.clock_max, clock)

    def add_host(self, rec: Record) -> None:
        host = rec.get("host")
        if isinstance(host, str) and _num(rec.get("cpu_pct")) is not None:
            self.hosts.setdefault(host, {}).setdefault(self._slot(rec.time), HostWindow()).add(rec)

    def node_names(self) -> list[str]:
        return sorted({host for host, _ in self.gpus})


def _halve(windows: dict) -> dict:
    out: dict = {}
    for slot in sorted(windows):
        window = windows[slot]
        if slot // 2 in out:
            out[slot // 2].merge(window)
        else:
            out[slot // 2] = window
    return out
