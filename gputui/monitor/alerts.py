"""Alerts: what needs a person's attention, each with its evidence and when it started.

Raised from the state on each :meth:`Alerts.check` (GPU idle while the job runs, memory nearly full, a
hot GPU, a straggler node, no new output for a while) and from the stream as it arrives (node lost, loss
NaN/inf, OOM / NCCL error / traceback / time limit from the log's outcome signals, probe errors). An
alert has a key; the same key is not raised twice while it is active, and condition alerts clear when
the condition goes away (they stay in the history).
"""

from __future__ import annotations

from dataclasses import dataclass

from gputui.config import AlertThresholds
from gputui.monitor.gpus import GpuBoard
from gputui.monitor.logtext import LogText

SEVERITY = ("info", "warning", "error")


@dataclass
class Alert:
    key: str
    kind: str  # gpu_idle, no_output, loss_nonfinite, oom, nccl_error, crashed_traceback, time_limit, ...
    severity: str  # warning | error
    message: str
    evidence: str
    time: float
    active: bool = True


class Alerts:
    def __init__(self, thresholds: AlertThresholds) -> None:
        self.thresholds = thresholds
        self.history: list[Alert] = []
        self.active: dict[str, Alert] = {}
        self.max_history = 500

    def raise_(self, key: str, kind: str, severity: str, message: str, evidence: str, time: float) -> None:
        if key in self.active:
            return
        alert = Alert(key, kind, severity, message, evidence[:300], time)
        self.active[key] = alert
        self.history.append(alert)
        del self.history[: -self.max_history]

    def clear(self, key: str) -> None:
        alert = self.active.pop(key, None)
        if alert is not None:
            alert.active = False

    def latest(self) -> Alert | None:
        """The newest active alert, errors before warnings (the banner's line)."""
        if not self.active:
            return None
        return max(self.active.values(), key=lambda a: (SEVERITY.index(a.severity), a.time))

    def check(self, board: GpuBoard, logs: list[LogText], now: float, running: bool) -> None:
        """Re-evaluate the condition alerts at record time ``now``."""
        th = self.thresholds
        seen: set[str] = set()
        median = board.median_util()
        busy = running and median is not None and median >= th.busy_util_pct
        for gpu in board.gpus.values():
            label = f"{gpu.host} GPU {gpu.index if gpu.index is not None else gpu.gpu_id}"
            idle_for = now - gpu.idle_since if gpu.idle_since is not None else 0.0
            if busy and board.reporting(gpu) and idle_for >= th.gpu_idle_minutes * 60:
                key = f"gpu_idle:{gpu.host}:{gpu.gpu_id}"
                seen.add(key)
                util = "?" if gpu.util is None else f"{gpu.util:.0f}"  # a sample may lack it
                self.raise_(
                    key,
                    "gpu_idle",
                    "warning",
                    f"{label} idle for {idle_for / 60:.0f} min while the job runs",
                    f"util {util}% since {idle_for:.0f} s; job median {median:.0f}%",
                    now,
                )
            pct = gpu.mem_pct
            if pct is not None and pct >= th.mem_high_pct:
                key = f"mem_high:{gpu.host}:{gpu.gpu_id}"
                seen.add(key)
                self.raise_(
                    key,
                    "mem_high",
                    "warning",
                    f"{label} memory {pct:.0f}% full",
                    f"{gpu.mem_used} of {gpu.mem_total} bytes",
                    now,
                )
            if gpu.temp is not None and gpu.temp >= th.hot_temp_c:
                key = f"hot:{gpu.host}:{gpu.gpu_id}"
                seen.add(key)
                self.raise_(
                    key,
                    "hot",
                    "warning",
                    f"{label} at {gpu.temp:.0f}°C (may throttle)",
                    f"temperature {gpu.temp:.0f}°C ≥ {th.hot_temp_c:.0f}°C",
                    now,
                )
        if busy and len(board.nodes) > 1:
            for node in board.nodes.values():
                mean = node.mean_util()
                if node.lost or mean is None or median - mean < th.straggler_gap_pct:
                    continue
                key = f"straggler:{node.host}"
                seen.add(key)
                self.raise_(
                    key,
                    "straggler",
                    "warning",
                    f"node {node.host} lags: util {mean:.0f}%",
                    f"node mean {mean:.0f}% vs job median {median:.0f}%",
                    now,
                )
        for log in logs:
            quiet = now - log.last_data_time if log.last_data_time is not None else 0.0
            if running and log.last_data_time is not None and quiet >= th.no_output_minutes * 60:
                key = f"no_output:{log.path}"
                seen.add(key)
                self.raise_(
                    key,
                    "no_output",
                    "warning",
                    f"no new output for {quiet / 60:.0f} min (hang?)",
                    f"{log.path}: last data {quiet:.0f} s ago",
                    now,
                )
        for key in [k for k, a in self.active.items() if a.kind in _CONDITIONS and k not in seen]:
            self.clear(key)


_CONDITIONS = frozenset({"gpu_idle", "mem_high", "hot", "straggler", "no_output"})
