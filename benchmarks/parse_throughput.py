"""Log-parsing throughput, peak memory and follow latency.

Builds a mixed log by concatenating the peer logs (``tests/logs/data/*.log``: Keras bars with
backspaces, Lightning/tqdm ``\\r`` frames, HF dicts, NCCL noise, tracebacks, several ranks) up to
``--size-mb`` in /tmp, then measures:

- the floor: reading the same file line by line in Python without parsing (``for line in f``);
- ``gputui.logs.parse_stream`` over it (1 MiB reads): MB/s, lines/s and the ratio to the floor;
- peak resident memory of the parsing process (a fresh child process, so it is the parser's own);
- latency while following: a writer appends a line, a :class:`LogFollower` polling every
  ``--poll`` seconds yields its record; the time from write to record.

Usage: ``python benchmarks/parse_throughput.py [--size-mb 64] [--keep]``; ``--size-mb 1024`` for the
full 1 GB run recorded in ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "logs" / "data"


def build(path: Path, size: int) -> tuple[int, int]:
    corpus = b"".join(p.read_bytes() + b"\n" for p in sorted(DATA.glob("*.log")))
    written = 0
    with open(path, "wb") as f:
        while written < size:
            piece = corpus[: size - written]
            f.write(piece)
            written += len(piece)
    with open(path, "rb") as f:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    return written, lines


def floor(path: Path) -> float:
    start = time.perf_counter()
    count = 0
    with open(path, "rb") as f:
        for _line in f:
            count += 1
    return time.perf_counter() - start


CHILD = """
import json, resource, sys, time
from gputui.logs import parse_stream
start = time.perf_counter()
n = 0
with open(sys.argv[1], "rb") as f:
    for _ in parse_stream(f):
        n += 1
elapsed = time.perf_counter() - start
print(json.dumps({"seconds": elapsed, "records": n,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

BASELINE = """
import json, resource
import gputui.logs
print(json.dumps({"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def parse_in_child(path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def baseline_rss() -> float:
    out = subprocess.run([sys.executable, "-c", BASELINE], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["peak_rss_mb"]


def follow_latency(poll: float, count: int = 100) -> list[float]:
    from gputui.logs.follower import LogFollower

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "slurm-1.out"
        path.write_bytes(b"")
        written: dict[int, float] = {}
        follower = LogFollower(path)
        done = threading.Event()

        def writer() -> None:
            with open(path, "ab", buffering=0) as f:
                for i in range(count):
                    written[i] = time.monotonic()
                    f.write(f"epoch {i} , loss = 0.5\n".encode())
                    time.sleep(0.013)
            done.set()

        thread = threading.Thread(target=writer)
        thread.start()
        latencies: list[float] = []
        deadline = time.monotonic() + 60
        while len(latencies) < count and time.monotonic() < deadline:
            for record in follower.poll():
                if record.kind == "metric" and record["name"] == "loss":
                    latencies.append(time.monotonic() - written[int(record["epoch"])])
            time.sleep(poll)
        thread.join()
    return latencies


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=64)
    ap.add_argument("--path", default="/tmp/gputui_bench_mixed.log")
    ap.add_argument("--poll", type=float, default=0.05, help="follower poll interval (s)")
    ap.add_argument("--keep", action="store_true", help="keep the built log")
    ns = ap.parse_args()
    path = Path(ns.path)
    size, lines = build(path, int(ns.size_mb * 1024 * 1024))
    try:
        floor(path)  # warm the page cache
        floor_s = min(floor(path) for _ in range(2))
        result = parse_in_child(path)
        base = baseline_rss()
        lat = sorted(follow_latency(ns.poll))
    finally:
        if not ns.keep:
            os.unlink(path)
    mb = size / 1e6
    report = {
        "file_mb": round(mb, 1),
        "lines": lines,
        "floor_mb_s": round(mb / floor_s, 1),
        "floor_lines_s": round(lines / floor_s),
        "parse_mb_s": round(mb / result["seconds"], 1),
        "parse_lines_s": round(lines / result["seconds"]),
        "ratio_to_floor": round(floor_s / result["seconds"], 3),
        "records": result["records"],
        "peak_rss_mb": round(result["peak_rss_mb"], 1),
        "baseline_rss_mb": round(base, 1),
        "follow_poll_s": ns.poll,
        "follow_latency_median_s": round(statistics.median(lat), 4) if lat else None,
        "follow_latency_p95_s": round(lat[int(len(lat) * 0.95) - 1], 4) if lat else None,
        "follow_latency_max_s": round(lat[-1], 4) if lat else None,
        "follow_records": len(lat),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
