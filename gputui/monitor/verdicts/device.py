"""Rules about each GPU on its own: throttling and memory creep (GPUs of one node with the same verdict
share one line).

- **throttling**, for ``sustain_minutes`` in a row, one of: the SM clock ``clock_drop_pct`` % or more
  under the GPU's own maximum of the run while utilisation is at or above ``high_util_pct`` (warning);
  the temperature at or above ``[alerts] hot_temp_c`` (warning); the power at ``power_limit_pct`` % of
  its limit or more (a notice: a power cap is often how a GPU is run);
- **memory creep**: memory used (window means) rises from the second quarter of the run to the third
  and the fourth, by ``mem_creep_pct`` % of the total or more (the first quarter is start-up, when
  frameworks allocate); the line says when it would be full at that rate.
"""

from __future__ import annotations

from collections.abc import Callable

from gputui.monitor.conditions import Level, is_hot
from gputui.monitor.verdicts.context import Context, gpu_list, mean
from gputui.monitor.verdicts.findings import Finding, hms
from gputui.monitor.verdicts.windows import GpuSeries, GpuWindow

MIN_WINDOWS = 8  # memory creep: fewer windows say nothing about a trend
GIB = float(1 << 30)


def _checks(ctx: Context) -> dict[str, Callable[[GpuSeries, GpuWindow], bool]]:
    vs = ctx.vs

    def slow_clock(series: GpuSeries, w: GpuWindow) -> bool:
        busy = w.util is not None and w.util >= vs.high_util_pct
        top = series.clock_max
        return busy and w.clock is not None and bool(top) and w.clock <= top * (1 - vs.clock_drop_pct / 100)

    def hot(series: GpuSeries, w: GpuWindow) -> bool:
        return is_hot(w.temp_max, ctx.th)

    def capped(series: GpuSeries, w: GpuWindow) -> bool:
        return (
            w.power is not None
            and bool(w.power_limit)
            and w.power >= w.power_limit * vs.power_limit_pct / 100
        )

    return {"clock": slow_clock, "hot": hot, "power": capped}


def _evidence(cause: str, windows: list[GpuWindow], series: list[GpuSeries], ctx: Context) -> str:
    if cause == "clock":
        top = max(s.clock_max or 0 for s in series)
        return f"SM clock {mean(w.clock for w in windows):.0f} MHz vs {top:.0f} MHz at best, GPUs busy"
    if cause == "hot":
        hottest = max(w.temp_max or 0 for w in windows)
        return f"up to {hottest:.0f}°C (hot from {ctx.th.hot_temp_c:.0f}°C)"
    limit = mean(w.power_limit for w in windows)
    return f"power {mean(w.power for w in windows):.0f} W at its {limit:.0f} W limit"


WHAT = {"clock": "throttled", "hot": "hot", "power": "power-capped"}


def throttling(ctx: Context) -> list[Finding]:
    found = []
    for cause, check in _checks(ctx).items():
        by_host: dict[str, list[tuple[GpuSeries, int, int]]] = {}
        for series in ctx.windows.gpus.values():
            windows = series.windows or {}
            runs = ctx.sustained(slot for slot, w in windows.items() if check(series, w))
            if runs:
                by_host.setdefault(series.host, []).append((series, *runs[0]))
        for _host, hits in sorted(by_host.items()):
            hits.sort(key=lambda h: (h[0].index is None, h[0].index, h[0].gpu_id))
            windows = [
                w for s, a, b in hits for slot in range(a, b + 1) if (w := (s.windows or {}).get(slot))
            ]
            level = Level.NOTICE if cause == "power" else Level.WARNING
            evidence = _evidence(cause, windows, [h[0] for h in hits], ctx)
            start, end = min(ctx.start(a) for _, a, _ in hits), max(ctx.end(b) for _, _, b in hits)
            where = gpu_list([s.name for s, _, _ in hits])
            found.append(Finding(f"throttle_{cause}", level, where, WHAT[cause], evidence, start, end))
    return found


def _creep(series: GpuSeries, ctx: Context) -> tuple[float, float, float, float] | None:
    """(start share, end share, total bytes, bytes per second) when memory creeps, else None."""
    windows = [w for _, w in sorted((series.windows or {}).items()) if w.mem is not None]
    total = next((w.mem_total for w in reversed(windows) if w.mem_total), None)
    if len(windows) < MIN_WINDOWS or not total:
        return None
    q = len(windows) // 4
    quarters = [windows[q : 2 * q], windows[2 * q : 3 * q], windows[3 * q :]]
    means = [mean(w.mem for w in part) or 0.0 for part in quarters]
    rising = means[0] < means[1] < means[2]
    if not rising or (means[2] - means[0]) / total < ctx.vs.mem_creep_pct / 100:
        return None
    first, last = quarters[0][0], quarters[2][-1]
    seconds = max(1.0, last.t_last - first.t_first)
    start_mem, end_mem = first.mem or means[0], last.mem or means[2]
    return start_mem / total, end_mem / total, total, (end_mem - start_mem) / seconds


def memory_creep(ctx: Context) -> list[Finding]:
    by_host: dict[str, list[tuple[GpuSeries, tuple[float, float, float, float]]]] = {}
    for series in ctx.windows.gpus.values():
        if (creep := _creep(series, ctx)) is not None:
            by_host.setdefault(series.host, []).append((series, creep))
    found = []
    for _host, hits in sorted(by_host.items()):
        hits.sort(key=lambda h: (h[0].index is None, h[0].index, h[0].gpu_id))
        worst = max(hits, key=lambda h: h[1][1])[1]
        low, high, total, rate = worst
        evidence = f"memory {low * 100:.0f} % → {high * 100:.0f} % of {total / GIB:.0f} GiB"
        if rate > 0:
            evidence += f", full in ~{hms(total * (1 - high) / rate)} at this rate"
        windows = [w for s, _ in hits for w in (s.windows or {}).values()]
        start, end = min(w.t_first for w in windows), max(w.t_last for w in windows)
        where = gpu_list([s.name for s, _ in hits])
        found.append(Finding("memory_creep", Level.WARNING, where, "memory creeping", evidence, start, end))
    return found
