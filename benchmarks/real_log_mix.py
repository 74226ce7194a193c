"""Catch-up and full-parse throughput on a mix of real logs, as ratios to the line-reading floor.

Builds a mix of about ``--size-mb`` MB from the real logs of ``tests/logs/data/`` (the goldens): whole
files concatenated in a shuffled order, reshuffled for every pass over them (``--seed``), so the mix is
real text and no two neighbouring copies line up. Then, in one run, measures:

- the floor: ``for line in open(path, encoding="utf-8", errors="replace")`` (text mode, universal
  newlines: what any Python reader of a progress-bar log pays before looking at a line);
- catch-up: ``parse_stream(f, thin=True)`` (what replay, attach and the ``gputui parse`` table use while
  behind: :class:`~gputui.logs.parser.LogParser` in catch-up mode), every record consumed;
- full parse: ``parse_stream(f)`` (every frame, every record consumed: the parse of ``--json``);
- ``gputui parse --json`` itself (the CLI in a new process, its output to ``/dev/null``: the parse plus
  one JSON line per record);

each in a fresh child process under ``nice``, the best of ``--repeat`` runs (the machine's cores are
shared, so the best run is the one least disturbed). Both wall and CPU seconds (``time.process_time`` of
the child) are reported; the best run is chosen by CPU time, which other work on the machine disturbs
far less than wall time, and the ratios are given for both. ``--before DIR`` runs the same children with
``gputui`` imported from ``DIR`` as well (e.g. ``git archive HEAD gputui | tar -x -C DIR``), interleaved
with the current code, so before and after are measured in the same run on the same file.

Usage: ``python benchmarks/real_log_mix.py [--size-mb 200] [--quick] [--repeat 3] [--before DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "logs" / "data"

PARSE = """
import json, sys, time
from gputui.logs import parse_stream
thin = sys.argv[2] == "thin"
start, cpu = time.perf_counter(), time.process_time()
n = 0
with open(sys.argv[1], "rb") as f:
    for _ in parse_stream(f, thin=thin):
        n += 1
print(json.dumps({"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu, "records": n}))
"""

FLOOR = """
import json, sys, time
start, cpu = time.perf_counter(), time.process_time()
n = 0
for _line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    n += 1
print(json.dumps({"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu, "records": n}))
"""


def build(path: Path, size: int, seed: int) -> tuple[int, int]:
    """Write the mix; returns (bytes, number of log files in it)."""
    logs = [p.read_bytes() for p in sorted(DATA.glob("*.log"))]
    logs = [b if b.endswith(b"\n") else b + b"\n" for b in logs]
    rng = random.Random(seed)
    written = count = 0
    with open(path, "wb") as f:
        while written < size:
            order = logs[:]
            rng.shuffle(order)
            for log in order:
                f.write(log)
                written += len(log)
                count += 1
                if written >= size:
                    break
    return written, count


def child(code: str, args: list[str], pythonpath: str) -> dict:
    env = dict(os.environ, PYTHONPATH=pythonpath)
    cmd = ["nice", "-n", "5", sys.executable, "-c", code, *args]
    # run in the version's directory: ``-c`` and ``-m`` put the working directory before PYTHONPATH
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env, cwd=pythonpath)
    return json.loads(out.stdout)


def cli_json(path: Path, pythonpath: str) -> dict:
    """``gputui parse --json PATH > /dev/null`` in a new process: wall and CPU seconds (with start-up)."""
    env = dict(os.environ, PYTHONPATH=pythonpath)
    cmd = ["nice", "-n", "5", sys.executable, "-m", "gputui", "parse", "--json", str(path)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        subprocess.run(cmd, stdout=devnull, stderr=subprocess.DEVNULL, check=True, env=env, cwd=pythonpath)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"seconds": time.perf_counter() - start, "cpu": cpu, "records": None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=200)
    ap.add_argument("--quick", action="store_true", help="a 20 MB mix, for development")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each timing; the best is kept")
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--path", default="/tmp/gputui_real_log_mix.log")
    ap.add_argument("--before", help="a directory holding another gputui package, measured alongside")
    ap.add_argument("--no-cli", action="store_true", help="skip the `gputui parse --json` process")
    ap.add_argument("--keep", action="store_true", help="keep the built mix")
    ns = ap.parse_args()
    path = Path(ns.path)
    size, files = build(path, int((20 if ns.quick else ns.size_mb) * 1e6), ns.seed)
    versions = {"after": str(ROOT)}
    if ns.before:
        versions = {"before": str(Path(ns.before).resolve()), **versions}
    best: dict[str, dict] = {}
    try:
        child(FLOOR, [str(path)], str(ROOT))  # warm the page cache
        for _ in range(ns.repeat):  # interleaved: each version sees the same disturbances
            runs = [("floor", FLOOR, "", str(ROOT))]
            for version, where in versions.items():
                runs.append((f"catch_up_{version}", PARSE, "thin", where))
                runs.append((f"full_{version}", PARSE, "full", where))
            for name, code, mode, where in runs:
                result = child(code, [str(path), mode], where)
                if name not in best or result["cpu"] < best[name]["cpu"]:
                    best[name] = result
            if not ns.no_cli:
                for version, where in versions.items():
                    result = cli_json(path, where)
                    name = f"parse_json_cli_{version}"
                    if name not in best or result["cpu"] < best[name]["cpu"]:
                        best[name] = result
    finally:
        if not ns.keep:
            path.unlink(missing_ok=True)
    mb = size / 1e6
    floor_s, floor_cpu = best["floor"]["seconds"], best["floor"]["cpu"]
    report: dict = {
        "mix_mb": round(mb, 1),
        "log_files_in_mix": files,
        "text_mode_lines": best["floor"]["records"],
        "repeat": ns.repeat,
        "floor_text_mb_s": round(mb / floor_s, 1),
        "floor_text_cpu_mb_s": round(mb / floor_cpu, 1),
    }
    for name, result in best.items():
        if name == "floor":
            continue
        report[f"{name}_mb_s"] = round(mb / result["seconds"], 2)
        report[f"{name}_ratio_to_floor"] = round(floor_s / result["seconds"], 4)
        report[f"{name}_cpu_mb_s"] = round(mb / result["cpu"], 2)
        report[f"{name}_cpu_ratio_to_floor"] = round(floor_cpu / result["cpu"], 4)
        if result["records"] is not None:
            report[f"{name}_records"] = result["records"]
    report["python"] = sys.version.split()[0]
    report["cpus"] = os.cpu_count()
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
