"""Real TensorFlow training on CPU: MirroredStrategy over 2 logical CPUs, MWMS over 2 Slurm tasks."""

from __future__ import annotations

import pytest
from ci_helpers import require_module
from trainer_helpers import TF_KERAS, records_from, run, values

require_module("tensorflow", "pip install tensorflow-cpu==2.21.*")

pytestmark = pytest.mark.slow


def test_mirrored_strategy_on_two_logical_cpus_trains_with_fit() -> None:
    argv = [*TF_KERAS, "--strategy", "mirrored", "--cpu-devices", "2", "--epochs", "3", "--batch-size", "16"]
    res = run(argv, timeout=180)
    assert res.returncode == 0, res.stderr[-3000:]
    records = records_from(res.stdout)
    assert values(records, "replicas") == [2.0]
    assert values(records, "global_batch_size") == [32.0]  # weak: 16 per replica
    losses = values(records, "loss")
    assert len(losses) == 3 and losses[-1] < 0.6 and losses[-1] < losses[0]
    for name in (
        "accuracy",
        "val_loss",
        "epoch_time_s",
        "images_per_s",
        "global_images_per_s",
        "step_time_s",
    ):
        assert len(values(records, name)) == 3, name


@pytest.mark.slurm
def test_multiworker_over_two_slurm_tasks_agree(cluster_env) -> None:
    argv = ["srun", "-N", "2", "--ntasks-per-node", "1", "-t", "5", "--kill-on-bad-exit=1", *TF_KERAS]
    argv += ["--strategy", "multiworker", "--epochs", "3", "--batch-size", "16", "--timeout", "60"]
    res = run(argv, cluster_env, timeout=240)
    assert res.returncode == 0, res.stderr[-3000:]
    records = records_from(res.stdout)
    assert values(records, "replicas", 0) == [2.0] and values(records, "replicas", 1) == [2.0]
    loss0, loss1 = values(records, "loss", 0), values(records, "loss", 1)
    assert len(loss0) == 3 and loss0 == pytest.approx(loss1, rel=1e-6)
    assert loss0[-1] < 0.6 and loss0[-1] < loss0[0]
    assert len(values(records, "images_per_s", 1)) == 3
    assert len(values(records, "global_images_per_s", 0)) == 3
    assert values(records, "val_loss", 1) == []  # evaluation on the chief only
