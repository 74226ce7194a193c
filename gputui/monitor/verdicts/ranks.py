"""The straggler-rank rule, from per-rank metrics (``docs/records.md``: metric records with ``rank``).

- Megatron-LM ``--log-straggler`` min/max lines (``extreme``): one rank is the worst (the slowest time,
  the lowest rate) in ``rank_consistent_pct`` % of the lines, and the worst is ``rank_gap_pct`` % or
  more off the best;
- any other per-rank values (a trainer's ``step_time_s`` or ``images_per_s`` per rank): one rank's mean
  is ``rank_gap_pct`` % or more worse than the median of the other ranks' means;
- NCCL Inspector ``nccl_time_us`` per rank of one communicator: one rank's collectives are
  ``rank_gap_pct`` % or more *shorter* than the others' — they wait in the collective for it, it
  arrives late (the rank is the rank in that communicator, named with it).
"""

from __future__ import annotations

from dataclasses import replace

from gputui.monitor.conditions import Level
from gputui.monitor.verdicts.context import Context, median
from gputui.monitor.verdicts.findings import Finding
from gputui.monitor.verdicts.metrics import Span, higher_is_worse

MIN_VALUES = 3  # per rank (or lines of min/max): fewer say nothing about "consistently"


def _finding(where: str, evidence: str, span: Span, ctx: Context) -> Finding:
    start, end = span.first or ctx.now, span.last or ctx.now
    return Finding("straggler_rank", Level.WARNING, where, "straggler", evidence, start, end)


def _priority(name: str) -> tuple[int, str]:
    """Step time first, then throughput, then the rest (power, clock, ...), by name."""
    return (0 if "step_time" in name else 1 if "tflops" in name or "_per_s" in name else 2, name)


def _from_extremes(ctx: Context) -> list[tuple[str, Finding]]:
    found = []
    for name, ext in sorted(ctx.metrics.extremes.items(), key=lambda item: _priority(item[0])):
        lines = sum(ext.worst_by_rank.values())
        if lines < MIN_VALUES or not ext.worst.n or not ext.best.n:
            continue
        rank, count = max(ext.worst_by_rank.items(), key=lambda item: (item[1], -item[0]))
        worst, best = ext.worst.mean or 0.0, ext.best.mean or 0.0
        ratio = worst / best if higher_is_worse(name) else best / worst if worst else 0.0
        if (
            count / lines < ctx.vs.rank_consistent_pct / 100
            or not best
            or ratio < 1 + ctx.vs.rank_gap_pct / 100
        ):
            continue
        label = "slowest" if higher_is_worse(name) else "lowest"
        evidence = f"{label} in {count} of {lines} min/max lines: {name} {worst:.4g} vs {best:.4g} at best"
        found.append((name, _finding(f"rank {rank}", evidence, ext.worst, ctx)))
    return found


def _outlier(
    ranks: dict[int, Span], worse_when_higher: bool, gap_pct: float
) -> tuple[int, float, float] | None:
    """(rank, its mean, the others' median) when one rank is ``gap_pct`` % worse than the others."""
    means = {r: s.mean for r, s in ranks.items() if s.n >= MIN_VALUES and s.mean is not None}
    if len(means) < 2:
        return None
    pick = max if worse_when_higher else min
    rank = pick(means, key=lambda r: (means[r], -r))
    others = median(m for r, m in means.items() if r != rank)
    value = means[rank]
    if not others or not value:
        return None
    ratio = value / others if worse_when_higher else others / value
    return (rank, value, others) if ratio >= 1 + gap_pct / 100 else None


def _from_means(ctx: Context) -> list[tuple[str, Finding]]:
    found = []
    for name, ranks in sorted(ctx.metrics.per_rank.items()):
        worse_when_higher = bool(higher_is_worse(name))
        hit = _outlier(ranks, worse_when_higher, ctx.vs.rank_gap_pct)
        if hit is None:
            continue
        rank, value, others = hit
        evidence = f"{name} {value:.4g} vs {others:.4g} on the other {len(ranks) - 1} ranks (median)"
        found.append((name, _finding(f"rank {rank}", evidence, ranks[rank], ctx)))
    return found


def _from_nccl(ctx: Context) -> list[tuple[str, Finding]]:
    found = []
    for comm, ranks in sorted(ctx.metrics.nccl.items()):
        hit = _outlier(ranks, False, ctx.vs.rank_gap_pct)  # shorter collectives: it arrives last
        if hit is None:
            continue
        rank, value, others = hit
        label = ctx.metrics.nccl_names.get(comm)
        where = f"rank {rank}" + (
            f" of {label}" if label else f" of communicator {comm}" if comm != "?" else ""
        )
        evidence = (
            f"its NCCL collectives take {value:.4g} µs vs {others:.4g} µs on the others (they wait for it)"
        )
        found.append(("nccl_time_us", _finding(where, evidence, ranks[rank], ctx)))
    return found


def straggler_ranks(ctx: Context) -> list[Finding]:
    """One finding per rank: the first source that names it (min/max lines, step time first; means;
    NCCL), the other quantities that name it listed after its evidence."""
    found: dict[str, list[tuple[str, Finding]]] = {}
    for name, finding in _from_extremes(ctx) + _from_means(ctx) + _from_nccl(ctx):
        found.setdefault(finding.where, []).append((name, finding))
    out = []
    for (_, first), *more in found.values():
        also = [name for name, _ in more]
        out.append(replace(first, evidence=first.evidence + (f" (also {', '.join(also)})" if also else "")))
    return out
