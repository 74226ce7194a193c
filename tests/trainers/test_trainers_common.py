"""Flag parsing, batch/LR scaling, the TF cluster spec, and one-line errors from the command line."""

from __future__ import annotations

import pytest
from trainer_helpers import PYTHON, TF_KERAS, TORCH_DDP, run

from gputui.distenv import from_environ
from gputui.trainers.common import TrainerError, batching, failure_detail, tf_config, tf_worker


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


# What TensorFlow's InterpolateRuntimeError makes of a failed collective (atomic_function.py: the header,
# each node's Python frames from traceback.format_list, then the runtime's own message).
GRAPH_ERROR = (
    "Graph execution error:\n\n"
    "Detected at node CollectiveReduceV2_1 defined at (most recent call last):\n"
    '  File "/x/tf_keras.py", line 88, in main\n'
    "    history = model.fit(data, epochs=args.epochs)\n"
    '  File "/x/keras/trainer.py", line 377, in fit\n'
    "<stack traces unavailable>\n"
    "Collective ops is aborted by: Task /job:worker/replica:0/task:1 heartbeat timeout.\n"
    "The error could be from a previous operation. Restart your program to reset.\n"
    "\t [[{{node CollectiveReduceV2_1}}]] [Op:__inference_multi_step_on_iterator_1234]"
)


@pytest.mark.parametrize(
    ("message", "detail"),
    [
        (GRAPH_ERROR, "Collective ops is aborted by: Task /job:worker/replica:0/task:1 heartbeat timeout."),
        (
            "{{function_node __wrapped__CollectiveReduceV2}} The following tasks are unhealthy (stopped "
            "sending heartbeats):\n/job:worker/replica:0/task:1\n [Op:CollectiveReduceV2]",
            "The following tasks are unhealthy (stopped sending heartbeats): /job:worker/replica:0/task:1",
        ),
        ("Connection closed by peer [10.0.0.2]:29500", "Connection closed by peer [10.0.0.2]:29500"),
        (  # no message after the stack: what there is
            "Graph execution error:\n\nDetected at node X defined at (most recent call last):\n",
            "Graph execution error: Detected at node X defined at (most recent call last):",
        ),
    ],
)
def test_a_lost_peer_is_told_by_the_runtime_s_own_message(message: str, detail: str) -> None:
    """Not the Python stack TF prints first (CI once showed only "Graph execution error: Detected at node
    CollectiveReduceV2_1 defined at (most recent call last):")."""
    assert failure_detail(RuntimeError(message)) == detail


LEAVE_SCRIPT = """
import atexit, gc, sys
from gputui.trainers.common import leave_after_distributed

class Cycle:
    def __init__(self):
        self.me = self
    def __del__(self):
        sys.stdout.write("collected ")

atexit.register(lambda: print("finalization ran", flush=True))
Cycle()
sys.stdout.write("records flushed ")
sys.stderr.write("stderr flushed")
leave_after_distributed(0)
"""


def test_leave_after_distributed_collects_flushes_and_skips_finalization() -> None:
    res = run([PYTHON, "-c", LEAVE_SCRIPT], {"PYTHONUNBUFFERED": ""})
    assert res.returncode == 0, res.stderr
    # the cycle is collected while the interpreter is whole; buffered output is not lost; no atexit
    assert res.stdout == "records flushed collected "
    assert res.stderr == "stderr flushed"
