"""``gputui run --local``: the embedded launcher for a machine without Slurm.

Starts nodes × ranks-per-node local processes of the command (for the ``torchrun`` pattern too: each process
gets exactly what torchrun would give its workers; ``per-node`` starts one process per simulated node), each
with the same environment contract as a Slurm job, read back by :mod:`gputui.distenv`:

* torchrun style: ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``,
  ``MASTER_ADDR=127.0.0.1``, ``MASTER_PORT`` = a free TCP port;
* Slurm style: ``SLURM_PROCID``, ``SLURM_LOCALID``, ``SLURM_NODEID``, ``SLURM_NTASKS``, ``SLURM_NNODES``,
  ``SLURM_NTASKS_PER_NODE`` (inherited ``SLURM_*`` job variables are removed first; no ``SLURM_JOB_ID`` is
  invented);
* ``PYTHONUNBUFFERED=1`` and ``GPUTUI_LOCAL_RUN=<run id>``.

Each rank's stdout and stderr go to ``<state dir>/local/<run id>/rank-<N>.out`` (state dir: see
:func:`gputui.slurm.batch_script.state_dir`), like a job's per-rank output files.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from gputui.distenv import DistEnv
from gputui.hangup import OrderlyStop
from gputui.slurm.batch_script import LaunchSpec, state_dir, validate
from gputui.slurm.commands import slurm_env


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def local_dir() -> Path:
    return state_dir() / "local"


def rank_environ(
    spec: LaunchSpec, rank: int, port: int, run_id: str, base: dict[str, str] | None = None
) -> dict[str, str]:
    """The environment of local rank ``rank``."""
    per_node = spec.ranks_per_node
    node, local = divmod(rank, per_node)
    env = slurm_env(base)
    env.pop("SLURM_TIME_FORMAT", None)
    loopback = "127.0.0.1"
    layout = DistEnv(rank, local, spec.world_size, per_node, node, (loopback,), loopback, port, None, "local")
    env.update(layout.torch_environ())
    env.update(
        {
            "SLURM_PROCID": str(rank),
            "SLURM_LOCALID": str(local),
            "SLURM_NODEID": str(node),
            "SLURM_NTASKS": str(spec.world_size),
            "SLURM_NNODES": str(spec.nodes),
            "SLURM_NTASKS_PER_NODE": str(per_node),
            "PYTHONUNBUFFERED": "1",
            "GPUTUI_LOCAL_RUN": run_id,
        }
    )
    return env


@dataclass
class LocalRun:
    run_id: str
    folder: Path
    port: int
    procs: list[subprocess.Popen] = field(default_factory=list)
    outputs: list[Path] = field(default_factory=list)

    def poll(self) -> list[int | None]:
        return [p.poll() for p in self.procs]

    def wait(self, timeout: float | None = None, grace_s: float = 10.0) -> list[int]:
        """Wait for every rank. When one fails, the others get ``grace_s`` seconds, then are terminated;
        SIGTERM or SIGHUP (the terminal closed) to gputui terminate them at once (they are gputui's own)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        failed_at: float | None = None
        ended = threading.Event()
        with OrderlyStop(lambda _signum: ended.set()):
            while not ended.is_set():
                codes = self.poll()
                if all(c is not None for c in codes):
                    return [int(c) for c in codes]  # type: ignore[arg-type]
                now = time.monotonic()
                if failed_at is None and any(c not in (None, 0) for c in codes):
                    failed_at = now
                if (failed_at is not None and now - failed_at > grace_s) or (
                    deadline is not None and now > deadline
                ):
                    break
                ended.wait(0.05)
            self.terminate()
            return [int(p.wait()) for p in self.procs]

    def terminate(self, grace_s: float = 5.0) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        end = time.monotonic() + grace_s
        for proc in self.procs:
            try:
                proc.wait(max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def launch_local(
    spec: LaunchSpec, *, base_env: dict[str, str] | None = None, folder: Path | None = None
) -> LocalRun:
    """Start every rank of ``spec`` locally; return at once (see :meth:`LocalRun.wait`)."""
    validate(spec)
    run_id = f"{spec.name}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    folder = folder or local_dir() / run_id
    folder.mkdir(parents=True, exist_ok=True)
    run = LocalRun(run_id=run_id, folder=folder, port=free_port())
    for rank in range(spec.world_size):
        out = folder / f"rank-{rank}.out"
        with open(out, "wb") as sink:
            proc = subprocess.Popen(
                list(spec.cmd),
                env=rank_environ(spec, rank, run.port, run_id, base_env),
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        run.procs.append(proc)
        run.outputs.append(out)
    return run
