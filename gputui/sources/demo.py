"""The demo run: the PyTorch DDP reference trainer with a few ranks on CPU (gloo, the bundled digits
dataset, ResNet-18). ``gputui demo`` and the jobs screen's demo key both launch this one spec."""

from __future__ import annotations

import sys

from gputui.slurm.batch_script import LaunchSpec


def demo_spec(ranks: int = 2, epochs: int = 4) -> LaunchSpec:
    """The demo's launch: ``ranks`` local processes training for ``epochs`` epochs, logging every 2 steps."""
    cmd = [sys.executable, "-m", "gputui.trainers.torch_ddp", "--model", "resnet18", "--epochs", str(epochs)]
    cmd += ["--log-every", "2", "--device", "cpu", "--backend", "gloo"]
    return LaunchSpec(cmd=cmd, nodes=1, ntasks_per_node=ranks, job_name=f"resnet18-ddp-{ranks}ranks")
