"""Real TensorFlow training on CPU: MirroredStrategy over 2 logical CPUs, MWMS over 2 Slurm tasks."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time

import pytest
from ci_helpers import require_module
from trainer_helpers import QUIET, TF_KERAS, records_from, run, values

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


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for sock in socks:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in socks]
    for sock in socks:
        sock.close()
    return ports


@pytest.mark.parametrize("crash", [1, 0], ids=["worker-crashes", "chief-crashes"])
def test_multiworker_crashed_worker_makes_the_other_exit_with_one_line(crash: int) -> None:
    """Two local MWMS workers (TF_CONFIG, no Slurm); one dies at step 2 (the --debug-crash-rank hook).

    The survivor must not hang nor dump TensorFlow's traceback: it exits with status 3 and one line,
    in bounded time (the coordination service notices the missing heartbeats of a dead worker; a dead
    chief closes the gRPC connection).
    """
    workers = [f"localhost:{port}" for port in _free_ports(2)]
    argv = [*TF_KERAS, "--strategy", "multiworker", "--epochs", "2", "--batch-size", "16"]
    argv += ["--timeout", "30", "--debug-crash-rank", str(crash)]
    procs = []
    start = time.monotonic()
    for index in range(2):
        config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
        env = {**os.environ, **QUIET, "TF_CONFIG": json.dumps(config)}
        for key in ("RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_JOB_ID"):
            env.pop(key, None)
        procs.append(
            subprocess.Popen(
                argv,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    try:
        outs = [proc.communicate(timeout=150) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    elapsed = time.monotonic() - start
    survivor = 1 - crash
    err_c, (out_s, err_s) = outs[crash][1], outs[survivor]
    assert procs[crash].returncode == 17 and f"rank {crash}: simulated crash at step 2" in err_c
    assert procs[survivor].returncode == 3, err_s[-3000:]
    assert elapsed < 120  # bounded (two TensorFlow imports on a loaded 2-core machine take up to ~30 s each)
    assert "Traceback" not in err_s
    errors = [line for line in err_s.splitlines() if "error:" in line]
    assert len(errors) == 1 and errors[0] == err_s.rstrip("\n").splitlines()[-1], err_s[-3000:]
    # the peer dies before step 2: the survivor has counted step 1, or not yet when TF ran it ahead
    # asynchronously and the failure surfaced in its all-reduce (seen under CPU load)
    lost = rf"rank {survivor}: lost contact with the other workers after [01] steps "
    assert re.match(rf"gputui\.trainers\.tf_keras: error: {lost}", errors[0]), errors[0]
    assert "timed out after 30 s" in errors[0] and len(errors[0]) < 500
    # TF's own message, not the Python stack it prints first; which message comes first depends on timing:
    # the coordination service naming the dead task, or the aborted collective
    assert "Detected at node" not in errors[0] and "(most recent call last)" not in errors[0], errors[0]
    if crash == 1 and "heartbeats" in errors[0]:
        assert "task:1" in errors[0], errors[0]
    # The survivor knew its rank from TF_CONFIG and reported before the fault.
    assert values(records_from(out_s), "replicas", survivor) == [2.0]
