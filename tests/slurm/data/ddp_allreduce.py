"""A tiny self-contained PyTorch DDP job for the launch-pattern tests (gloo on CPU).

Reads its layout through gputui.distenv (torchrun variables first, then Slurm's), joins the process group,
all-reduces a tensor holding its rank, and prints one ``@gputui`` metric record per rank
(``allreduce_sum`` = 0 + 1 + ... + world-1 when every rank took part) with its host and layout.
"""

import os
import socket
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

from gputui import distenv
from gputui.stream.io import format_prefixed
from gputui.stream.records import metric


def main() -> int:
    env = distenv.from_environ()
    os.environ.update(env.torch_environ())
    dist.init_process_group("gloo", rank=env.rank, world_size=env.world_size, timeout=timedelta(seconds=60))
    value = torch.tensor([float(env.rank)])
    dist.all_reduce(value)
    record = metric(
        "allreduce_sum",
        float(value.item()),
        rank=env.rank,
        job=env.job_id,
        world_size=env.world_size,
        local_rank=env.local_rank,
        node_rank=env.node_rank,
        host=os.environ.get("SLURMD_NODENAME") or socket.gethostname(),
        source_layout=env.source,
        master=f"{env.master_addr}:{env.master_port}",
    )
    sys.stdout.write(format_prefixed(record) + "\n")  # one write: ranks share one srun output stream
    sys.stdout.flush()
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
