"""Bounded sums of the training metrics the verdict rules read: progress, per-rank values, data time.

- progress: when a metric last arrived (a step, an epoch, a loss), and the longest gap between two;
- per rank (metric records with ``rank``): count, sum and first/last time per metric name and rank;
  Megatron's per-rank min/max lines (``extreme: "min"/"max"``) count how often each rank is the worst
  one instead (its other extremes, ``top``/``bottom`` lists, are left out);
- NCCL Inspector's ``nccl_time_us`` (a window's mean over ``count`` operations): the mean per operation
  by communicator and rank (the rank *in that communicator*), and the total per process (host, pid) for
  the share of wall time in collectives;
- data time (``data_time``-like names): its mean, and the mean of its first and latest values.

Names where a higher value is worse (times) and where a lower one is (rates) are listed here.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from gputui.stream.records import Record

RATE_NAMES = ("images_per_s", "samples_per_s", "tokens_per_s", "rank_tflops", "rank_util_pct")
RATE_NAMES += ("rank_clock_mhz", "rank_power_w", "global_images_per_s", "steps_per_s")
NCCL_TIME = "nccl_time_us"
EDGE_VALUES = 10  # data time: the mean of its first and of its latest this many values
NCCL_WINDOW_S = 10.0  # an NCCL Inspector record averages this long (gputui.logs.files.nccl_inspector)


def higher_is_worse(name: str) -> bool | None:
    """True for a time (``step_time_s``, ``rank_step_time_ms``), False for a rate, None: neither."""
    if name in RATE_NAMES or name.endswith(("_per_s", "_gbps")):
        return False
    if name.endswith(("_time_s", "_time_ms", "_time_us")) or name in ("step_time", "data_time"):
        return True
    return None


def is_data_time(name: str) -> bool:
    return "data_time" in name or "data_wait" in name or "dataloader" in name


@dataclass
class Span:
    """Count, sum and the first and last record time of some values."""

    n: float = 0
    total: float = 0.0
    first: float | None = None
    last: float | None = None

    def add(self, value: float, when: float, weight: float = 1.0) -> None:
        self.n += weight
        self.total += value * weight
        self.first = when if self.first is None else min(self.first, when)
        self.last = when if self.last is None else max(self.last, when)

    @property
    def mean(self) -> float | None:
        return self.total / self.n if self.n else None


@dataclass
class Extremes:
    """Per-rank min/max lines of one quantity: how often each rank was the worst, the worst and best."""

    worst_by_rank: dict[int, int] = field(default_factory=dict)
    worst: Span = field(default_factory=Span)
    best: Span = field(default_factory=Span)


@dataclass
class Edges:
    """A data-time metric: its mean over all values, its first values and its latest ones."""

    all: Span = field(default_factory=Span)
    head: list[float] = field(default_factory=list)
    tail: deque = field(default_factory=lambda: deque(maxlen=EDGE_VALUES))

    def add(self, value: float, when: float) -> None:
        self.all.add(value, when)
        if len(self.head) < EDGE_VALUES:
            self.head.append(value)
        self.tail.append(value)


class MetricSums:
    """Everything the rules read from ``metric`` records, in space bounded by names × ranks."""

    def __init__(self) -> None:
        self.last_progress: float | None = None
        self.first_progress: float | None = None
        self.longest_gap_s = 0.0
        self.per_rank: dict[str, dict[int, Span]] = {}
        self.extremes: dict[str, Extremes] = {}
        self.nccl: dict[str, dict[int, Span]] = {}  # communicator → its ranks' mean operation time
        self.nccl_names: dict[str, str] = {}  # communicator → its name (``DP Group 0``) where given
        self.nccl_busy: dict[tuple, Span] = {}  # (host, pid) → time in collectives, µs
        self.by_name: dict[str, Edges] = {}  # data-time-like names and their step-time partners

    def add(self, rec: Record) -> None:
        name, value = rec.get("name"), rec.get("value")
        if not isinstance(name, str) or not isinstance(value, int | float) or value != value:
            return
        self._progress(rec.time, rec.get("scope"))
        rank, extreme = rec.get("rank"), rec.get("extreme")
        if name.startswith("nccl_"):
            if name == NCCL_TIME and isinstance(rank, int):
                self._nccl(rec, rank, float(value))
            return
        if is_data_time(name) or "step_time" in name:
            self.by_name.setdefault(name, Edges()).add(float(value), rec.time)
        if not isinstance(rank, int) or higher_is_worse(name) is None:
            return
        if extreme in ("min", "max"):
            self._extreme(name, rank, extreme, float(value), rec.time)
        elif extreme is None:
            self.per_rank.setdefault(name, {}).setdefault(rank, Span()).add(float(value), rec.time)

    def _nccl(self, rec: Record, rank: int, value: float) -> None:
        count = rec.get("count")
        weight = float(count) if isinstance(count, int | float) and count > 0 else 1.0
        comm = str(rec.get("comm") or "?")
        if isinstance(rec.get("comm_name"), str):
            self.nccl_names[comm] = rec.get("comm_name")
        self.nccl.setdefault(comm, {}).setdefault(rank, Span()).add(value, rec.time, weight)
        process = (rec.get("host"), rec.get("pid")) if rec.get("pid") is not None else (comm, rank)
        self.nccl_busy.setdefault(process, Span()).add(value * weight, rec.time)

    def _progress(self, when: float, scope: object) -> None:
        if scope == "summary":
            return
        if self.last_progress is not None and when > self.last_progress:
            self.longest_gap_s = max(self.longest_gap_s, when - self.last_progress)
        self.first_progress = when if self.first_progress is None else min(self.first_progress, when)
        self.last_progress = when if self.last_progress is None else max(self.last_progress, when)

    def _extreme(self, name: str, rank: int, extreme: str, value: float, when: float) -> None:
        found = self.extremes.setdefault(name, Extremes())
        worst = "max" if higher_is_worse(name) else "min"
        if extreme == worst:
            found.worst_by_rank[rank] = found.worst_by_rank.get(rank, 0) + 1
            found.worst.add(value, when)
        else:
            found.best.add(value, when)

    def forget(self) -> None:
        """The metrics are about to be read again from the start: drop what came from them."""
        self.__init__()  # type: ignore[misc]
