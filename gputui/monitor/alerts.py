"""Alerts: what needs a person's attention, each with its evidence and when it started.

Raised from the state on each :meth:`Alerts.check` from the conditions that
:mod:`gputui.monitor.conditions` finds (GPU idle while the job runs, memory nearly full, a hot GPU, a
straggler node, no new output for a while) and from the stream as it arrives (node lost, loss
NaN/inf, OOM / NCCL error / traceback / time limit from the log's outcome signals, probe errors). An
alert has a key; the same key is not raised twice while it is active, and condition alerts clear when
the condition goes away (they stay in the history).
"""

from __future__ import annotations

from dataclasses import dataclass

from gputui.config import AlertThresholds
from gputui.monitor.conditions import Level, classify
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
        """Re-evaluate the condition alerts at record time ``now``: one alert per condition of
        :func:`~gputui.monitor.conditions.classify` at warning level or above (a lost node is alerted
        from the stream's ``node_lost`` event instead, with Slurm's or the probe's words)."""
        seen: set[str] = set()
        for condition in classify(board, self.thresholds, now, running, logs):
            if condition.kind not in _CONDITIONS or condition.level < Level.WARNING:
                continue
            seen.add(condition.key)
            severity = "error" if condition.level >= Level.CRITICAL else "warning"
            self.raise_(condition.key, condition.kind, severity, condition.reason, condition.evidence, now)
        for key in [k for k, a in self.active.items() if a.kind in _CONDITIONS and k not in seen]:
            self.clear(key)


_CONDITIONS = frozenset({"gpu_idle", "mem_high", "hot", "straggler", "no_output"})
