"""Log-parsing throughput, peak memory and follow latency.

Builds a mixed log by concatenating the peer logs (``tests/logs/data/*.log``: Keras bars with
backspaces, Lightning/tqdm ``\\r`` frames, HF dicts, NCCL noise, tracebacks, several ranks) up to
``--size-mb`` in /tmp, then measures:

- two floors, reading the same file line by line in Python without parsing: binary
  (``for line in open(path, "rb")``: split on ``\\n`` only, no decoding) and text
  (``for line in open(path, encoding="utf-8", errors="replace")``: decodes, and universal newlines
  also split on ``\\r``, which is what a progress-bar log needs);
- the normaliser alone (bytes → finished frames, :class:`~gputui.logs.normalize.Normalizer`), the
  part every parser pays before looking at a frame;
- ``gputui.logs.parse_stream`` over it (1 MiB reads, every record consumed): MB/s, lines/s and the
  ratio to each floor; the same in catch-up mode (``thin=True``, :mod:`gputui.logs.thinning`: what
  attach, replay and ``gputui parse`` use while they are behind a large file);
- time to the first screen of a replay: what the dashboard does before it shows a large log (read
  the tail, parse it, fill a state), on the mixed log and on a long progress-bar log (a run of
  tqdm epochs, the shape most large logs have), with the catch-up MB/s of that log too;
- the plain parse on one copy of the corpus with a fresh parser each time (the
  parser's per-stream caches start empty: the big file's repetition is not what makes it fast);
- peak resident memory of the parsing process (a fresh child process, so it is the parser's own), on
  the whole file and on an eighth of it;
- latency while following: a writer appends a line, a :class:`LogFollower` polling every
  ``--poll`` seconds yields its record; the time from write to record; and a writer appending the
  progress-bar log at 50 MB/s for 6 s: the follower's largest lag and how long after the writer
  stopped it had read everything.

Usage: ``python benchmarks/parse_throughput.py [--size-mb 64] [--keep]``; ``--size-mb 1024`` for the
full 1 GB run recorded in ``docs/benchmarks.md``. Timings are the best of ``--repeat`` runs.
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


def corpus() -> bytes:
    return b"".join(p.read_bytes() + b"\n" for p in sorted(DATA.glob("*.log")))


def build(path: Path, size: int) -> tuple[int, int]:
    corpus_bytes = corpus()
    written = 0
    with open(path, "wb") as f:
        while written < size:
            piece = corpus_bytes[: size - written]
            f.write(piece)
            written += len(piece)
    with open(path, "rb") as f:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    return written, lines


def floor(path: Path, text: bool) -> tuple[float, int]:
    """Seconds and lines of reading ``path`` line by line without parsing."""
    start = time.perf_counter()
    count = 0
    f = open(path, encoding="utf-8", errors="replace") if text else open(path, "rb")  # noqa: SIM115
    with f:
        for _line in f:
            count += 1
    return time.perf_counter() - start, count


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

NORMALISE = """
import json, sys, time
from gputui.logs.normalize import Normalizer
from gputui.logs.outcome import gate
start = time.perf_counter()
frames = 0
with open(sys.argv[1], "rb") as f:
    normalizer = Normalizer(gate=gate)
    while chunk := f.read(1 << 20):
        frames += len(normalizer.feed(chunk))
    frames += len(normalizer.finish())
print(json.dumps({"seconds": time.perf_counter() - start, "frames": frames}))
"""

FIRST_SCREEN = """
import json, sys, time
from gputui.sources.base import Feed
from gputui.sources.replay import ReplaySource
start = time.perf_counter()
feed = Feed()
source = ReplaySource([sys.argv[1]], follow=False)
source._preview(feed, source._open(feed))  # what run() does before the history is read
states = [item for item in feed.drain() if item[0] == "state"]
elapsed = time.perf_counter() - start
state = states[0][1] if states else None
print(json.dumps({"seconds": elapsed, "previewed": bool(states),
                  "epoch": state.training.current_epoch() if state else None}))
"""

THIN = CHILD.replace("parse_stream(f)", "parse_stream(f, thin=True)")


def bar_log(path: Path, size: int) -> int:
    """A long tqdm-style run: each epoch 501 bar redraws on one line, then a summary line."""
    written, epoch = 0, 0
    with open(path, "wb") as f:
        while written < size:
            bars = "".join(
                f"\rEpoch {epoch}: {n // 5:3d}%|##| {n}/500 "
                f"[00:{n % 60:02d}<00:30, 9.9it/s, loss={1 / (n + 1):.4f}]"
                for n in range(501)
            )
            block = (bars + f"\nepoch {epoch} done: val_loss={1 / (epoch + 2):.5f}\n").encode()
            f.write(block)
            written += len(block)
            epoch += 1
    return written


BASELINE = """
import json, resource
import gputui.logs
print(json.dumps({"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def child(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def best(code: str, path: Path, repeat: int) -> dict:
    runs = [child(code, str(path)) for _ in range(repeat)]
    return min(runs, key=lambda r: r["seconds"])


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


def follow_rate(bars: Path, rate_mb_s: float, seconds: float, poll: float) -> dict:
    """A writer appends the bar log at ``rate_mb_s`` for ``seconds``; a :class:`LogFollower` polls every
    ``poll`` s. Returns the follower's largest lag (MB behind) and how long after the writer stopped it
    had read everything (``catch_up_s``): a follower that keeps up has a small lag and ~0 s."""
    from gputui.logs.follower import LogFollower

    with open(bars, "rb") as f:
        data = f.read(int(rate_mb_s * seconds * 1e6))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "slurm-2.out"
        path.write_bytes(b"")
        follower = LogFollower(path)
        stopped: list[float] = []

        def writer() -> None:
            piece = int(rate_mb_s * 1e6 / 20)
            start = time.monotonic()
            with open(path, "ab", buffering=0) as f:
                for i, at in enumerate(range(0, len(data), piece)):
                    f.write(data[at : at + piece])
                    time.sleep(max(0.0, start + (i + 1) / 20 - time.monotonic()))
            stopped.append(time.monotonic())

        thread = threading.Thread(target=writer)
        thread.start()
        lag = 0
        while thread.is_alive() or follower.file.offset < len(data):
            follower.poll()
            lag = max(lag, os.path.getsize(path) - follower.file.offset)
            time.sleep(poll)
        thread.join()
        done = time.monotonic()
    return {"max_lag_mb": round(lag / 1e6, 1), "catch_up_s": round(done - stopped[0], 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=64)
    ap.add_argument("--path", default="/tmp/gputui_bench_mixed.log")
    ap.add_argument("--poll", type=float, default=0.05, help="follower poll interval (s)")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each timing; the best is kept")
    ap.add_argument("--keep", action="store_true", help="keep the built logs")
    ns = ap.parse_args()
    path = Path(ns.path)
    small = path.with_name(path.stem + "_eighth.log")
    one = path.with_name(path.stem + "_one_copy.log")
    size, lines = build(path, int(ns.size_mb * 1024 * 1024))
    small_size, _ = build(small, size // 8)
    one.write_bytes(corpus())
    try:
        floor(path, False)  # warm the page cache
        floor_b, _ = min(floor(path, False) for _ in range(ns.repeat))
        floor_t, text_lines = min(floor(path, True) for _ in range(ns.repeat))
        frames = best(NORMALISE, path, ns.repeat)
        result = best(CHILD, path, ns.repeat)
        thin = best(THIN, path, ns.repeat)
        first = child(FIRST_SCREEN, str(path))
        eighth = child(CHILD, str(small))
        fresh = best(CHILD, one, max(3, ns.repeat))
        base = child(BASELINE)["peak_rss_mb"]
        # after the memory figures: a child's peak RSS starts at its parent's (Linux keeps it across
        # fork and exec), and the bar log's follow test holds hundreds of MB here
        bars = path.with_name(path.stem + "_bars.log")
        bars_size = bar_log(bars, size)
        try:
            bars_floor, _ = min(floor(bars, True) for _ in range(ns.repeat))
            bars_thin = best(THIN, bars, ns.repeat)
            plain_part = bars.with_name(bars.stem + "_head.log")  # the plain parse is slow: at most 128 MB
            with open(bars, "rb") as src:
                plain_part.write_bytes(src.read(128 << 20))
            bars_plain = best(CHILD, plain_part, 1)
            bars_plain["seconds"] *= bars_size / plain_part.stat().st_size
            plain_part.unlink()
            bars_first = child(FIRST_SCREEN, str(bars))
            keep_up = follow_rate(bars, 50, 6, ns.poll)
        finally:
            bars.unlink(missing_ok=True)
        lat = sorted(follow_latency(ns.poll))
    finally:
        if not ns.keep:
            for p in (path, small, one):
                p.unlink(missing_ok=True)
    mb = size / 1e6
    parse_s = result["seconds"]
    report = {
        "file_mb": round(mb, 1),
        "lines": lines,
        "text_mode_lines": text_lines,
        "floor_binary_mb_s": round(mb / floor_b, 1),
        "floor_binary_lines_s": round(lines / floor_b),
        "floor_text_mb_s": round(mb / floor_t, 1),
        "floor_text_lines_s": round(text_lines / floor_t),
        "normalise_only_mb_s": round(mb / frames["seconds"], 1),
        "frames": frames["frames"],
        "parse_mb_s": round(mb / parse_s, 1),
        "parse_lines_s": round(lines / parse_s),
        "parse_frames_s": round(frames["frames"] / parse_s),
        "ratio_to_binary_floor": round(floor_b / parse_s, 4),
        "ratio_to_text_floor": round(floor_t / parse_s, 4),
        "catch_up_mb_s": round(mb / thin["seconds"], 1),
        "catch_up_ratio_to_text_floor": round(floor_t / thin["seconds"], 4),
        "catch_up_records": thin["records"],
        "catch_up_peak_rss_mb": round(thin["peak_rss_mb"], 1),
        "first_screen_s": round(first["seconds"], 3),
        "bar_log_mb": round(bars_size / 1e6, 1),
        "bar_log_floor_text_mb_s": round(bars_size / 1e6 / bars_floor, 1),
        "bar_log_parse_mb_s": round(bars_size / 1e6 / bars_plain["seconds"], 1),
        "bar_log_catch_up_mb_s": round(bars_size / 1e6 / bars_thin["seconds"], 1),
        "bar_log_catch_up_ratio_to_text_floor": round(bars_floor / bars_thin["seconds"], 4),
        "bar_log_first_screen_s": round(bars_first["seconds"], 3),
        "bar_log_first_screen_epoch": bars_first["epoch"],
        "follow_50_mb_s_max_lag_mb": keep_up["max_lag_mb"],
        "follow_50_mb_s_catch_up_after_s": keep_up["catch_up_s"],
        "one_copy_fresh_parser_mb_s": round(len(corpus()) / 1e6 / fresh["seconds"], 1),
        "records": result["records"],
        "peak_rss_mb": round(result["peak_rss_mb"], 1),
        "peak_rss_eighth_mb": round(eighth["peak_rss_mb"], 1),
        "eighth_file_mb": round(small_size / 1e6, 1),
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
