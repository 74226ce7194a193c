#!/usr/bin/env python3
"""Slurm benchmarks on the local test cluster (``ci/slurm-cluster up``; root, Debian 12).

1. ``gputui attach J`` → first record from every node: the CLI is started as a user would start it
   (``python -m gputui attach J --json --probe-backend sim``), the clock stops when a GPU record from each
   of the job's nodes has been read from its stdout. Also measured in-process (the Attacher alone, no
   interpreter start-up of the attaching side). Goal: under 2 s.
2. Job-list refresh cost: wall time of :func:`gputui.slurm.jobs.list_jobs` and the number of Slurm
   commands it runs (must be exactly one ``squeue`` per refresh, never one per job) with J jobs queued.

Usage: python benchmarks/attach_latency.py [--runs 5] [--jobs 20]
"""

from __future__ import annotations

import argparse
import os
import selectors
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from gputui.slurm import commands, jobs, scontrol  # noqa: E402
from gputui.slurm.attach import Attacher, AttachOptions  # noqa: E402


def cluster_env() -> dict[str, str]:
    res = subprocess.run(
        [sys.executable, str(REPO / "ci" / "slurm-cluster"), "up"], capture_output=True, text=True
    )
    if res.returncode != 0:
        sys.exit(f"local Slurm cluster unavailable: {res.stderr.strip().splitlines()[-1:]}")
    conf = res.stdout.strip().splitlines()[-1].split("=", 1)[1].strip("'\"")
    return {**commands.slurm_env(), "SLURM_CONF": conf}


def submit(env: dict[str, str], nodes: int, command: str = "sleep 300") -> str:
    out = subprocess.run(
        ["sbatch", "--parsable", "-N", str(nodes), "-J", "bench", "-o", "/dev/null", "--wrap", command],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    job = out.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 30
    while scontrol.job_detail(job, env=env).state != "RUNNING":
        if time.monotonic() > deadline:
            sys.exit(f"job {job} did not start")
        time.sleep(0.1)
    return job


def cli_attach_latency(job: str, nodes: set[str], env: dict[str, str]) -> float:
    argv = [sys.executable, "-m", "gputui", "attach", job, "--json", "--probe-backend", "sim", "--no-logs"]
    start = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    seen: set[str] = set()
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    elapsed = float("nan")
    try:
        while time.monotonic() - start < 30:
            if not sel.select(timeout=1):
                continue
            line = proc.stdout.readline()
            if not line:
                break
            if '"kind":"gpu"' in line:
                seen.update(h for h in nodes if f'"host":"{h}"' in line)
            if seen == nodes:
                elapsed = time.monotonic() - start
                break
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)
        proc.stdout.close()
    return elapsed


def lib_attach_latency(job: str, nodes: set[str], env: dict[str, str]) -> float:
    seen: set[str] = set()
    done = threading.Event()
    start = time.monotonic()
    stamp: list[float] = []

    def emit(record) -> None:
        if record.kind == "gpu":
            seen.add(record["host"])
            if seen == nodes and not stamp:
                stamp.append(time.monotonic() - start)
                done.set()

    attacher = Attacher(job, emit, AttachOptions(backend="sim", follow_logs=False), env=env)
    thread = threading.Thread(target=attacher.run, daemon=True)
    thread.start()
    done.wait(30)
    attacher.stop.set()
    thread.join(20)
    return stamp[0] if stamp else float("nan")


def refresh_cost(env: dict[str, str], refreshes: int) -> tuple[float, int, int]:
    calls: list[list[str]] = []
    original = commands.subprocess.run

    def counting(argv, *a, **k):
        calls.append(list(argv))
        return original(argv, *a, **k)

    commands.subprocess.run = counting
    try:
        times, listed = [], 0
        for _ in range(refreshes):
            t0 = time.perf_counter()
            listed = len(jobs.list_jobs(env=env))
            times.append(time.perf_counter() - t0)
    finally:
        commands.subprocess.run = original
    return statistics.median(times), len(calls) // refreshes, listed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=20, help="extra queued jobs for the refresh benchmark")
    parser.add_argument("--refreshes", type=int, default=20)
    args = parser.parse_args()
    env = cluster_env()
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    submitted = []
    try:
        job = submit(env, 2)
        submitted.append(job)
        nodes = set(scontrol.job_detail(job, env=env).nodes)
        cli = [cli_attach_latency(job, nodes, env) for _ in range(args.runs)]
        lib = [lib_attach_latency(job, nodes, env) for _ in range(args.runs)]
        print(
            f"attach → first record from all {len(nodes)} nodes, CLI (python -m gputui attach): "
            f"median {statistics.median(cli):.3f} s, min {min(cli):.3f}, max {max(cli):.3f} "
            f"({args.runs} runs)"
        )
        print(
            f"attach → first record from all {len(nodes)} nodes, in-process Attacher: "
            f"median {statistics.median(lib):.3f} s, min {min(lib):.3f}, max {max(lib):.3f}"
        )
        for _ in range(args.jobs):
            out = subprocess.run(
                ["sbatch", "--parsable", "--hold", "-J", "bench-q", "-o", "/dev/null", "--wrap", "true"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            submitted.append(out.stdout.strip().split(";")[0])
        median, per_refresh, listed = refresh_cost(env, args.refreshes)
        print(
            f"job list refresh: median {median * 1000:.1f} ms for {listed} jobs, "
            f"{per_refresh} Slurm command(s) per refresh ({args.refreshes} refreshes)"
        )
    finally:
        if submitted:
            subprocess.run(["scancel", *submitted], env=env, capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
