"""Rules that compare GPUs and nodes with their peers: a straggler node, a straggler GPU, idle GPUs.

- **straggler node**: in a window, a node's mean utilisation is ``[alerts] straggler_gap_pct`` points
  or more under the median of the other nodes while they are busy (``busy_util_pct``), for
  ``sustain_minutes`` in a row;
- **idle GPU**: a GPU under ``idle_util_pct`` in ``idle_all_along_pct`` % of its samples while the
  other GPUs are busy on average;
- **straggler GPU**: the same comparison as a node's, GPU against the median of every other GPU (the
  GPUs of a straggler node and idle GPUs are left to their own verdicts).
"""

from __future__ import annotations

from gputui.monitor.conditions import Level, is_busy, lags
from gputui.monitor.verdicts.context import Context, gpu_list, mean, median, median_of_others
from gputui.monitor.verdicts.findings import Finding, pct
from gputui.monitor.verdicts.windows import GpuSeries


def straggler_nodes(ctx: Context) -> list[Finding]:
    hosts = ctx.hosts()
    if len(hosts) < 2:
        return []
    lagging: dict[str, list[int]] = {}
    for slot in ctx.slots():
        means = {h: mean(w.util for w in ctx.node_windows(h, slot)) for h in hosts}
        known = {h: m for h, m in means.items() if m is not None}
        for host, value in known.items():
            peers = median(m for h, m in known.items() if h != host)
            if peers is not None and is_busy(peers, ctx.th) and lags(value, peers, ctx.th):
                lagging.setdefault(host, []).append(slot)
    found = []
    for host, slots in sorted(lagging.items()):
        runs = ctx.sustained(slots)
        if not runs:
            continue
        first, last = runs[0]
        span = range(first, last + 1)
        own = mean(w.util for s in span for w in ctx.node_windows(host, s))
        others = [h for h in hosts if h != host]
        theirs = mean(w.util for s in span for h in others for w in ctx.node_windows(h, s))
        on = others[0] if len(others) == 1 else f"the other {len(others)} nodes"
        evidence = f"GPUs {pct(own)} vs {pct(theirs)} on {on}"
        power = mean(w.power for s in span for w in ctx.node_windows(host, s))
        peer_power = mean(w.power for s in span for h in others for w in ctx.node_windows(h, s))
        if power is not None and peer_power is not None:
            evidence += f", power {power:.0f} vs {peer_power:.0f} W"
        found.append(
            Finding(
                "straggler_node", Level.WARNING, host, "straggler", evidence, ctx.start(first), ctx.end(last)
            )
        )
    return found


def idle_series(ctx: Context) -> list[GpuSeries]:
    """GPUs idle in ``idle_all_along_pct`` % of their samples while the others work."""
    share = ctx.vs.idle_all_along_pct / 100
    idle = [s for s in ctx.windows.gpus.values() if s.util_n and s.util_idle / s.util_n >= share]
    working = [s for s in ctx.windows.gpus.values() if s not in idle]
    util = mean(w.util for s in working for w in (s.windows or {}).values())
    return idle if working and is_busy(util, ctx.th) else []


def idle_gpus(ctx: Context) -> list[Finding]:
    idle = idle_series(ctx)
    if not idle:
        return []
    working = [s for s in ctx.windows.gpus.values() if s not in idle]
    util = mean(w.util for s in working for w in (s.windows or {}).values())
    found = []
    for host in sorted({s.host for s in idle}):
        mine = sorted((s for s in idle if s.host == host), key=lambda s: (s.index is None, s.index, s.gpu_id))
        windows = [w for s in mine for w in (s.windows or {}).values()]
        evidence = f"{pct(mean(w.util for w in windows))} vs {pct(util)} on the other GPUs"
        start, end = min(w.t_first for w in windows), max(w.t_last for w in windows)
        where = gpu_list([s.name for s in mine])
        found.append(Finding("idle_gpu", Level.WARNING, where, "idle all along", evidence, start, end))
    return found


def straggler_gpus(ctx: Context, nodes: list[Finding]) -> list[Finding]:
    """GPUs lagging the median of the others (``nodes``: straggler nodes already found, left out)."""
    skip_hosts = {f.where for f in nodes}
    idle = {(s.host, s.gpu_id) for s in idle_series(ctx)}
    series = {k: s for k, s in ctx.windows.gpus.items() if k not in idle and s.host not in skip_hosts}
    everyone = {k: s for k, s in ctx.windows.gpus.items() if k not in idle}
    if len(everyone) < 2:
        return []
    lagging: dict[tuple[str, str], list[int]] = {}
    for slot in ctx.slots():
        utils = {k: w.util for k, s in everyone.items() if (w := (s.windows or {}).get(slot)) and w.util_n}
        ordered = sorted(u for u in utils.values() if u is not None)
        for key in series:
            if utils.get(key) is None:
                continue
            peers = median_of_others(ordered, utils[key])
            if peers is not None and is_busy(peers, ctx.th) and lags(utils[key], peers, ctx.th):
                lagging.setdefault(key, []).append(slot)
    found = []
    for key, slots in sorted(lagging.items()):
        runs = ctx.sustained(slots)
        if not runs:
            continue
        first, last = runs[0]
        span = range(first, last + 1)
        own = mean(w.util for s in span if (w := (series[key].windows or {}).get(s)))
        theirs = mean(
            w.util for k, o in everyone.items() if k != key for s in span if (w := (o.windows or {}).get(s))
        )
        evidence = f"{pct(own)} vs {pct(theirs)} on the other GPUs"
        found.append(
            Finding(
                "straggler_gpu",
                Level.WARNING,
                series[key].name,
                "straggler",
                evidence,
                ctx.start(first),
                ctx.end(last),
            )
        )
    return found
