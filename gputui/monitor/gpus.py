"""The GPUs of a job: latest values, a short history per GPU, nodes, and the job-wide and per-node
utilisation lines.

Keyed by ``gpu_id`` (UUID or PCI id, never the index) and grouped by ``host``. Per GPU only the latest
values and the last :data:`RECENT` utilisation points are kept; the job-wide mean utilisation is one
:class:`~gputui.monitor.series.Series` with one point per second of record time, and each node's mean
utilisation another (a smaller one: :data:`NODE_HISTORY_SHARE` of the job's), so memory stays flat
however long the job runs. Records are ingested in ~µs each (1024 nodes × 8 GPUs at 1 Hz is 8192/s).
"""

from __future__ import annotations

import statistics
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from gputui.monitor.series import Series
from gputui.stream.records import Record

RECENT = 60  # utilisation points kept per GPU, for its sparkline
BUCKET_S = 1.0  # resolution of the job-wide and per-node utilisation lines
NODE_HISTORY_SHARE = 8  # a node's line holds history_points // 8 points (1024 nodes: ~8 MB in all)


class BucketLine:
    """A :class:`Series` fed per sample and holding one point per :data:`BUCKET_S` of record time: the
    mean of the samples in that second (the second in progress is added once the next one starts)."""

    __slots__ = ("_bucket", "_n", "_sum", "series")

    def __init__(self, capacity: int) -> None:
        self.series = Series(capacity)
        self._bucket: int | None = None
        self._sum = 0.0
        self._n = 0

    def add(self, t: float, value: float) -> None:
        bucket = int(t // BUCKET_S)
        if bucket != self._bucket:
            if self._bucket is not None and self._n:
                self.series.append(self._bucket * BUCKET_S, self._sum / self._n)
            self._bucket, self._sum, self._n = bucket, 0.0, 0
        self._sum += value
        self._n += 1


@dataclass(slots=True)
class GpuState:
    gpu_id: str
    host: str
    index: int | None = None
    name: str | None = None
    vendor: str | None = None
    simulated: bool = False
    package_id: Any = None
    package_power: bool = False  # this GCD's power_w is its whole package's
    secondary_die: bool = False  # power is reported on the other GCD of the package
    util: float | None = None
    mem_used: int | None = None
    mem_total: int | None = None
    temp: float | None = None
    power: float | None = None
    power_limit: float | None = None
    lost: bool = False
    last_time: float = 0.0
    idle_since: float | None = None
    recent: deque = field(default_factory=lambda: deque(maxlen=RECENT))

    @property
    def mem_pct(self) -> float | None:
        if self.mem_used is None or not self.mem_total:
            return None
        return 100.0 * self.mem_used / self.mem_total


@dataclass(slots=True)
class NodeState:
    host: str
    gpus: dict[str, GpuState] = field(default_factory=dict)
    lost: str | None = None  # why, once a node_lost event named it
    lost_time: float | None = None
    last_time: float = 0.0
    cpu_pct: float | None = None
    mem_used: int | None = None
    mem_total: int | None = None
    util_line: BucketLine | None = None  # the node's mean utilisation over time (GpuBoard makes it)

    def ordered(self) -> list[GpuState]:
        return sorted(
            self.gpus.values(), key=lambda g: (g.index if g.index is not None else 1 << 30, g.gpu_id)
        )

    def mean_util(self) -> float | None:
        values = [g.util for g in self.gpus.values() if g.util is not None and not g.lost]
        return sum(values) / len(values) if values else None


class GpuBoard:
    """Every GPU and node seen in the stream, plus the job-wide mean utilisation over time."""

    def __init__(self, *, idle_util_pct: float = 5.0, history_points: int = 2048) -> None:
        self.nodes: dict[str, NodeState] = {}
        self.gpus: dict[str, GpuState] = {}
        self.idle_util_pct = idle_util_pct
        self._job_line = BucketLine(history_points)
        self.util_line = self._job_line.series  # job-wide mean utilisation, one point per BUCKET_S
        self.node_points = max(16, history_points // NODE_HISTORY_SHARE)
        self.simulated = False
        self.last_time = 0.0

    def node(self, host: str) -> NodeState:
        node = self.nodes.get(host)
        if node is None:
            node = self.nodes[host] = NodeState(host, util_line=BucketLine(self.node_points))
        return node

    def add_gpu(self, rec: Record) -> None:
        f = rec.fields
        gpu_id = f.get("gpu_id")
        host = f.get("host")
        if not isinstance(gpu_id, str) or not isinstance(host, str):
            return
        key = f"{host}\0{gpu_id}"  # the same UUID on two hosts (simulated, cloned) stays two GPUs
        gpu = self.gpus.get(key)
        if gpu is None:
            gpu = self.gpus[key] = GpuState(gpu_id, host)
            self.node(host).gpus[key] = gpu
            missing = f.get("missing") or {}
            gpu.secondary_die = missing.get("power_w") == "secondary_die"
        gpu.index = f.get("index", gpu.index)
        gpu.name = f.get("name", gpu.name)
        gpu.vendor = f.get("vendor", gpu.vendor)
        gpu.package_id = f.get("package_id", gpu.package_id)
        gpu.package_power = f.get("power_scope") == "package"
        if f.get("simulated"):
            gpu.simulated = self.simulated = True
        t = rec.time
        util = f.get("util_gpu_pct")
        gpu.util = util
        gpu.mem_used = f.get("mem_used_bytes")
        gpu.mem_total = f.get("mem_total_bytes", gpu.mem_total)
        gpu.temp = f.get("temp_c")
        gpu.power = f.get("power_w")
        gpu.power_limit = f.get("power_limit_w", gpu.power_limit)
        gpu.lost = bool(f.get("lost"))
        gpu.last_time = t
        node = self.nodes[host]
        if t > node.last_time:
            node.last_time = t
        if util is not None:
            gpu.recent.append(util)
            if util < self.idle_util_pct:
                if gpu.idle_since is None:
                    gpu.idle_since = t
            else:
                gpu.idle_since = None
            self._job_line.add(t, util)
            if node.util_line is not None:
                node.util_line.add(t, util)
        if t > self.last_time:
            self.last_time = t

    def add_host(self, rec: Record) -> None:
        host = rec.get("host")
        if not isinstance(host, str):
            return
        node = self.node(host)
        node.cpu_pct = rec.get("cpu_pct")
        node.mem_used = rec.get("mem_used_bytes")
        node.mem_total = rec.get("mem_total_bytes")
        node.last_time = max(node.last_time, rec.time)

    def lose_node(self, host: str, why: str, when: float) -> None:
        node = self.node(host)
        node.lost, node.lost_time = why, when

    def revive_node(self, host: str) -> None:
        node = self.nodes.get(host)
        if node is not None:
            node.lost = node.lost_time = None

    # ------------------------------------------------------------------ summaries

    def reporting(self, gpu: GpuState) -> bool:
        """Whether ``gpu``'s values are current: neither it nor its node was lost (their last values stay
        on screen, marked LOST, but count in no summary or alert)."""
        return not gpu.lost and not self.nodes[gpu.host].lost

    def utils(self) -> list[float]:
        return [g.util for g in self.gpus.values() if g.util is not None and self.reporting(g)]

    def summary(self) -> dict[str, Any]:
        """min/median/max utilisation, memory use, nodes reporting (what the pane's first line says)."""
        utils = self.utils()
        used = sum(g.mem_used or 0 for g in self.gpus.values())
        total = sum(g.mem_total or 0 for g in self.gpus.values())
        lost = sum(1 for n in self.nodes.values() if n.lost)
        return {
            "gpus": len(self.gpus),
            "util_min": min(utils) if utils else None,
            "util_median": statistics.median(utils) if utils else None,
            "util_max": max(utils) if utils else None,
            "mem_pct": 100.0 * used / total if total else None,
            "nodes": len(self.nodes),
            "nodes_reporting": len(self.nodes) - lost,
        }

    def median_util(self) -> float | None:
        utils = self.utils()
        return statistics.median(utils) if utils else None

    def line(self) -> Series:
        """The job-wide utilisation line (complete seconds)."""
        return self.util_line

    def node_lines(self) -> dict[str, Series]:
        """Each node's mean utilisation line (complete seconds), by host name in sorted order."""
        return {h: n.util_line.series for h, n in sorted(self.nodes.items()) if n.util_line is not None}
