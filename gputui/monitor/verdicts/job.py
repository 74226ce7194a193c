"""Rules about the job as a whole: input-bound, communication-bound, a hang.

- **input-bound**, either: a data-loading time (``data_time``-like metric) is ``input_share_pct`` % or
  more of its step time (``rank_data_time_ms`` of ``rank_step_time_ms``, ``data_time_s`` of
  ``step_time_s``), or without a step time it grew to twice its first values; or on a node, for
  ``sustain_minutes``, the host CPU is at ``cpu_busy_pct`` % or more while its GPUs are idle in
  ``burst_idle_pct`` % or more of their samples and busy in the rest (bursts);
- **communication-bound**, either: on more than one node the GPUs are busy (median at or above
  ``busy_util_pct``) at under ``comm_power_pct`` % of their power limit for ``sustain_minutes``; or the
  ranks (processes) spend ``comm_share_pct`` % or more of the wall time in NCCL collectives (NCCL
  Inspector: each record's mean time × its ``count`` of operations);
- **hang**: no new metric and (where the output is followed) no new output for ``[alerts]
  no_output_minutes`` and three times the longest gap seen between two metrics, while the job runs;
  the GPUs since then are idle, pinned (``pinned_util_pct``) or in between — the line says which.
"""

from __future__ import annotations

from gputui.monitor.conditions import Level, is_busy, quiet_too_long
from gputui.monitor.verdicts.context import Context, mean, median, power_share
from gputui.monitor.verdicts.findings import Finding, hms, pct
from gputui.monitor.verdicts.metrics import NCCL_WINDOW_S

MIN_VALUES = 3
MIN_NCCL_SPAN_S = 60.0  # a share of wall time needs some wall time


def _data_time(ctx: Context) -> list[Finding]:
    found = []
    by_name = ctx.metrics.by_name
    for name, data in sorted(by_name.items()):
        if "step_time" in name or data.all.n < MIN_VALUES:
            continue
        partner = by_name.get(name.replace("data", "step")) or (
            by_name.get("step_time_s") if name == "data_time" else None
        )
        head, tail = mean(data.head), mean(data.tail)
        start, end = data.all.first or ctx.now, data.all.last or ctx.now
        if partner is not None and partner.all.n >= MIN_VALUES and partner.all.mean:
            share = (data.all.mean or 0.0) / partner.all.mean
            if share * 100 >= ctx.vs.input_share_pct:
                evidence = f"{name} is {share * 100:.0f} % of the step time ({head:.4g} → {tail:.4g})"
                found.append(
                    Finding("input_bound", Level.WARNING, "job", "input-bound", evidence, start, end)
                )
        elif partner is None and head and tail and tail >= 2 * head and data.all.n >= 2 * MIN_VALUES:
            evidence = f"{name} grew from {head:.4g} to {tail:.4g}"
            found.append(Finding("input_bound", Level.WARNING, "job", "input-bound", evidence, start, end))
    return found[:1]


def _cpu_bursts(ctx: Context) -> list[Finding]:
    found = []
    burst = ctx.vs.burst_idle_pct / 100
    for host in ctx.hosts():
        cpu_windows = ctx.windows.hosts.get(host, {})
        slots = []
        for slot in ctx.slots():
            gpus, cpu = ctx.node_windows(host, slot), cpu_windows.get(slot)
            idle = sum(w.util_idle for w in gpus) / max(1, sum(w.util_n for w in gpus))
            if (
                gpus
                and cpu is not None
                and (cpu.cpu or 0) >= ctx.vs.cpu_busy_pct
                and burst <= idle <= 1 - burst
            ):
                slots.append(slot)
        runs = ctx.sustained(slots)
        if not runs:
            continue
        first, last = runs[0]
        span = range(first, last + 1)
        gpus = [w for s in span for w in ctx.node_windows(host, s)]
        idle = sum(w.util_idle for w in gpus) / max(1, sum(w.util_n for w in gpus))
        cpu = mean(w.cpu for s in span if (w := cpu_windows.get(s)))
        evidence = f"GPUs idle in bursts ({idle * 100:.0f} % of samples) while the host CPU is at {pct(cpu)}"
        found.append(
            Finding(
                "input_bound", Level.WARNING, host, "input-bound", evidence, ctx.start(first), ctx.end(last)
            )
        )
    return found


def input_bound(ctx: Context) -> list[Finding]:
    return _cpu_bursts(ctx) + _data_time(ctx)


def comm_bound(ctx: Context) -> list[Finding]:
    found = []
    hosts = ctx.hosts()
    if len(hosts) >= 2:
        slots = []
        for slot in ctx.slots():
            windows = [w for h in hosts for w in ctx.node_windows(h, slot)]
            share = power_share(windows)
            busy = is_busy(median(w.util for w in windows), ctx.th)
            if busy and share is not None and share * 100 < ctx.vs.comm_power_pct:
                slots.append(slot)
        if runs := ctx.sustained(slots):
            first, last = runs[0]
            windows = [w for s in range(first, last + 1) for h in hosts for w in ctx.node_windows(h, s)]
            share = power_share(windows) or 0.0
            evidence = (
                f"GPUs {pct(median(w.util for w in windows))} busy at {share * 100:.0f} % of their power "
                f"limit on {len(hosts)} nodes"
            )
            found.append(
                Finding(
                    "comm_bound",
                    Level.WARNING,
                    "job",
                    "communication-bound",
                    evidence,
                    ctx.start(first),
                    ctx.end(last),
                )
            )
    busy = ctx.metrics.nccl_busy  # per process: µs in collectives over its records' wall time
    walls = {p: (s.last or 0) - (s.first or 0) + NCCL_WINDOW_S for p, s in busy.items()}
    shares = [min(1.0, s.total / 1e6 / walls[p]) for p, s in busy.items() if walls[p] >= MIN_NCCL_SPAN_S]
    share = median(shares)
    if not found and share is not None and share * 100 >= ctx.vs.comm_share_pct:
        start, end = min(s.first or 0 for s in busy.values()), max(s.last or 0 for s in busy.values())
        evidence = f"ranks in NCCL collectives {share * 100:.0f} % of the wall time (median of {len(shares)})"
        found.append(Finding("comm_bound", Level.WARNING, "job", "communication-bound", evidence, start, end))
    return found


def hang(ctx: Context) -> list[Finding]:
    if not ctx.running:
        return []
    metrics, now = ctx.metrics, ctx.now
    quiet_progress = None if metrics.last_progress is None else now - metrics.last_progress
    quiet_output = None if ctx.last_output is None else now - ctx.last_output
    if quiet_progress is None and quiet_output is None:
        return []
    quiet = [q for q in (quiet_progress, quiet_output) if q is not None]
    if not all(quiet_too_long(q, ctx.th) and q >= 3 * metrics.longest_gap_s for q in quiet):
        return []
    since = now - min(quiet)
    width = ctx.windows.width
    windows = [
        w
        for s in ctx.windows.gpus.values()
        for slot, w in (s.windows or {}).items()
        if (ctx.windows.origin or 0) + slot * width >= since and w.util_n
    ]
    util = mean(w.util for w in windows)
    if util is None:
        gpus = "no GPU samples since"
    elif util < ctx.th.idle_util_pct:
        gpus = f"GPUs idle ({pct(util)})"
    elif util >= ctx.vs.pinned_util_pct:
        gpus = f"GPUs pinned at {pct(util)} (spinning: a collective or kernel waits)"
    else:
        gpus = f"GPUs at {pct(util)}"
    what = "no new metric" if quiet_progress is not None else "no metric seen"
    output = " and no new output" if quiet_output is not None else ""
    evidence = f"{what}{output} for {hms(min(quiet))}, {gpus}"
    return [Finding("hang", Level.CRITICAL, "job", "hang?", evidence, since, now)]
