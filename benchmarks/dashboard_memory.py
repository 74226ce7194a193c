"""Memory of the dashboard model over a simulated 48 h run (time-compressed): flat after warm-up?

    python benchmarks/dashboard_memory.py [--nodes 8] [--gpus 8] [--hours 48] [--tracemalloc]

A synthetic job is fed into one :class:`~gputui.monitor.state.DashboardState` in one thread
(``state.ingest`` per node and second, ``state.text`` stamped with the record time, ``state.check()`` once
per minute of record time), as fast as the CPU allows, with record times advancing one second per
simulated second. No :class:`~gputui.sources.base.Feed` here: it is drained on every apply, and its
``text`` stamps the wall clock, which a time-compressed run must not (``no_output`` would fire).

- one GPU record per GPU per second (``--nodes`` × ``--gpus``; 8 × 8 by default, ``--nodes 64`` for the
  full 64 × 8 job; more nodes only make the run longer, every per-GPU structure is bounded the same way)
  and one host record per node per second, as ``gputui probe --interval 1`` writes;
- a ``loss`` metric every 10 s (with step and fractional epoch), and at each epoch end (every
  ``--epoch-minutes``) ``loss``/``accuracy``/``epoch_time_s`` with ``scope="epoch"``;
- ~``--log-bps`` bytes of job output per second of record time (``state.text``), lines of ~100 bytes
  with a ``\\r``-redrawn progress bar every 10 s;
- one GPU idle for 5 minutes every hour and one hot for 10 minutes every 3 hours, so alerts are raised
  and cleared over the run.

At 1 h, 6 h, 12 h, 24 h and 48 h of record time (after ``gc.collect()``) it prints the process RSS
(``psutil``), the Python heap in use (``sys.getallocatedblocks()``, the number of live pymalloc
blocks: independent of how the allocator returns pages to the OS) and, with ``--tracemalloc``, the
traced Python memory (about 3× slower), and what the bounded structures hold (points in all series
and per-GPU sparklines, epoch rows, alert history: these fill during warm-up, the series' min/max
decimation then saw-tooths them between ~¾ and full capacity). Then the ratios 48 h / 6 h. Goal: flat
within ±10 % after warm-up.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time

import psutil

from gputui.monitor.state import DashboardState, JobInfo
from gputui.stream.records import Record

T0 = 1_800_000_000.0
GIB = 1024**3
LOG_PATH = "/scratch/job/slurm-4711.out"
CHECK_S = 60  # state.check() once per minute of record time


def gpu_table(nodes: int, gpus: int) -> list[tuple[str, str, int]]:
    return [
        (f"node{n:03d}", f"GPU-{n:04x}{g:04x}-5a1e-4c2b-9d3f-0000{n:04x}{g:04x}", g)
        for n in range(nodes)
        for g in range(gpus)
    ]


def gpu_records(table: list[tuple[str, str, int]], s: int, gpus: int) -> list[list[Record]]:
    """One second of GPU records, one list per node (what a node's probe writes in a tick)."""
    t = T0 + s
    hour_s = s % 3600
    idle = hour_s < 300  # GPU 3 of the first node idles 5 min each hour
    hot = s % 10800 < 600  # GPU 5 of the first node runs hot 10 min every 3 h
    out: list[list[Record]] = []
    node: list[Record] = []
    for i, (host, gpu_id, index) in enumerate(table):
        jitter = (i * 7 + s * 13) % 11
        util = 0.0 if idle and i == 3 else 88.0 + jitter + (s % 7) / 10
        node.append(
            Record(
                kind="gpu",
                time=t,
                fields={
                    "host": host,
                    "gpu_id": gpu_id,
                    "index": index,
                    "util_gpu_pct": util,
                    "mem_used_bytes": 60 * GIB + ((s + i) % 997) * 1024**2,
                    "mem_total_bytes": 80 * GIB,
                    "temp_c": 88.0 if hot and i == 5 else 60.0 + jitter + (s % 5) / 10,
                    "power_w": 300.0 + 3 * jitter + (s % 9) / 10,
                    "simulated": True,
                    "vendor": "nvidia",
                    "source": "sim",
                },
            )
        )
        if len(node) == gpus:
            out.append(node)
            node = []
    return out


def host_record(host: str, s: int) -> Record:
    fields = {"host": host, "cpu_pct": 40.0 + s % 17, "mem_used_bytes": 200 * GIB + s % 1000, "load1": 12.5}
    fields["mem_total_bytes"] = 512 * GIB
    return Record(kind="host", time=T0 + s, fields=fields)


def loss_record(s: int, step: int, epoch: float) -> Record:
    fields = {"name": "loss", "value": 2.0 / (1 + s / 3600) + (s % 13) / 1000, "step": step}
    fields.update(epoch=epoch, rank=0, source="reporter", time_source="emitted")
    return Record(kind="metric", time=T0 + s, fields=fields)


def epoch_records(s: int, epoch: int, epoch_s: int) -> list[Record]:
    values = {"loss": 1.0 / (1 + epoch), "accuracy": 1 - 0.5 / (1 + epoch), "epoch_time_s": float(epoch_s)}
    return [
        Record(
            kind="metric",
            time=T0 + s,
            fields={"name": name, "value": value, "epoch": epoch, "rank": 0, "scope": "epoch"},
        )
        for name, value in values.items()
    ]


def log_chunk(s: int, step: int, bps: int) -> bytes:
    """About ``bps`` bytes of output for second ``s``: lines of ~100 bytes, a bar frame every 10 s."""
    lines = []
    size = 0
    k = 0
    while size < bps:
        loss = 2.0 / (1 + s / 3600)
        line = f"[rank0] it {step} k {k} t {s}: loss={loss:.6f} lr=3.0e-04 grad_norm=1.234 tok/s=98765\n"
        lines.append(line)
        size += len(line)
        k += 1
    if s % 10 == 0:
        done = s % 600
        lines.append(f"\r{done / 6:5.1f}%|{'#' * (done // 30):<20}| {done}/600 [00:{s % 60:02d}<00:59]")
    return "".join(lines).encode()


def held(state: DashboardState) -> tuple[int, int, int]:
    """What the bounded structures hold: series points, epoch rows, alerts in the history."""
    training = state.training
    series = [state.board.util_line, training.step_time]
    for m in training.metrics.values():
        series += [m.by_step, m.by_epoch, m.by_time]
    points = sum(len(x) for x in series) + sum(len(g.recent) for g in state.board.gpus.values())
    return points, len(training.epochs.rows()), len(state.alerts.history)


def measure(state: DashboardState, tracemalloc_on: bool) -> dict[str, float]:
    gc.collect()
    points, epochs, alerts = held(state)
    out = {
        "rss": psutil.Process().memory_info().rss / 2**20,
        "blocks": sys.getallocatedblocks(),
        "points": points,
        "epochs": epochs,
        "alerts": alerts,
    }
    if tracemalloc_on:
        import tracemalloc

        out["traced"] = tracemalloc.get_traced_memory()[0] / 2**20
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=8)
    p.add_argument("--gpus", type=int, default=8)
    p.add_argument("--hours", type=float, default=48.0, help="record time simulated")
    p.add_argument("--checkpoints", default="1,6,12,24,48", help="hours of record time to measure at")
    p.add_argument("--log-bps", type=int, default=1024, help="job output per second of record time")
    p.add_argument("--epoch-minutes", type=int, default=30)
    p.add_argument("--tracemalloc", action="store_true", help="also trace Python allocations (slower)")
    args = p.parse_args()
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start()
    checkpoints = sorted(float(h) for h in args.checkpoints.split(",") if float(h) <= args.hours)
    table = gpu_table(args.nodes, args.gpus)
    hosts = sorted({host for host, _, _ in table})
    job = JobInfo(kind="attach", title="bench", job_id="4711", state="RUNNING", started=T0)
    state = DashboardState(job)
    epoch_s = args.epoch_minutes * 60
    steps_per_s = 5
    results: list[tuple[str, dict[str, float], float]] = []
    results.append(("start (empty state)", measure(state, args.tracemalloc), 0.0))
    total_s = int(args.hours * 3600)
    next_cp = 0
    log_bytes = 0
    wall0 = time.perf_counter()
    for s in range(total_s):
        for node_records in gpu_records(table, s, args.gpus):
            state.ingest(node_records)
        state.ingest([host_record(h, s) for h in hosts])
        step = s * steps_per_s
        if s % 10 == 0:
            state.ingest([loss_record(s, step, s / epoch_s)])
        if s and s % epoch_s == 0:
            state.ingest(epoch_records(s, s // epoch_s - 1, epoch_s))
        data = log_chunk(s, step, args.log_bps)
        log_bytes += len(data)
        state.text(LOG_PATH, data, T0 + s)
        if (s + 1) % CHECK_S == 0:
            state.check(T0 + s)
            done_h = (s + 1) / 3600
            while next_cp < len(checkpoints) and done_h >= checkpoints[next_cp] - 1e-9:
                label = f"{checkpoints[next_cp]:g} h"
                results.append((label, measure(state, args.tracemalloc), time.perf_counter() - wall0))
                next_cp += 1
    wall = time.perf_counter() - wall0

    print(
        f"{args.nodes} nodes × {args.gpus} GPUs at 1 Hz + host records, loss every 10 s, "
        f"{args.log_bps} B/s of output; {args.hours:g} h of record time in {wall:.1f} s wall"
    )
    print(
        f"records ingested {state.records:,}; output {log_bytes / 2**20:,.1f} MiB, "
        f"{state.logs[LOG_PATH].total_lines:,} lines; alerts raised {len(state.alerts.history)}, "
        f"epochs {len(state.training.rows())}"
    )
    print()
    traced = args.tracemalloc
    head = "| record time | RSS MiB | allocated blocks |" + (" traced MiB |" if traced else "")
    print(head + " series points | epoch rows | alert history | wall s |")
    print("|---|---:|---:|" + ("---:|" if traced else "") + "---:|---:|---:|---:|")
    for label, m, at in results:
        cells = [label, f"{m['rss']:.1f}", f"{m['blocks']:,}"]
        if traced:
            cells.append(f"{m['traced']:.2f}")
        cells += [f"{m['points']:,}", f"{m['epochs']}", f"{m['alerts']}", f"{at:.1f}"]
        print("| " + " | ".join(cells) + " |")
    by = {label: m for label, m, _ in results}
    base = results[0][1]
    if "6 h" in by and "48 h" in by:
        a, b = by["6 h"], by["48 h"]
        print()
        print(f"RSS 48 h / 6 h: {b['rss'] / a['rss']:.3f}", end="")
        grown = (b["rss"] - base["rss"]) / max(a["rss"] - base["rss"], 1e-9)
        above_a, above_b = a["rss"] - base["rss"], b["rss"] - base["rss"]
        print(f"  (above the empty state: {above_a:.1f} → {above_b:.1f} MiB, {grown:.3f})")
        print(f"allocated blocks 48 h / 6 h: {b['blocks'] / a['blocks']:.3f}", end="")
        grown = (b["blocks"] - base["blocks"]) / max(a["blocks"] - base["blocks"], 1)
        print(f"  (above the empty state: {grown:.3f})")
        if traced:
            print(f"traced 48 h / 6 h: {b['traced'] / a['traced']:.3f}")
        flat = abs(b["rss"] / a["rss"] - 1) <= 0.10
        print(f"goal (flat within ±10 % after warm-up, RSS 48 h vs 6 h): {'met' if flat else 'NOT met'}")


if __name__ == "__main__":
    main()
