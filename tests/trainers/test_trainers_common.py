"""Flag parsing, batch/LR scaling, the TF cluster spec, and one-line errors from the command line."""

from __future__ import annotations

import pytest
from trainer_helpers import TF_KERAS, TORCH_DDP, run

from gputui.distenv import from_environ
from gputui.trainers.common import TrainerError, batching, tf_config, tf_worker


def test_weak_scaling_keeps_the_per_rank_batch() -> None:
    plan = batching(64, 4, "weak", 0.1, scale_lr=True)
    assert (plan.per_rank, plan.global_) == (64, 256)
    assert plan.lr == pytest.approx(0.4)


def test_strong_scaling_splits_the_global_batch() -> None:
    plan = batching(64, 4, "strong", 0.1, scale_lr=True)
    assert (plan.per_rank, plan.global_) == (16, 64)
    assert plan.lr == pytest.approx(0.1)  # global batch unchanged: no LR change
    with pytest.raises(TrainerError):
        batching(2, 4, "strong", 0.1, scale_lr=False)


def test_tf_config_from_slurm_variables() -> None:
    env = {
        "SLURM_JOB_ID": "4242",
        "SLURM_PROCID": "3",
        "SLURM_NTASKS": "4",
        "SLURM_LOCALID": "1",
        "SLURM_NODEID": "1",
        "SLURM_STEP_NODELIST": "gpu[07-08]",
        "SLURM_STEP_TASKS_PER_NODE": "2(x2)",
    }
    spec = tf_config(from_environ(env), env)
    port = from_environ(env).master_port
    assert spec["cluster"]["worker"] == [
        f"gpu07:{port}",
        f"gpu07:{port + 1}",
        f"gpu08:{port + 2}",
        f"gpu08:{port + 3}",
    ]
    assert spec["task"] == {"type": "worker", "index": 3}


def test_tf_worker_rank_from_tf_config() -> None:
    workers = {"worker": ["a:1", "b:2", "c:3"]}
    assert tf_worker({"cluster": workers, "task": {"type": "worker", "index": 2}}) == (2, 3)
    with_chief = {"chief": ["z:0"], **workers}
    assert tf_worker({"cluster": with_chief, "task": {"type": "chief", "index": 0}}) == (0, 4)
    assert tf_worker({"cluster": with_chief, "task": {"type": "worker", "index": 0}}) == (1, 4)


def _one_line_error(res) -> str:
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    lines = [line for line in res.stderr.splitlines() if "error" in line]
    assert len(lines) == 1, res.stderr
    return lines[0]


@pytest.mark.parametrize("trainer", [TORCH_DDP, TF_KERAS], ids=["torch", "tf"])
def test_bad_flag_is_one_line(trainer) -> None:
    res = run([*trainer, "--epochs", "0"], timeout=60)
    line = _one_line_error(res)
    assert res.returncode == 2 and "--epochs" in line and "at least 1" in line
    assert res.stderr.count("\n") == 1


@pytest.mark.parametrize("trainer", [TORCH_DDP, TF_KERAS], ids=["torch", "tf"])
def test_missing_dataset_is_one_line(trainer, tmp_path) -> None:
    missing = tmp_path / "nowhere"
    res = run([*trainer, "--dataset", "cifar10", "--data", str(missing)], timeout=60)
    line = _one_line_error(res)
    assert res.returncode == 1 and str(missing) in line and "cifar-10-batches-py" in line
    assert res.stdout == ""


def test_gputui_train_dispatches(tmp_path) -> None:
    import sys

    res = run([sys.executable, "-m", "gputui", "train", "torch", "--dataset", "mnist"], timeout=60)
    assert res.returncode == 1 and "needs --data PATH" in _one_line_error(res)
