"""Fan-in at scale: the dashboard model ingesting N nodes × G GPUs at 1 Hz through one Feed.

    python benchmarks/dashboard_ingest.py [--scales 64x8,1024x8] [--seconds 30] [--paced-seconds 5]

For each scale, a synthetic record stream (one GPU record per GPU per second of record time with the
probe's fields, plus one ``loss`` metric per second) is pushed by a producer thread through one
:class:`~gputui.sources.base.Feed` into a :class:`~gputui.monitor.state.DashboardState` that the
consumer (the main thread, standing in for the UI thread) applies whenever the feed notifies it:

1. *as fast as possible*: ``--seconds`` of record time, no pacing. The consumer's own CPU time
   (``time.thread_time`` of the thread that runs ``Feed.apply``) divided by the simulated seconds is the
   ingestion CPU at the real 1 Hz rate, as a fraction of one core. Goal: under one core for 1024 × 8.
2. *paced in real time*: ``--paced-seconds`` wall seconds, each second's records pushed at its wall
   second, the consumer applying on notify and calling ``state.check()`` and ``board.summary()`` on a
   0.5 s refresh timer (the dashboard's default ``refresh_s``): its measured CPU share.
3. the CPU cost of one ``state.check()`` and one ``board.summary()`` at that scale (median of repeats), and of
   ``state.ingest`` called directly in one thread (no Feed, no second thread): per record, one call per
   record (what ``Feed.apply`` does for ``feed.record``) and one call per second's list, after a first
   untimed second that creates every GPU's state.

The producer pushes with ``feed.record`` (one record per call, as ``gputui/sources/attach.py`` does);
``--batch`` pushes one list per node and second (``feed.records``) instead. Records are built the cheap
way (``Record(kind="gpu", ...)``), with the fields a probe writes. A few GPUs are idle, hot or nearly
full and one node lags, so ``check()`` raises its alerts as it would on a real job.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

from gputui.monitor.state import DashboardState, JobInfo
from gputui.sources.base import Feed
from gputui.stream.records import Record

REFRESH_S = 0.5  # DashboardSettings.refresh_s
T0 = 1_800_000_000.0  # record time of the first simulated second
GIB = 1024**3


def gpu_table(nodes: int, gpus: int) -> list[tuple[str, str, int, int]]:
    """(host, gpu_id, index, pattern) per GPU; pattern 0 busy, 1 idle, 2 hot, 3 memory nearly full,
    4 a lagging node."""
    out = []
    for n in range(nodes):
        host = f"node{n:04d}"
        for g in range(gpus):
            gpu_id = f"GPU-{n:04x}{g:04x}-5a1e-4c2b-9d3f-0000{n:04x}{g:04x}"
            pattern = 0
            if n == 1 and g == 3:
                pattern = 1
            elif n == 2 and g == 5:
                pattern = 2
            elif n == 3 and g == 0:
                pattern = 3
            elif n == 4 and nodes > 8:
                pattern = 4
            out.append((host, gpu_id, g, pattern))
    return out


def second_records(table: list[tuple[str, str, int, int]], s: int) -> list[Record]:
    """One second of GPU records (at record time T0 + s), in node order."""
    t = T0 + s
    out = []
    append = out.append
    for i, (host, gpu_id, index, pattern) in enumerate(table):
        jitter = (i * 7 + s * 13) % 11
        if pattern == 1:
            util = 0.0
        elif pattern == 4:
            util = 40.0 + jitter
        else:
            util = 88.0 + jitter
        append(
            Record(
                kind="gpu",
                time=t,
                fields={
                    "host": host,
                    "gpu_id": gpu_id,
                    "index": index,
                    "util_gpu_pct": util,
                    "mem_used_bytes": (78 if pattern == 3 else 60) * GIB + jitter * 1024**2,
                    "mem_total_bytes": 80 * GIB,
                    "temp_c": 88.0 if pattern == 2 else 60.0 + jitter,
                    "power_w": 300.0 + 3 * jitter,
                    "simulated": True,
                    "vendor": "nvidia",
                    "source": "sim",
                },
            )
        )
    return out


def loss_record(s: int) -> Record:
    fields = {"name": "loss", "value": 2.0 / (1 + s / 100), "step": 10 * (s + 1), "epoch": 1}
    fields["source"] = "bench"
    return Record(kind="metric", time=T0 + s, fields=fields)


def new_state() -> DashboardState:
    job = JobInfo(kind="attach", title="bench", job_id="1", state="RUNNING", started=T0)
    return DashboardState(job)


def pipeline(
    table: list[tuple[str, str, int, int]], gpus: int, seconds: int, *, paced: bool, batch: bool
) -> dict[str, float]:
    """Producer thread → Feed → consumer (this thread). Returns times, CPU and counts."""
    state = new_state()
    wake = threading.Event()
    feed = Feed(notify=wake.set)
    done = threading.Event()
    producer_cpu: list[float] = []
    start_wall = time.perf_counter()

    def produce() -> None:
        c0 = time.thread_time()
        for s in range(seconds):
            if paced:
                delay = start_wall + s - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
            recs = second_records(table, s)
            recs.append(loss_record(s))
            if batch:
                for i in range(0, len(recs) - 1, gpus):
                    feed.records(recs[i : i + gpus])
                feed.record(recs[-1])
            else:
                for rec in recs:
                    feed.record(rec)
        producer_cpu.append(time.thread_time() - c0)
        done.set()
        wake.set()

    producer = threading.Thread(target=produce, name="producer")
    c0 = time.thread_time()
    t0 = time.perf_counter()
    producer.start()
    apply_cpu = check_cpu = 0.0
    checks = 0
    next_refresh = t0 + REFRESH_S
    while True:
        timeout = max(0.0, next_refresh - time.perf_counter()) if paced else 0.1
        wake.wait(timeout)
        wake.clear()
        a = time.thread_time()
        state = feed.apply(state)
        apply_cpu += time.thread_time() - a
        if paced and time.perf_counter() >= next_refresh:
            a = time.thread_time()
            state.check(state.last_time)
            state.board.summary()
            check_cpu += time.thread_time() - a
            checks += 1
            next_refresh += REFRESH_S
        if done.is_set():
            state = feed.apply(state)  # anything pushed after the last drain
            break
    wall = time.perf_counter() - t0
    consumer_cpu = time.thread_time() - c0
    producer.join()
    expected = seconds * (len(table) + 1)
    if state.records != expected:
        raise SystemExit(f"ingested {state.records} records, expected {expected}")
    return {
        "records": state.records,
        "wall": wall,
        "consumer_cpu": consumer_cpu,
        "apply_cpu": apply_cpu,
        "check_cpu": check_cpu,
        "checks": checks,
        "producer_cpu": producer_cpu[0],
        "alerts": len(state.alerts.active),
    }


def direct(table: list[tuple[str, str, int, int]], seconds: int) -> tuple[float, float, DashboardState]:
    """µs per record of ``state.ingest`` in one thread: one call per record, one call per second."""
    per_record = per_list = 0.0
    n = 0
    one, whole = new_state(), new_state()
    for s in range(seconds + 1):
        recs = second_records(table, s)
        recs.append(loss_record(s))
        if s == 0:  # the first second creates every GPU's state: not timed
            one.ingest(recs)
            whole.ingest(list(recs))
            continue
        a = time.thread_time()
        for rec in recs:
            one.ingest([rec])
        b = time.thread_time()
        whole.ingest(recs)
        c = time.thread_time()
        per_record += b - a
        per_list += c - b
        n += len(recs)
    return per_record / n * 1e6, per_list / n * 1e6, whole


def median_ms(fn, repeats: int) -> float:
    """Median CPU time of one call (thread CPU time: robust to other work on the machine)."""
    times = []
    for _ in range(repeats):
        a = time.thread_time()
        fn()
        times.append(time.thread_time() - a)
    return statistics.median(times) * 1e3


def measure(nodes: int, gpus: int, args: argparse.Namespace) -> dict[str, float]:
    table = gpu_table(nodes, gpus)
    fast = pipeline(table, gpus, args.seconds, paced=False, batch=args.batch)
    paced = pipeline(table, gpus, args.paced_seconds, paced=True, batch=args.batch)
    us_one, us_list, state = direct(table, min(args.seconds, 10))
    now = state.last_time
    state.check(now)  # first call raises the alerts; later ones re-evaluate
    check_ms = median_ms(lambda: state.check(now), args.repeats)
    summary_ms = median_ms(state.board.summary, args.repeats)
    return {
        "gpus": len(table),
        "fast_records": fast["records"],
        "fast_wall": fast["wall"],
        "fast_rps": fast["records"] / fast["wall"],
        "fast_consumer_cpu": fast["consumer_cpu"],
        "core_at_1hz": fast["consumer_cpu"] / args.seconds,
        "us_per_record": fast["consumer_cpu"] / fast["records"] * 1e6,
        "producer_us": fast["producer_cpu"] / fast["records"] * 1e6,
        "paced_wall": paced["wall"],
        "paced_apply_share": paced["apply_cpu"] / paced["wall"],
        "paced_share": paced["consumer_cpu"] / paced["wall"],
        "paced_checks": paced["checks"],
        "paced_check_ms": paced["check_cpu"] / max(1, paced["checks"]) * 1e3,
        "direct_one_us": us_one,
        "direct_list_us": us_list,
        "check_ms": check_ms,
        "summary_ms": summary_ms,
        "alerts": len(state.alerts.active),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scales", default="64x8,1024x8", help="comma-separated NODESxGPUS (default 64x8,1024x8)")
    p.add_argument("--seconds", type=int, default=30, help="simulated seconds, as fast as possible")
    p.add_argument("--paced-seconds", type=int, default=5, help="wall seconds paced at 1 Hz")
    p.add_argument("--repeats", type=int, default=20, help="calls of check() and summary() timed")
    p.add_argument("--batch", action="store_true", help="push one list per node (feed.records)")
    args = p.parse_args()
    scales = [tuple(int(x) for x in s.lower().split("x")) for s in args.scales.split(",")]
    results = {f"{n}×{g}": measure(n, g, args) for n, g in scales}
    push = "feed.records, one list per node and second" if args.batch else "feed.record, one call per record"
    print(f"producer → Feed ({push}) → DashboardState")
    print(f"{args.seconds} s simulated as fast as possible, {args.paced_seconds} s paced at 1 Hz")
    rows = [
        ("GPUs", "gpus", "{:,.0f}"),
        ("records ingested (as fast as possible)", "fast_records", "{:,.0f}"),
        ("wall time, as fast as possible (s)", "fast_wall", "{:.2f}"),
        ("records/s through the Feed (both threads, one GIL)", "fast_rps", "{:,.0f}"),
        ("consumer CPU (Feed.apply → ingest), s", "fast_consumer_cpu", "{:.3f}"),
        ("**ingestion CPU at 1 Hz (core-seconds per simulated second)**", "core_at_1hz", "**{:.3f}**"),
        ("consumer µs per record (via the Feed)", "us_per_record", "{:.2f}"),
        ("producer µs per record (build + feed push, synthetic side)", "producer_us", "{:.2f}"),
        ("`state.ingest` alone, one call per record (µs/record)", "direct_one_us", "{:.2f}"),
        ("`state.ingest` alone, one call per second's list (µs/record)", "direct_list_us", "{:.2f}"),
        ("paced 1 Hz: consumer CPU share, apply only", "paced_apply_share", "{:.1%}"),
        ("paced 1 Hz: consumer CPU share, apply + check + summary every 0.5 s", "paced_share", "{:.1%}"),
        ("paced: CPU per refresh (check + summary), ms", "paced_check_ms", "{:.2f}"),
        ("`state.check()` (median CPU ms)", "check_ms", "{:.2f}"),
        ("`board.summary()` (median CPU ms)", "summary_ms", "{:.2f}"),
        ("active alerts after check", "alerts", "{:.0f}"),
    ]
    names = list(results)
    print()
    print("| measure | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for label, key, fmt in rows:
        print(f"| {label} | " + " | ".join(fmt.format(results[n][key]) for n in names) + " |")
    big = results[names[-1]]
    verdict = "met" if big["core_at_1hz"] < 1.0 else "NOT met"
    core = big["core_at_1hz"]
    print(f"\ngoal (ingestion under one core at 1 Hz for {names[-1]}): {verdict} ({core:.3f} core)")


if __name__ == "__main__":
    main()
