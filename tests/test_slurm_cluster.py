"""The local Slurm test cluster (any version of the tests) is a real cluster: jobs, steps, GRES, overlap."""

from __future__ import annotations

import re
import time

import pytest
from slurm_helpers import (
    job_state,
    run,
    sbatch,
    scancel,
    step_ids,
    wait_for,
    wait_job_state,
)

pytestmark = pytest.mark.slurm


def _two_nodes(cluster) -> list[str]:
    if len(cluster.nodes) < 2:
        pytest.skip("needs a cluster with at least 2 nodes")
    return cluster.nodes[:2]


@pytest.mark.timeout(60)
def test_sbatch_two_node_job_completes_on_both_nodes(slurm_cluster, tmp_path):
    nodes = _two_nodes(slurm_cluster)
    env = slurm_cluster.env
    script = "srun hostname\nsrun bash -c 'echo nodename=$SLURMD_NODENAME'\n"
    args = ["-N2", "-t1", "-J", "two-nodes", f"--output={tmp_path}/two-%j.out"]
    jobid = sbatch(script, env, tmp_path, args)
    try:
        assert wait_job_state(jobid, {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}, 30, env) == "COMPLETED"
    finally:
        scancel(jobid, env)
    lines = (tmp_path / f"two-{jobid}.out").read_text().split()
    nodenames = {line.removeprefix("nodename=") for line in lines if line.startswith("nodename=")}
    hostnames = {line for line in lines if not line.startswith("nodename=")}
    assert nodenames == set(nodes)
    if slurm_cluster.uts_namespaces:  # each slurmd has its own UTS namespace named after its node
        assert hostnames == set(nodes)
    else:
        assert len(hostnames) == 1


@pytest.mark.timeout(60)
def test_srun_sets_task_variables_across_nodes(slurm_cluster):
    nodes = _two_nodes(slurm_cluster)
    cmd = (
        "echo PROCID=$SLURM_PROCID NTASKS=$SLURM_NTASKS LOCALID=$SLURM_LOCALID"
        " NODEID=$SLURM_NODEID NODE=$SLURMD_NODENAME"
    )
    res = run(["srun", "-N2", "-n4", "-l", "-t1", "bash", "-c", cmd], slurm_cluster.env)
    tasks = []
    for line in res.stdout.splitlines():
        label, _, rest = line.partition(": ")
        fields = dict(item.split("=", 1) for item in rest.split())
        tasks.append((int(label.strip()), fields))
    assert sorted(label for label, _ in tasks) == [0, 1, 2, 3], res.stdout
    for label, fields in tasks:
        assert int(fields["PROCID"]) == label
        assert fields["NTASKS"] == "4"
    by_node: dict[str, list[dict[str, str]]] = {}
    for _, fields in tasks:
        by_node.setdefault(fields["NODE"], []).append(fields)
    assert set(by_node) == set(nodes), res.stdout  # distinct nodes, both used
    assert {fields["NODEID"] for _, fields in tasks} == {"0", "1"}
    for node_tasks in by_node.values():
        assert len({f["NODEID"] for f in node_tasks}) == 1
        assert sorted(int(f["LOCALID"]) for f in node_tasks) == list(range(len(node_tasks)))


@pytest.mark.timeout(60)
def test_gres_step_sees_two_gpus(slurm_cluster):
    if slurm_cluster.gpus_per_node < 2:
        pytest.skip("needs at least 2 fake GPUs per node")
    cmd = "echo CVD=$CUDA_VISIBLE_DEVICES; echo STEP_GPUS=$SLURM_STEP_GPUS"
    res = run(["srun", "-N1", "-n1", "-t1", "--gres=gpu:2", "bash", "-c", cmd], slurm_cluster.env)
    values = dict(line.split("=", 1) for line in res.stdout.splitlines() if "=" in line)
    assert re.fullmatch(r"\d+,\d+", values["CVD"]), res.stdout
    assert len(set(values["CVD"].split(","))) == 2
    assert re.fullmatch(r"\d+,\d+", values["STEP_GPUS"]), res.stdout


@pytest.mark.timeout(90)
def test_overlap_step_attaches_to_running_job(slurm_cluster, tmp_path):
    env = slurm_cluster.env
    ticks = tmp_path / "ticks"
    script = f"srun --quiet bash -c 'while true; do date +%s.%N >> {ticks}; sleep 0.2; done'\n"
    args = ["-N1", "-t1", "-J", "sleeper", f"--output={tmp_path}/sleeper-%j.out"]
    jobid = sbatch(script, env, tmp_path, args)
    try:
        wait_job_state(jobid, {"RUNNING"}, 20, env)
        wait_for(lambda: f"{jobid}.0" in step_ids(jobid, env), 20, what=f"step {jobid}.0 to run")
        wait_for(lambda: ticks.exists() and ticks.read_text().strip(), 20, what="the job's step to tick")

        cmd = "echo job=$SLURM_JOB_ID step=$SLURM_STEP_ID node=$SLURMD_NODENAME"
        res = run(["srun", "--overlap", f"--jobid={jobid}", "--quiet", "bash", "-c", cmd], env)
        fields = dict(item.split("=", 1) for item in res.stdout.split())
        assert fields["job"] == jobid
        assert int(fields["step"]) >= 1  # a new step next to the job's own step 0
        assert fields["node"] in slurm_cluster.nodes

        # The job's own step kept running while (and after) we attached.
        assert f"{jobid}.0" in step_ids(jobid, env)
        seen = len(ticks.read_text().splitlines())
        wait_for(lambda: len(ticks.read_text().splitlines()) > seen, 10, what="step 0 to keep ticking")
        assert job_state(jobid, env) == "RUNNING"
    finally:
        scancel(jobid, env)
    state = wait_for(
        lambda: (s := job_state(jobid, env)) != "RUNNING" and s, 20, what=f"job {jobid} to leave RUNNING"
    )
    assert state in ("COMPLETING", "CANCELLED")
    assert wait_job_state(jobid, {"CANCELLED"}, 20, env) == "CANCELLED"


@pytest.mark.timeout(60)
def test_cluster_script_status_and_idempotent_up(slurm_cluster):
    env = slurm_cluster.env
    status = run(slurm_cluster.script_argv("status"), env, check=False)
    assert status.returncode == 0, status.stdout + status.stderr
    assert re.search(r"^slurmctld\s+up\b", status.stdout, re.M), status.stdout
    for node in slurm_cluster.nodes:
        assert re.search(rf"^slurmd-{node}\s+up\b.*state (idle|mix|alloc|comp)", status.stdout, re.M)

    start = time.monotonic()
    up = run(slurm_cluster.script_argv("up"), env)
    elapsed = time.monotonic() - start
    assert up.stdout.splitlines()[0] == f"export SLURM_CONF={slurm_cluster.conf}"
    assert "already up" in up.stderr
    assert elapsed < 15, f"idempotent `up` took {elapsed:.1f} s"  # a fresh start takes far longer
