"""What both reference trainers share: flags, batch/LR scaling, errors, the TF cluster spec.

No torch or TensorFlow here (``--help`` and flag errors answer fast).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NoReturn

from gputui.argtypes import positive_float, positive_int
from gputui.distenv import DistEnv, DistEnvError
from gputui.hostlist import HostlistError, expand_tasks_per_node
from gputui.reporter import Reporter
from gputui.trainers.data import DATASETS, DatasetError

EXIT_ERROR, EXIT_USAGE, EXIT_PEER = 1, 2, 3


class TrainerError(Exception):
    """A user-facing failure, printed as one line ``<prog>: error: ...`` (exit status ``code``)."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage block
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def build_parser(
    prog: str, models: Sequence[str], default_lr: float, description: str
) -> argparse.ArgumentParser:
    p = _Parser(prog=prog, description=description)
    p.add_argument("--model", choices=models, default=models[0])
    p.add_argument("--dataset", choices=DATASETS, default="digits", help="default digits (bundled, offline)")
    p.add_argument("--data", metavar="PATH", help="dataset file or directory (mnist, cifar10, folder)")
    p.add_argument("--image-size", type=positive_int, metavar="PX", help="resize images to PX×PX")
    p.add_argument("--synthetic-samples", type=positive_int, default=6000, metavar="N")
    p.add_argument("--epochs", type=positive_int, default=3)
    p.add_argument(
        "--batch-size", type=positive_int, default=64, help="per rank (weak scaling) or global (strong)"
    )
    p.add_argument("--lr", type=positive_float, default=default_lr, help=f"base learning rate ({default_lr})")
    p.add_argument(
        "--scale-lr",
        action="store_true",
        help="multiply the LR by global batch / --batch-size (× world size under weak scaling)",
    )
    p.add_argument(
        "--scaling",
        choices=("weak", "strong"),
        default="weak",
        help="weak: --batch-size per rank (global grows); strong: --batch-size global (split over ranks)",
    )
    p.add_argument("--max-steps", type=positive_int, metavar="N", help="stop each epoch after N steps")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--metrics-file", metavar="PATH", help="also append records as JSONL ({rank} allowed)")
    p.add_argument("--no-report", action="store_true", help="emit no gputui records (overhead baseline)")
    p.add_argument("--log-every", type=int, default=0, metavar="N", help="a loss record every N steps")
    p.add_argument(
        "--timeout",
        type=positive_float,
        default=600.0,
        metavar="S",
        help="collective timeout: a rank waiting longer than S s for a crashed or hung peer exits (600)",
    )
    p.add_argument("--checkpoint", metavar="PATH", help="rank 0 saves the model here after each epoch")
    # Test hooks: make one rank die (or hang) at a given step.
    p.add_argument("--debug-crash-rank", type=int, help=argparse.SUPPRESS)
    p.add_argument("--debug-hang-rank", type=int, help=argparse.SUPPRESS)
    p.add_argument("--debug-fault-step", type=int, default=2, help=argparse.SUPPRESS)
    return p


@dataclass(frozen=True)
class Batching:
    per_rank: int
    global_: int
    lr: float


def batching(batch_size: int, world_size: int, scaling: str, lr: float, scale_lr: bool) -> Batching:
    """Per-rank and global batch and the learning rate for ``world_size`` ranks (or replicas).

    weak: every rank keeps ``batch_size`` (global = batch_size × world); strong: the global batch stays
    ``batch_size`` and each rank takes ``batch_size // world``. ``scale_lr`` applies the linear scaling
    rule relative to a one-rank run with the same flags: lr × global / batch_size.
    """
    if scaling == "weak":
        per_rank = batch_size
    else:
        if batch_size < world_size:
            raise TrainerError(
                f"--scaling strong with --batch-size {batch_size} cannot be split over {world_size} ranks",
                EXIT_USAGE,
            )
        if batch_size % world_size:
            print(
                f"warning: --batch-size {batch_size} is not a multiple of {world_size} ranks; "
                f"using {batch_size // world_size} per rank",
                file=sys.stderr,
            )
        per_rank = batch_size // world_size
    global_batch = per_rank * world_size
    return Batching(per_rank, global_batch, lr * global_batch / batch_size if scale_lr else lr)


def tf_config(dist: DistEnv, env: Mapping[str, str] | None = None, port_offset: int = 0) -> dict:
    """A ``TF_CONFIG`` cluster spec for MultiWorkerMirroredStrategy, one worker per Slurm task.

    Built from gputui's distributed environment instead of TensorFlow's ``SlurmClusterResolver`` (which
    counts GPUs with nvidia-smi, fails on AMD/CPU nodes and rewrites CUDA_VISIBLE_DEVICES). Tasks are
    assumed to be laid out block-wise (Slurm's default ``--distribution=block``): node i holds the next
    ``tasks_per_node[i]`` ranks. Worker r listens on ``MASTER_PORT + offset + r`` (the global rank, so
    that workers sharing a host — or "nodes" that are one machine, as in the local test cluster — never
    collide; TensorFlow's gRPC server binds 0.0.0.0).
    """
    env = os.environ if env is None else env
    spec = env.get("SLURM_STEP_TASKS_PER_NODE") or env.get("SLURM_TASKS_PER_NODE")
    try:
        counts = expand_tasks_per_node(spec) if spec else []
    except HostlistError as exc:
        raise TrainerError(f"cannot read SLURM_STEP_TASKS_PER_NODE: {exc}") from None
    if len(counts) != len(dist.nodes) or sum(counts) != dist.world_size:
        per_node = max(1, dist.world_size // len(dist.nodes))
        counts = [per_node] * len(dist.nodes)
        if sum(counts) != dist.world_size:
            raise TrainerError(
                f"cannot place {dist.world_size} workers on nodes {','.join(dist.nodes)} "
                "(set SLURM_STEP_TASKS_PER_NODE or TF_CONFIG)"
            )
    base = dist.master_port + port_offset
    hosts = [node for node, n in zip(dist.nodes, counts, strict=True) for _ in range(n)]
    workers = [f"{host}:{base + r}" for r, host in enumerate(hosts)]
    return {"cluster": {"worker": workers}, "task": {"type": "worker", "index": dist.rank}}


def tf_worker(config: Mapping) -> tuple[int, int]:
    """(this worker's rank, number of workers) from a ``TF_CONFIG`` dict (chief first, then workers)."""
    cluster, task = config.get("cluster", {}), config.get("task", {})
    chiefs, workers = len(cluster.get("chief", [])), len(cluster.get("worker", []))
    index = int(task.get("index", 0))
    rank = index if task.get("type") == "chief" else chiefs + index
    return rank, max(1, chiefs + workers)


def failure_detail(exc: BaseException) -> str:
    """The first line of what a failed collective says: TF's own message, not the Python stack of the
    node it prints first (``Graph execution error: Detected at node … defined at …`` then frames), its
    op names (``{{function_node …}}``, ``[Op:…]``) left out; a line ending in ``:`` with the next one."""
    raw = str(exc).splitlines()
    if raw and raw[0].startswith("Graph execution error"):
        last = 0  # the stack's last line
        for i, line in enumerate(raw):
            if line.startswith(('  File "', "Detected at node", "<stack traces unavailable>")):
                shown = line.startswith("  File") and raw[i + 1 : i + 2] and raw[i + 1].startswith("    ")
                last = i + 1 if shown else i  # a frame's source line, where TF had it
        raw = raw[last + 1 :] or raw
    text = re.sub(r"\{\{function_node [^}]*\}\}\s*", "", "\n".join(raw))  # TF's op-name prefix and suffix
    text = re.sub(r"\s*\[Op:[^\]]*\].*", "", text).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    detail = lines[0] if lines else type(exc).__name__
    if detail.endswith(":") and len(lines) > 1:  # TF: "... unhealthy (stopped sending heartbeats):" + tasks
        detail += " " + lines[1]
    return detail


def peer_lost(prog: str, rank: int, steps: int, timeout: float, exc: BaseException, peers: str = "ranks"):
    """One line for a rank whose collective failed because a peer crashed, hung or timed out; exit 3.

    ``os._exit``: neither a gloo/NCCL process group nor TensorFlow's collective executor can be torn
    down cleanly without the lost peer (a normal exit can hang in their destructors).
    """
    detail = failure_detail(exc)
    print(
        f"{prog}: error: rank {rank}: lost contact with the other {peers} after {steps} steps "
        f"(a peer crashed, hung or timed out after {timeout:g} s): {detail[:300]}",
        file=sys.stderr,
        flush=True,
    )
    sys.stdout.flush()
    os._exit(EXIT_PEER)


def leave_after_distributed(code: int = 0) -> NoReturn:
    """End a multi-rank trainer whose process group is destroyed, without interpreter finalization.

    Objects still holding gloo/NCCL work (DDP's reducer sits in reference cycles) are collected now,
    while the interpreter is whole; a communication thread that reaches for the GIL during finalization
    is stopped by CPython with ``pthread_exit`` and aborts the process ("terminate called without an
    active exception") after a finished run, failing the job. Seen once in CI on a 2x2 gloo run.
    """
    gc.collect()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def fault_hook(args: argparse.Namespace, rank: int, step: int) -> None:
    """The test hooks: exit hard (a crashed rank) or sleep forever (a hung rank) at the fault step."""
    if step != args.debug_fault_step:
        return
    if args.debug_crash_rank == rank:
        print(f"rank {rank}: simulated crash at step {step}", file=sys.stderr, flush=True)
        os._exit(17)
    if args.debug_hang_rank == rank:
        print(f"rank {rank}: simulated hang at step {step}", file=sys.stderr, flush=True)
        import time

        while True:
            time.sleep(60)


def run(prog: str, body: Callable[[], int]) -> int:
    """Run a trainer's body; turn expected failures into one line on stderr and an exit status."""
    try:
        return body()
    except TrainerError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr, flush=True)
        return exc.code
    except (DatasetError, DistEnvError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr, flush=True)
        return 130


def reporter_for(args: argparse.Namespace, env: DistEnv, rank: int) -> Reporter:
    """The metric reporter the shared options ask for (human lines on rank 0 only)."""
    return Reporter(
        job=env.job_id,
        rank=rank,
        file=args.metrics_file,
        stdout=not args.no_report,
        human=rank == 0 and not args.no_report,
    )


def dumps(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"))
