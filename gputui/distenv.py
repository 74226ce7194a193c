"""The distributed-environment contract shared by the launcher and the trainers.

One place decides a process's rank, local rank, world size, node list and rendezvous address:

1. torchrun / ``torch.distributed`` variables (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
   ``MASTER_ADDR``, ``MASTER_PORT``) when ``RANK`` and ``WORLD_SIZE`` are set — torchrun sets them
   per process even inside a Slurm step;
2. otherwise Slurm step variables (``SLURM_PROCID``, ``SLURM_NTASKS``, ``SLURM_LOCALID``,
   ``SLURM_NODEID``, ``SLURM_STEP_NODELIST``/``SLURM_JOB_NODELIST``, ``SLURM_JOB_ID``);
3. otherwise a single process on this host.

``MASTER_ADDR`` defaults to the first host of the node list and ``MASTER_PORT`` to
:func:`master_port_for_job` of the job id, unless the environment already sets them.
"""

from __future__ import annotations

import os
import re
import socket
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

from gputui.hostlist import HostlistError, expand_hostlist, expand_tasks_per_node

PORT_LOW, PORT_HIGH = 10000, 32767  # below Linux's ephemeral range (32768-60999)
DEFAULT_PORT = 29500  # torch's default, used when there is no job id


class DistEnvError(ValueError):
    """The environment describes an impossible layout (rank ≥ world size, bad number, ...)."""


def master_port_for_job(job_id: str | int | None) -> int:
    """The rendezvous port for a job: a stable number in 10000–32767 derived from the job id.

    Numeric ids (``4242``, array ``4242_7`` and het ``4242+1`` use their leading number) map by modulo,
    so consecutive jobs on a shared node get different ports; other ids go through CRC32.
    """
    if job_id is None or str(job_id).strip() == "":
        return DEFAULT_PORT
    text = str(job_id).strip()
    match = re.match(r"\d+", text)
    number = int(match.group()) if match else zlib.crc32(text.encode())
    return PORT_LOW + number % (PORT_HIGH - PORT_LOW + 1)


@dataclass(frozen=True, slots=True)
class DistEnv:
    """Where this process sits in a distributed run."""

    rank: int
    local_rank: int
    world_size: int
    local_world_size: int
    node_rank: int
    nodes: tuple[str, ...]
    master_addr: str
    master_port: int
    job_id: str | None
    source: str  # "torchrun", "slurm", "single" (read from the environment) or "local" (gputui run --local)

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def torch_environ(self) -> dict[str, str]:
        """The variables ``torch.distributed.init_process_group(init_method="env://")`` reads."""
        return {
            "RANK": str(self.rank),
            "LOCAL_RANK": str(self.local_rank),
            "WORLD_SIZE": str(self.world_size),
            "LOCAL_WORLD_SIZE": str(self.local_world_size),
            "GROUP_RANK": str(self.node_rank),
            "MASTER_ADDR": self.master_addr,
            "MASTER_PORT": str(self.master_port),
        }


def _int(env: Mapping[str, str], name: str, default: int | None = None) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        if default is None:
            raise DistEnvError(f"{name} is not set")
        return default
    try:
        return int(raw)
    except ValueError:
        raise DistEnvError(f"{name}={raw!r} is not a whole number") from None


def _slurm_nodes(env: Mapping[str, str]) -> tuple[str, ...]:
    hostlist = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    if not hostlist:
        return (socket.gethostname(),)
    try:
        return tuple(expand_hostlist(hostlist))
    except HostlistError as exc:
        raise DistEnvError(str(exc)) from None


def _slurm_local_world_size(env: Mapping[str, str], node_rank: int, world_size: int, n_nodes: int) -> int:
    spec = env.get("SLURM_STEP_TASKS_PER_NODE") or env.get("SLURM_TASKS_PER_NODE")
    if spec:
        try:
            counts = expand_tasks_per_node(spec)
        except HostlistError as exc:
            raise DistEnvError(str(exc)) from None
        if 0 <= node_rank < len(counts):
            return counts[node_rank]
    return max(1, world_size // max(1, n_nodes))


def from_environ(env: Mapping[str, str] | None = None) -> DistEnv:
    """Read the distributed layout of this process from ``env`` (default ``os.environ``)."""
    env = os.environ if env is None else env
    job_id = env.get("SLURM_JOB_ID") or env.get("TORCHELASTIC_RUN_ID") or None
    if env.get("RANK") and env.get("WORLD_SIZE"):
        source = "torchrun"
        rank, world = _int(env, "RANK"), _int(env, "WORLD_SIZE")
        local_rank = _int(env, "LOCAL_RANK", 0)
        per_node_default = 1 if world == 1 else _int(env, "SLURM_NTASKS_PER_NODE", 1)
        local_world = _int(env, "LOCAL_WORLD_SIZE", per_node_default)
        node_rank = _int(env, "GROUP_RANK", _int(env, "SLURM_NODEID", 0))
        nodes = _slurm_nodes(env) if "SLURM_JOB_ID" in env else (env.get("MASTER_ADDR") or "127.0.0.1",)
    elif env.get("SLURM_PROCID") is not None and env.get("SLURM_NTASKS") is not None:
        source = "slurm"
        rank, world = _int(env, "SLURM_PROCID"), _int(env, "SLURM_NTASKS")
        local_rank, node_rank = _int(env, "SLURM_LOCALID", 0), _int(env, "SLURM_NODEID", 0)
        nodes = _slurm_nodes(env)
        local_world = _slurm_local_world_size(env, node_rank, world, len(nodes))
    else:
        source, rank, world, local_rank, local_world, node_rank = "single", 0, 1, 0, 1, 0
        nodes = ("127.0.0.1",)
    if world < 1 or not 0 <= rank < world:
        raise DistEnvError(f"rank {rank} is outside world size {world} ({source} variables)")
    if not 0 <= local_rank < max(local_world, 1) and source != "torchrun":
        raise DistEnvError(f"local rank {local_rank} is outside {local_world} tasks on this node")
    master_addr = env.get("MASTER_ADDR") or nodes[0]
    master_port = _int(env, "MASTER_PORT", master_port_for_job(job_id))
    if not 1 <= master_port <= 65535:
        raise DistEnvError(f"MASTER_PORT={master_port} is not a TCP port")
    return DistEnv(
        rank, local_rank, world, local_world, node_rank, nodes, master_addr, master_port, job_id, source
    )
