"""What every verdict rule reads: the windows, the metric sums, the thresholds and the moment judged,
with the helpers they share (node means per window, sustained spans, a window's times)."""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from gputui.config import AlertThresholds, VerdictSettings
from gputui.monitor.verdicts.metrics import MetricSums
from gputui.monitor.verdicts.windows import GpuWindow, Windows


@dataclass
class Context:
    windows: Windows
    metrics: MetricSums
    th: AlertThresholds
    vs: VerdictSettings
    now: float  # the record time judged (live: the clock; a record file: its last record)
    running: bool
    last_output: float | None = None  # when the job's output last grew (live only)

    def start(self, slot: int) -> float:
        """When window ``slot`` starts, not before the first record."""
        origin = self.windows.origin or 0.0
        return max(origin + slot * self.windows.width, self.windows.first or origin)

    def end(self, slot: int) -> float:
        """When window ``slot`` ends, not after the last record."""
        origin = self.windows.origin or 0.0
        return min(origin + (slot + 1) * self.windows.width, self.windows.last or origin)

    def sustained(self, slots: Iterable[int]) -> list[tuple[int, int]]:
        """Runs of consecutive window indices lasting at least ``sustain_minutes``, longest first."""
        runs: list[tuple[int, int]] = []
        for slot in sorted(set(slots)):
            if runs and slot == runs[-1][1] + 1:
                runs[-1] = (runs[-1][0], slot)
            else:
                runs.append((slot, slot))
        long_enough = self.vs.sustain_minutes * 60
        kept = [r for r in runs if (r[1] - r[0] + 1) * self.windows.width >= long_enough]
        return sorted(kept, key=lambda r: (r[0] - r[1], r[0]))

    @cached_property
    def _by_slot(self) -> dict[int, dict[str, list[GpuWindow]]]:
        index: dict[int, dict[str, list[GpuWindow]]] = {}
        for (host, _), series in self.windows.gpus.items():
            for slot, window in (series.windows or {}).items():
                if window.util_n:
                    index.setdefault(slot, {}).setdefault(host, []).append(window)
        return index

    def node_windows(self, host: str, slot: int) -> list[GpuWindow]:
        """The windows of ``host``'s GPUs at ``slot`` that have utilisation samples."""
        return self._by_slot.get(slot, {}).get(host, [])

    def slots(self) -> list[int]:
        """Every window index any GPU has, in order."""
        return sorted(self._by_slot)

    def hosts(self) -> list[str]:
        return self.windows.node_names()


def mean(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def median(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def median_of_others(ordered: list[float], value: float) -> float | None:
    """The median of the sorted ``ordered`` with one ``value`` (one of them) left out."""
    at = bisect.bisect_left(ordered, value)
    rest = ordered[:at] + ordered[at + 1 :]
    half = len(rest) // 2
    if not rest:
        return None
    return rest[half] if len(rest) % 2 else (rest[half - 1] + rest[half]) / 2


def power_share(windows: Iterable[GpuWindow]) -> float | None:
    """Mean power as a share (0-1) of the power limit, over windows that give both."""
    return mean(w.power / w.power_limit for w in windows if w.power is not None and w.power_limit)


def gpu_list(names: list[str]) -> str:
    """``node1 GPU 2`` or ``node1 GPUs 0, 1, 3`` (names all ``HOST GPU N`` of one host)."""
    if len(names) == 1:
        return names[0]
    host = names[0].rsplit(" GPU ", 1)[0]
    return f"{host} GPUs {', '.join(n.rsplit(' GPU ', 1)[1] for n in names)}"
