"""Hold and release on the local Slurm cluster: a job that waits for its begin time is held
(``JobHeldUser``, or ``JobHeldAdmin`` when the tests run as root, an operator) and released again, each
confirmed from ``scontrol show job``; a running job is refused without calling ``scontrol hold``."""

from __future__ import annotations

import pytest
from slurm_helpers import sbatch, scancel, wait_job_state

from gputui.slurm.commands import SlurmError
from gputui.slurm.job_actions import HELD_REASONS, hold_job, release_job
from gputui.slurm.scontrol import job_detail


@pytest.mark.slurm
def test_hold_then_release_a_pending_job(slurm_cluster, tmp_path) -> None:
    env = slurm_cluster.env
    job = sbatch("sleep 30\n", env, tmp_path, ["--begin=now+1hour", "-o", str(tmp_path / "out-%j.txt")])
    try:
        wait_job_state(job, {"PENDING"}, 30, env)
        held = hold_job(job, env=env)
        assert held.confirmed, held.message
        assert job_detail(job, env=env).reason in HELD_REASONS
        with pytest.raises(SlurmError, match=r"is already held"):
            hold_job(job, env=env)
        released = release_job(job, env=env)
        assert released.confirmed, released.message
        assert job_detail(job, env=env).reason not in HELD_REASONS
    finally:
        scancel(job, env)


@pytest.mark.slurm
def test_a_running_job_is_not_held(slurm_cluster, tmp_path) -> None:
    env = slurm_cluster.env
    job = sbatch("sleep 60\n", env, tmp_path, ["-o", str(tmp_path / "out-%j.txt")])
    try:
        wait_job_state(job, {"RUNNING"}, 60, env)
        with pytest.raises(SlurmError, match=r"^job \d+ is RUNNING: only a pending job can be held$"):
            hold_job(job, env=env)
        assert job_detail(job, env=env).state == "RUNNING"
    finally:
        scancel(job, env)
