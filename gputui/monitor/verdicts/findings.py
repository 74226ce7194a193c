"""A verdict's finding: what is slow or stuck, where, the numbers that say so, and when.

One line each: ``node2 straggler: GPUs 30 % vs 95 % on node1, 10:02:00–10:05:00 (0:03:00)``. Times are
record times (Unix seconds) shown as local time of day; the span's length as ``h:mm:ss``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from gputui.monitor.conditions import Level

HEALTHY = "no verdict: nothing slow or stuck seen"


@dataclass(frozen=True, slots=True)
class Finding:
    """One verdict: ``kind`` (the rule), ``where`` (node / GPU / rank / "job"), ``what`` (a few words),
    ``evidence`` (the numbers) over the record times ``start``–``end``."""

    kind: str  # straggler_node | straggler_gpu | straggler_rank | input_bound | comm_bound | hang | ...
    level: Level
    where: str
    what: str
    evidence: str
    start: float
    end: float

    @property
    def elapsed_s(self) -> float:
        return max(0.0, self.end - self.start)

    def span(self) -> str:
        """``10:02:00–10:05:00 (0:03:00)``."""
        return f"{clock(self.start)}–{clock(self.end)} ({hms(self.elapsed_s)})"

    def line(self) -> str:
        """The finding in one line: where and what, its evidence, its span."""
        return f"{self.where} {self.what}: {self.evidence}, {self.span()}"

    def to_json_dict(self) -> dict:
        return {
            "kind": self.kind,
            "level": self.level.name.lower(),
            "where": self.where,
            "what": self.what,
            "evidence": self.evidence,
            "start": self.start,
            "end": self.end,
            "elapsed_s": round(self.elapsed_s, 3),
            "line": self.line(),
        }


def clock(when: float) -> str:
    """A record time as the local time of day, ``HH:MM:SS``."""
    return time.strftime("%H:%M:%S", time.localtime(when))


def hms(seconds: float) -> str:
    """``h:mm:ss``."""
    whole = round(max(0.0, seconds))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def pct(value: float | None) -> str:
    """``95 %`` (``? %`` where no sample gave it)."""
    return "? %" if value is None else f"{value:.0f} %"


def ordered(findings: list[Finding]) -> list[Finding]:
    """The worst first, then by when they started."""
    return sorted(findings, key=lambda f: (-f.level, f.start, f.where))
