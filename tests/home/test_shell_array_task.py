"""The ``o`` (shell) key on an array task names the task's own numeric job id (issue 23.2).

``srun --jobid=A_T`` is refused by Slurm 22.05 ("Invalid numeric value") and by 24.11 while any task of
the array is pending; the task's own id (squeue's JobID, the id attach uses) works on every version. The
cluster test runs the exact argv of :func:`gputui.home.actions.shell_argv` (``--pty`` without a terminal:
srun says it disregards it and forwards stdin to the shell) on a task of an array with pending tasks."""

from __future__ import annotations

import subprocess

import pytest
from slurm_helpers import sbatch, scancel, wait_for

from gputui.home.actions import shell_argv
from gputui.slurm.jobs import Job, list_jobs


def test_array_task_shell_uses_the_task_own_job_id() -> None:
    task = Job(job_id="181_0", raw_job_id=182, array_job_id=181, array_task_id=0)
    assert shell_argv(task, "node1")[:2] == ["srun", "--jobid=182"]
    assert shell_argv(Job(job_id="900+1", raw_job_id=901), "cpu01")[1] == "--jobid=901"
    assert shell_argv(Job(job_id="77"), "node1")[1] == "--jobid=77"  # no raw id known: the id as listed


@pytest.mark.slurm
def test_shell_in_an_array_task_with_pending_tasks(slurm_cluster, tmp_path) -> None:
    env = slurm_cluster.env
    array = sbatch("sleep 120\n", env, tmp_path, ["-a", "0-2%1", "-o", str(tmp_path / "o-%A_%a")])
    try:

        def running_task() -> Job | None:
            jobs = list_jobs(env=env)
            pending = [j for j in jobs if j.job_id.startswith(f"{array}_") and j.state == "PENDING"]
            running = [j for j in jobs if j.job_id.startswith(f"{array}_") and j.state == "RUNNING"]
            return running[0] if running and pending else None

        task = wait_for(running_task, 30, interval=0.3, what=f"a running task of array {array}")
        argv = shell_argv(task, task.nodes[0])
        res = subprocess.run(
            argv,
            env=env,
            input="echo JOB=$SLURM_JOB_ID\nexit\n",
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert res.returncode == 0, res.stderr
        assert f"JOB={task.raw_job_id}" in res.stdout
    finally:
        scancel(array, env)
