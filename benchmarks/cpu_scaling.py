"""CPU throughput and scaling of the PyTorch DDP trainer, 1 → 2 → 4 ranks (gloo).

Runs ``gputui.trainers.torch_ddp`` on the local Slurm cluster (``srun``; needs SLURM_CONF, see
``ci/slurm-cluster``) or, with ``--local``, as N local processes with torchrun-style variables.
Weak scaling by default (per-rank batch fixed). Prints the table the courses ask for: epoch time,
images/s, speedup and efficiency, with the first epoch excluded.

    python benchmarks/cpu_scaling.py [--local] [--ranks 1 2 4] [--epochs 4] [--scaling weak]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys

PREFIX = "@gputui "


def trainer_argv(args: argparse.Namespace) -> list[str]:
    return [
        sys.executable,
        "-m",
        "gputui.trainers.torch_ddp",
        "--dataset",
        "synthetic",
        "--image-size",
        "28",
        "--synthetic-samples",
        str(args.samples),
        "--model",
        args.model,
        "--epochs",
        str(args.epochs),
        "--batch-size",
        str(args.batch_size),
        "--scaling",
        args.scaling,
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(n: int, args: argparse.Namespace) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    if not args.local:
        nodes = 1 if n == 1 else 2
        srun = ["srun", "-N", str(nodes), "--ntasks-per-node", str(n // nodes), "-t", "10", "-K"]
        res = subprocess.run(srun + trainer_argv(args), env=env, capture_output=True, text=True, timeout=600)
        if res.returncode:
            sys.exit(f"srun with {n} ranks failed ({res.returncode}): {res.stderr[-2000:]}")
        return res.stdout
    port, procs = free_port(), []
    for rank in range(n):
        penv = {**env, "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(n)}
        penv.update({"LOCAL_WORLD_SIZE": str(n), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
        procs.append(subprocess.Popen(trainer_argv(args), env=penv, stdout=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=600)[0] for p in procs]
    if any(p.returncode for p in procs):
        sys.exit(f"{n} local ranks failed")
    return "".join(outs)


def summarise(stdout: str) -> tuple[float, float]:
    """(median epoch time, median global images/s) over epochs ≥ 2, from rank 0's records."""
    times, rates = {}, {}
    for line in stdout.splitlines():
        if not line.startswith(PREFIX):
            continue
        rec = json.loads(line[len(PREFIX) :])
        if rec.get("rank") != 0 or rec.get("epoch", 1) < 2:
            continue
        if rec["name"] == "epoch_time_s":
            times[rec["epoch"]] = rec["value"]
        elif rec["name"] == "global_images_per_s":
            rates[rec["epoch"]] = rec["value"]
    return statistics.median(times.values()), statistics.median(rates.values())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--local", action="store_true", help="local processes instead of srun")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--samples", type=int, default=6000)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--model", default="cnn")
    p.add_argument("--scaling", choices=("weak", "strong"), default="weak")
    args = p.parse_args()
    rows = []
    for n in args.ranks:
        epoch_s, ips = summarise(run_ranks(n, args))
        rows.append((n, epoch_s, ips))
    base = rows[0][2] / rows[0][0]
    launcher = "local processes" if args.local else "srun on the local Slurm cluster"
    print(
        f"torch_ddp {args.model}, synthetic 3×28×28 × {args.samples}, batch {args.batch_size} "
        f"({args.scaling}), gloo, OMP_NUM_THREADS=1, {launcher}, {os.cpu_count()} CPU cores; "
        f"medians of epochs 2..{args.epochs}"
    )
    print()
    print("| ranks | epoch time (s) | images/s (global) | speedup | efficiency |")
    print("|---:|---:|---:|---:|---:|")
    for n, epoch_s, ips in rows:
        speedup = ips / (base * rows[0][0])
        print(f"| {n} | {epoch_s:.2f} | {ips:,.0f} | {speedup:.2f}× | {speedup / n * rows[0][0]:.0%} |")


if __name__ == "__main__":
    main()
