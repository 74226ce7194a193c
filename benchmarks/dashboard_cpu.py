"""The dashboard's own CPU while it follows a big live job: 64 nodes × 8 GPUs at 1 Hz plus a log
growing at 1 MB/s. Goal (issue 10): under 15 % of one core.

    python benchmarks/dashboard_cpu.py [--nodes 64] [--gpus 8] [--log-mb-s 1] [--seconds 30] [--size 200x60]

A writer *process* (not counted) appends, every second, one JSON record per GPU (the probe's fields) and a
loss metric to a record file, and ``--log-mb-s`` of training output (tqdm-style ``\\r`` frames and
epoch lines) to a log file. The real app (``GputuiApp``, headless, at ``--size``) replays both files
live: it reads and parses the new records and log text, feeds its state, refreshes the screen and
redraws the charts, as when attached to a job (where the same parsing happens on the records of the
probe step and the job's output). The app process's CPU time (user + system, all threads) over
``--seconds`` after a 5 s warm-up is printed as a share of one core, with its RSS before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gputui.sources.replay import ReplaySource
from gputui.tui.app import GputuiApp


def writer(folder: str, nodes: int, gpus: int, log_bytes: int, stop_at: float) -> None:
    records, log = Path(folder) / "job.jsonl", Path(folder) / "slurm-1.out"
    second = 0
    start = time.time()
    with open(records, "ab", buffering=0) as rec_out, open(log, "ab", buffering=0) as log_out:
        while time.time() < stop_at:
            now = time.time()
            lines = []
            for n in range(nodes):
                for g in range(gpus):
                    util = 90 + (n * 7 + g * 3 + second) % 10
                    lines.append(
                        json.dumps(
                            {
                                "v": 1,
                                "kind": "gpu",
                                "time": now,
                                "host": f"gpu{n:03d}",
                                "gpu_id": f"GPU-{n:03d}-{g}",
                                "index": g,
                                "vendor": "nvidia",
                                "source": "nvml",
                                "simulated": False,
                                "util_gpu_pct": util,
                                "mem_used_bytes": 60 << 30,
                                "mem_total_bytes": 80 << 30,
                                "temp_c": 60 + g,
                                "power_w": 300.0 + g,
                                "power_limit_w": 400.0,
                            }
                        )
                    )
            lines.append(
                json.dumps(
                    {
                        "v": 1,
                        "kind": "metric",
                        "time": now,
                        "name": "loss",
                        "value": 2.0 / (1 + second),
                        "step": second + 1,
                        "rank": 0,
                    }
                )
            )
            rec_out.write(("\n".join(lines) + "\n").encode())
            text = []
            size = 0
            step = second * 1000
            while size < log_bytes:
                step += 1
                bar = "█" * (step % 40)
                frame = f"\rEpoch 1:  {step % 100:3d}%|{bar:<40}| {step}/100000 [00:10<01:00, 9.5it/s]"
                line = frame if step % 10 else frame + f"\nstep {step} loss {1.0 / step:.5f} lr 0.001\n"
                text.append(line)
                size += len(line)
            log_out.write("".join(text).encode())
            second += 1
            time.sleep(max(0.0, start + second - time.time()))


async def measure(folder: str, seconds: float, size: tuple[int, int]) -> tuple[float, float, float]:
    source = ReplaySource([str(Path(folder) / "job.jsonl"), str(Path(folder) / "slurm-1.out")])
    app = GputuiApp(source)
    proc = psutil.Process()
    async with app.run_test(headless=True, size=size) as pilot:
        await pilot.pause(5.0)  # warm-up: the files are loaded, the cursor is at the live end
        rss0 = proc.memory_info().rss
        usage0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
        await asyncio.sleep(seconds)
        usage1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
        rss1 = proc.memory_info().rss
        records = app.screen.state.records
        await pilot.press("q")
    cpu = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
    print(f"records in the state at the end: {records}")
    return cpu / (t1 - t0), rss0 / 2**20, rss1 / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--log-mb-s", type=float, default=1.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--size", default="200x60")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    with tempfile.TemporaryDirectory() as folder:
        stop_at = time.time() + args.seconds + 12
        feeder = multiprocessing.Process(
            target=writer, args=(folder, args.nodes, args.gpus, int(args.log_mb_s * 2**20), stop_at)
        )
        feeder.start()
        time.sleep(1.5)  # the files exist before the app opens them
        share, rss0, rss1 = asyncio.run(measure(folder, args.seconds, (width, height)))
        feeder.terminate()
        feeder.join()
        grown = os.path.getsize(Path(folder) / "slurm-1.out") / 2**20
    print(
        f"{args.nodes} nodes × {args.gpus} GPUs at 1 Hz + log {args.log_mb_s:g} MB/s "
        f"({grown:.0f} MiB written), screen {args.size}, {args.seconds:g} s"
    )
    print(f"app CPU: {100 * share:.1f} % of one core (goal < 15 %)")
    print(f"app RSS: {rss0:.0f} → {rss1:.0f} MiB over the measured window")
    return 0


if __name__ == "__main__":
    sys.exit(main())
