"""``gputui serve attach JOBID`` on the local Slurm cluster: two browser viewers each start their own
probe step in the job; Ctrl-C (SIGINT) of the server ends both apps and both probe steps, and the job
keeps running."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from serve_helpers import Served, Viewer, alive, wait_until
from slurm_helpers import job_state, sbatch, scancel, step_ids, wait_job_state


@pytest.mark.slurm
@pytest.mark.timeout(240)
async def test_ctrl_c_ends_every_viewers_probe_step_and_the_job_keeps_running(
    slurm_cluster, tmp_path: Path
) -> None:
    env = {**slurm_cluster.env, "GPUTUI_STATE_DIR": str(tmp_path / "state")}
    script = f"srun --quiet {sys.executable} -c 'import time; time.sleep(600)'\n"
    jobid = sbatch(script, env, tmp_path, ["-N1", "-t", "5", "-J", "serve-e2e", "--output=job-%j.out"])
    own = {f"{jobid}.0", f"{jobid}.batch"}  # the job's own steps: the rest are probe steps
    try:
        wait_job_state(jobid, {"RUNNING"}, 30, env)
        wait_until(lambda: own <= set(step_ids(jobid, env)), 30, "the job's own step")
        served = Served(
            tmp_path, "attach", jobid, "--probe-backend", "sim", "--probe-interval", "0.5", base_env=env
        )
        try:
            async with Viewer(served) as one, Viewer(served) as two:
                await one.read_until("SIMULATED", f"job {jobid}", timeout=90)
                await two.read_until("SIMULATED", f"job {jobid}", timeout=90)
                probes = wait_until(
                    lambda: (extra := set(step_ids(jobid, env)) - own) and len(extra) == 2 and extra,
                    30,
                    "one probe step per viewer",
                )
                everything = served.descendants()
                assert len(served.apps()) == 2
                assert served.interrupt(90) == 0
            wait_until(lambda: not alive(everything), 30, "every app process and its srun to end")
            wait_until(
                lambda: not set(step_ids(jobid, env)) & set(probes), 30, f"the probe steps {probes} to end"
            )
            assert set(step_ids(jobid, env)) == own
            assert job_state(jobid, env) == "RUNNING"
        finally:
            served.close()
    finally:
        scancel(jobid, env)
    wait_job_state(jobid, {"CANCELLED", "COMPLETING"}, 30, env)
