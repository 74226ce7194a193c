"""Real PyTorch DDP training on CPU with gloo on the local Slurm cluster (2 nodes × 2 tasks)."""

from __future__ import annotations

import math
import time

import pytest
from trainer_helpers import TORCH_DDP, records_from, run, values

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def test_ddp_2x2_trains_synchronised_and_reports(cluster_env, tmp_path) -> None:
    ckpt = tmp_path / "model.pt"
    argv = ["srun", "-N", "2", "--ntasks-per-node", "2", "-t", "5", "--kill-on-bad-exit=1", *TORCH_DDP]
    argv += ["--epochs", "4", "--batch-size", "8", "--timeout", "60", "--checkpoint", str(ckpt)]
    res = run(argv, cluster_env, timeout=240)
    assert res.returncode == 0, res.stderr[-3000:]
    records = records_from(res.stdout)
    assert {r["rank"] for r in records} == {0, 1, 2, 3}
    for rank in range(4):
        assert len(values(records, "loss", rank)) == 4
        assert len(values(records, "images_per_s", rank)) == 4
        assert len(values(records, "epoch_time_s", rank)) == 4
        assert len(values(records, "step_time_s", rank)) == 4
        assert values(records, "batch_size", rank) == [8.0]  # weak: --batch-size per rank
    assert values(records, "global_batch_size", 0) == [32.0]
    losses = values(records, "loss", 0)
    assert losses[-1] < 0.5 and losses[-1] < losses[0]
    assert len(values(records, "global_images_per_s")) == 4  # rank 0 only
    assert len(values(records, "val_accuracy")) == 4 and {
        r["rank"] for r in records if r["name"] == "val_loss"
    } == {0}
    # Gradients really synchronised: bit-identical parameters on every rank after training.
    assert len(set(values(records, "param_crc32"))) == 1 and len(values(records, "param_crc32")) == 4
    assert len(set(values(records, "param_checksum"))) == 1
    assert ckpt.is_file()  # written by rank 0
    assert len([line for line in res.stdout.splitlines() if line.startswith("epoch ")]) == 4  # rank 0 only


def test_weak_vs_strong_scaling_on_the_same_world_size(cluster_env) -> None:
    """2 ranks, the same flags but --scaling: the records differ exactly as docs/trainers.md says.

    weak: --batch-size per rank, global = 2 × it, --scale-lr doubles the LR, half the steps of a
    one-process epoch; strong: --batch-size global, 1/2 per rank, LR unchanged, the one-process steps.
    """
    base, world, lr = 32, 2, 0.05  # lr: the trainer's default
    per_rank_images = 1500 // world  # digits: 1500 training images, split by DistributedSampler
    got = {}
    for scaling in ("weak", "strong"):
        argv = ["srun", "-N", "1", "--ntasks-per-node", str(world), "-t", "5", "--kill-on-bad-exit=1"]
        argv += [*TORCH_DDP, "--epochs", "1", "--batch-size", str(base), "--scaling", scaling, "--scale-lr"]
        res = run(argv, cluster_env, timeout=180)
        assert res.returncode == 0, res.stderr[-3000:]
        records = records_from(res.stdout)
        got[scaling] = {
            rank: {
                "per_rank": values(records, "batch_size", rank),
                "global": values(records, "global_batch_size", rank),
                "lr": values(records, "learning_rate", rank),
                "steps": [r["step"] for r in records if r["name"] == "epoch_time_s" and r["rank"] == rank],
            }
            for rank in range(world)
        }
    one_process_steps = math.ceil(1500 / base)
    for rank in range(world):
        weak, strong = got["weak"][rank], got["strong"][rank]
        assert weak["per_rank"] == [base] and weak["global"] == [world * base]
        assert strong["per_rank"] == [base // world] and strong["global"] == [base]
        assert weak["lr"] == [pytest.approx(lr * world)] and strong["lr"] == [pytest.approx(lr)]
        assert weak["steps"] == [math.ceil(per_rank_images / base)]  # 24: ~half a one-process epoch
        assert strong["steps"] == [math.ceil(per_rank_images / (base // world))] == [one_process_steps]


def test_a_crashing_rank_makes_the_others_exit_with_a_clear_message(cluster_env) -> None:
    argv = ["srun", "-N", "2", "--ntasks-per-node", "2", "-t", "5", *TORCH_DDP]
    argv += ["--epochs", "2", "--batch-size", "8", "--timeout", "20", "--debug-crash-rank", "1"]
    start = time.monotonic()
    res = run(argv, cluster_env, timeout=120)
    elapsed = time.monotonic() - start
    assert res.returncode != 0
    assert elapsed < 90
    assert "rank 1: simulated crash" in res.stderr
    for rank in (0, 2, 3):
        assert f"rank {rank}: lost contact with the other ranks" in res.stderr, res.stderr[-3000:]
    assert "Traceback" not in res.stderr


def test_a_hung_rank_makes_the_others_time_out(cluster_env) -> None:
    argv = ["srun", "-N", "1", "--ntasks-per-node", "2", "-t", "5", "--kill-on-bad-exit=1", *TORCH_DDP]
    argv += ["--epochs", "2", "--batch-size", "8", "--timeout", "5", "--debug-hang-rank", "1"]
    res = run(argv, cluster_env, timeout=120)
    assert res.returncode != 0
    assert "rank 0: lost contact with the other ranks" in res.stderr and "Timed out" in res.stderr
    assert "Traceback" not in res.stderr


def test_validation_tracks_training_from_the_first_epoch() -> None:
    """BatchNorm's running statistics are recomputed before evaluating (issue 25): the demo's model
    printed val_loss 159 and val_accuracy 0.10 after an epoch at training accuracy 0.75."""
    argv = [*TORCH_DDP, "--model", "resnet18", "--epochs", "2", "--device", "cpu", "--backend", "gloo"]
    res = run(argv, timeout=240)
    assert res.returncode == 0, res.stderr[-2000:]
    metrics = records_from(res.stdout)
    train_acc, val_acc = values(metrics, "accuracy"), values(metrics, "val_accuracy")
    val_loss = values(metrics, "val_loss")
    assert len(val_acc) == 2 and len(train_acc) >= 2
    assert val_acc[0] > 0.5 and val_acc[-1] > 0.7, (train_acc, val_acc)
    assert all(v < 3.0 for v in val_loss), val_loss
