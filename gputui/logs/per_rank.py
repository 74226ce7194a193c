"""Per-rank diagnostics: metric records whose ``rank`` is the rank a value was **measured on**, not the
rank that printed it (``docs/records.md``, *Per-rank diagnostics*).

Megatron's straggler report (:mod:`gputui.logs.formats.megatron_straggler`) is printed by rank 0 and names
the ranks with the lowest and highest values; NCCL Inspector files
(:mod:`gputui.logs.files.nccl_inspector`) hold every rank's collectives. Views that follow one rank as the
job's voice (the step summary, the training pane) leave these records out (:func:`is_per_rank`);
:class:`PerRankSummary` says what they hold in a few lines (``gputui parse``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from gputui.stream.records import Record

SOURCES = frozenset({"megatron_straggler", "nccl_inspector"})
MAX_RANKS_SHOWN = 8


def is_per_rank(record: Record) -> bool:
    """Whether ``record`` is a per-rank diagnostic (its ``rank`` is the rank measured)."""
    return record.kind == "metric" and record.fields.get("source") in SOURCES


@dataclass
class _Values:
    """What one metric name of one source holds."""

    count: int = 0
    high: tuple[float, int] = (float("-inf"), -1)
    low: tuple[float, int] = (float("inf"), -1)
    maxima: Counter = field(default_factory=Counter)  # rank → reports naming it the maximum


class PerRankSummary:
    """Feed records with :meth:`add`; :meth:`lines` says, per source and name, the highest and lowest
    value and their ranks, and the rank most often reported as the maximum."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], _Values] = {}
        self.ranks: dict[str, set[int]] = {}

    def add(self, record: Record) -> None:
        if not is_per_rank(record):
            return
        f = record.fields
        rank, value = f.get("rank"), f.get("value")
        if not isinstance(rank, int) or not isinstance(value, int | float) or value != value:
            return
        source = str(f["source"])
        self.ranks.setdefault(source, set()).add(rank)
        seen = self.values.setdefault((source, str(f.get("name"))), _Values())
        seen.count += 1
        if value > seen.high[0]:
            seen.high = (float(value), rank)
        if value < seen.low[0]:
            seen.low = (float(value), rank)
        if f.get("extreme") == "max":
            seen.maxima[rank] += 1

    def lines(self) -> list[str]:
        out: list[str] = []
        for source in sorted(self.ranks):
            out.append(f"per-rank values ({source}, ranks {_ranks(self.ranks[source])})")
            names = [(name, v) for (s, name), v in self.values.items() if s == source]
            width = max(len(name) for name, _ in names)
            for name, seen in names:
                line = f"  {name.ljust(width)}  {seen.count} values; highest {_num(seen.high[0])} on rank "
                line += f"{seen.high[1]}, lowest {_num(seen.low[0])} on rank {seen.low[1]}"
                if seen.maxima:
                    rank, times = seen.maxima.most_common(1)[0]
                    line += f"; max on rank {rank} in {times} of {sum(seen.maxima.values())} reports"
                out.append(line)
        return out


def _num(value: float) -> str:
    return f"{value:.6g}"


def _ranks(ranks: set[int]) -> str:
    """``0-7`` for a run of ranks, else the first few (``0, 3, 5 … (12 ranks)``)."""
    ordered = sorted(ranks)
    if ordered[-1] - ordered[0] + 1 == len(ordered) and len(ordered) > 2:
        return f"{ordered[0]}-{ordered[-1]}"
    shown = ", ".join(str(r) for r in ordered[:MAX_RANKS_SHOWN])
    return shown if len(ordered) <= MAX_RANKS_SHOWN else f"{shown} … ({len(ordered)} ranks)"
