"""``gputui report`` and ``gputui scale --from`` on real PyTorch DDP runs (CPU, gloo) at 1 and 2 ranks on
the local Slurm cluster: the numbers come out of the trainer's own records in its output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gputui.cli import main

pytestmark = [pytest.mark.slurm]


def _train(env: dict[str, str], ranks: int, folder: Path) -> str:
    argv = ["srun", "-N", "1", "--ntasks-per-node", str(ranks), "-t", "5", "--kill-on-bad-exit=1"]
    argv += [sys.executable, "-m", "gputui.trainers.torch_ddp", "--epochs", "3", "--batch-size", "32"]
    argv += ["--scaling", "strong", "--timeout", "60"]
    full = {**os.environ, **env, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    res = subprocess.run(argv, env=full, capture_output=True, text=True, timeout=300, cwd=folder)
    assert res.returncode == 0, res.stderr[-3000:]
    path = folder / f"slurm-run{ranks}.out"
    path.write_text(res.stdout)
    return str(path)


def test_scale_from_real_runs_at_one_and_two_ranks(slurm_cluster, tmp_path: Path, capsys) -> None:
    runs = [_train(slurm_cluster.env, ranks, tmp_path) for ranks in (2, 1)]
    assert main(["report", "--json", runs[0]]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["gpus"] == 2 and report["world_size_source"] == "train_started"
    assert report["epochs"] == 3 and report["first_epoch_left_out"]
    assert report["outcome"] == "completed"  # the trainer's train_finished record
    assert report["final"]["loss"] < report["epoch_rows"][0]["metrics"]["loss"]
    assert main(["scale", "--json", "--from", *runs]) == 0
    points = json.loads(capsys.readouterr().out)["points"]
    assert [p["gpus"] for p in points] == [1, 2]
    one, two = points
    assert one["speedup"] == 1.0 and one["efficiency"] == 1.0
    assert two["speedup"] == pytest.approx(one["epoch_time_s"] / two["epoch_time_s"])
    assert two["efficiency"] == pytest.approx(two["speedup"] / 2)
    assert one["throughput_unit"] == "images/s" and one["throughput"] > 0
    assert one["accuracy_name"] == "val_accuracy" and 0 <= two["accuracy"] <= 1
