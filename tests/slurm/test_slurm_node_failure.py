"""A node that really fails while gputui is attached, and ``ci/slurm-cluster up --slurmd-timeout``.

All nodes of the local cluster share one host, so stopping node2's slurmd leaves node2's slurmstepd (and
the probe task under it) running: the failure becomes visible only when slurmctld marks node2 DOWN, after
SlurmdTimeout (10 s in the test cluster; Slurm's default is 300 s) plus two failed pings of ~10 s each.
srun then reports ``Node failure on node2``. The job is ``--no-kill``, so it keeps running on node1 and
the attach must keep streaming node1. A finalizer runs ``ci/slurm-cluster up``, which restarts the slurmd
(and so ends node2's orphaned steps) for the tests that follow.

Other sessions' jobs that need node2 wait (or fail) while it is down: about half a minute."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path

import pytest
from attach_helpers import Collector, job_env
from slurm_helpers import run, sbatch, scancel, wait_for, wait_job_state

from gputui.slurm.scontrol import job_detail

pytestmark = pytest.mark.slurm


def cluster_up(cluster, *args: str):
    """This cluster's own `up` (ci/slurm-cluster for 22.05, ci/slurm-version-cluster for 24.11/26.05)."""
    return run(cluster.script_argv("up", *args), cluster.env, timeout=120)


def slurmd_timeout_now(env: dict[str, str]) -> str:
    """SlurmdTimeout as slurmctld has it ("SlurmdTimeout = 10 sec")."""
    out = run(["scontrol", "show", "config"], env).stdout
    return next(ln.split("=", 1)[1].split()[0] for ln in out.splitlines() if ln.startswith("SlurmdTimeout "))


def daemon_pids(root: Path) -> dict[str, int]:
    return {p.stem: int(p.read_text().split()[0]) for p in (root / "run").glob("s*.pid")}


def uts_namespace(pid: int | str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/uts")
    except OSError:
        return None


def processes_in(namespace: str) -> list[int]:
    return [
        int(p.name)
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and uts_namespace(p.name) == namespace
    ]


@pytest.fixture
def restore_cluster(slurm_cluster):
    """After the test: `ci/slurm-cluster up` (default settings) repairs whatever the test broke. A failed
    node's leftovers (its slurmstepd and tasks, in the UTS namespace of the slurmd that was stopped; the new
    slurmd gets a new one) are killed, as the failure would have; Slurm alone takes ~30 s for it."""
    dead_nodes: list[str] = []  # UTS namespaces of stopped slurmds
    yield dead_nodes
    cluster_up(slurm_cluster)
    assert run(slurm_cluster.script_argv("status"), slurm_cluster.env, check=False).returncode == 0
    for namespace in dead_nodes:
        for pid in processes_in(namespace):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_for(lambda ns=namespace: not processes_in(ns), 10, what=f"processes in {namespace} to end")


def test_slurmd_timeout_option_reconfigures_without_restarting(slurm_cluster, tmp_path, restore_cluster):
    if not slurm_cluster.host:
        pytest.skip(
            f"--slurmd-timeout is an option of ci/slurm-cluster (22.05), not of {slurm_cluster.label}'s"
        )
    env = slurm_cluster.env
    job = sbatch("sleep 60", env, tmp_path, ["-N", "1", "-t", "2"])
    try:
        wait_job_state(job, {"RUNNING"}, 30, env)
        before = daemon_pids(slurm_cluster.root)
        res = cluster_up(slurm_cluster, "--slurmd-timeout", "17")
        assert "reconfigured: SlurmdTimeout=17" in res.stderr, res.stderr
        assert slurmd_timeout_now(env) == "17"
        assert "\nSlurmdTimeout=17\n" in slurm_cluster.conf.read_text()
        assert json.loads((slurm_cluster.conf.parent / "cluster.json").read_text())["slurmd_timeout"] == 17
        assert daemon_pids(slurm_cluster.root) == before  # nothing restarted ...
        assert run(["squeue", "-h", "-j", job, "-o", "%T"], env).stdout.strip() == "RUNNING"  # ... or lost
        res = cluster_up(slurm_cluster)
        assert "reconfigured: SlurmdTimeout=10" in res.stderr and slurmd_timeout_now(env) == "10"
        assert "already up" in cluster_up(slurm_cluster).stderr
    finally:
        scancel(job, env)


@pytest.mark.timeout(150)
def test_node_fails_while_attached(slurm_cluster, tmp_path, restore_cluster):
    if len(slurm_cluster.nodes) < 2:
        pytest.skip("needs a cluster with at least 2 nodes")
    info = json.loads((slurm_cluster.conf.parent / "cluster.json").read_text())
    timeout = int(info.get("slurmd_timeout", 300))
    if timeout > 30:
        pytest.skip(f"SlurmdTimeout is {timeout} s: run `ci/slurm-cluster up` (default 10 s)")
    env = job_env(slurm_cluster.env, tmp_path / "state")
    node1, node2 = slurm_cluster.nodes[:2]
    job = sbatch("sleep 300", env, tmp_path, ["-N", "2", "-w", f"{node1},{node2}", "-t", "5", "--no-kill"])
    col = None
    try:
        wait_job_state(job, {"RUNNING"}, 30, env)
        col = Collector(job, env)
        wait_for(lambda: col.gpu_hosts() == {node1, node2}, 15, what="records from both nodes")

        pidfile = slurm_cluster.root / "run" / f"slurmd-{node2}.pid"
        pid = int(pidfile.read_text().split()[0])
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert os.path.basename(argv[0]) == b"slurmd" and node2.encode() in argv, argv
        if slurm_cluster.uts_namespaces and uts_namespace(pid) != uts_namespace("self"):
            restore_cluster.append(uts_namespace(pid))  # node2's own processes: ended afterwards
        os.kill(pid, signal.SIGTERM)  # node2's slurmd goes away; its slurmstepd stays (one host)

        def lost():
            if pidfile.exists() and int(pidfile.read_text().split()[0]) != pid:
                raise AssertionError(f"slurmd-{node2} was restarted (another `ci/slurm-cluster up`?)")
            return col.events("node_lost")

        events = wait_for(lost, timeout + 45, interval=0.2, what=f"node_lost for {node2}")
        ev = events[0]
        assert ev["host"] == node2 and ev["cause"] == "node_failure", ev.fields
        assert ev["state"].startswith("DOWN"), ev.fields
        assert ev["message"].startswith(f"node {node2}: node failure: Slurm marked it DOWN"), ev["message"]
        assert "(Not responding)" in ev["message"] and ev["message"].endswith("other nodes keep streaming")

        after = ev.time + 1.0
        wait_for(lambda: node1 in col.gpu_hosts(since=after), 10, what=f"{node1} streaming after the loss")
        assert node2 not in col.gpu_hosts(since=after)
        assert len(col.events("node_lost")) == 1 and col.thread.is_alive()
        detail = job_detail(job, env=env)
        assert detail.state == "RUNNING" and detail.nodes == [node1]  # --no-kill: the job lost node2 only

        scancel(job, env)  # the job ends: so does the attach
        col.thread.join(30)
        assert not col.thread.is_alive() and col.result == 0, col.result
        final = col.events("job_state")[-1]["message"]
        assert final.startswith(f"job {job} has ended: CANCELLED"), final
    finally:
        if col is not None:
            col.stop()
        scancel(job, env)
