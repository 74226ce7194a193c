"""Issue 14 on the real local Slurm 22.05 cluster (``ci/slurm-cluster``): a node whose probe goes silent
while attached, a node running another gputui version, and ``gputui cancel`` of a job that ignores SIGTERM.

All "nodes" are processes of this one host, so a node's probe is the local process whose pid its
``probe_started`` record carries: SIGSTOP makes it silent without ending its task (srun reports nothing).
A job's processes that ignore SIGTERM stay until Slurm's SIGKILL, KillWait (5 s here) after the TERM;
the job is COMPLETING meanwhile, then CANCELLED."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from attach_helpers import Collector, job_env
from slurm_helpers import sbatch, scancel, wait_for, wait_job_state

import gputui.slurm.cancel as cancel_module
from gputui import __version__
from gputui.cli import main as cli_main
from gputui.stream.records import Record

pytestmark = pytest.mark.slurm

INTERVAL_S = 0.5  # the Collector's probe interval
SILENCE_S = 3.0  # AttachOptions.silence_s: node_lost after this long without a record
OTHER_VERSION = "0.0.1-stale"


@pytest.fixture(scope="module")
def env(slurm_cluster, tmp_path_factory) -> dict[str, str]:
    return job_env(slurm_cluster.env, tmp_path_factory.mktemp("gputui-state"))


@pytest.fixture(scope="module")
def nodes(slurm_cluster) -> list[str]:
    if len(slurm_cluster.nodes) < 2:
        pytest.skip("needs a cluster with at least 2 nodes")
    return slurm_cluster.nodes[:2]


@pytest.fixture(scope="module")
def two_node_job(env, nodes, tmp_path_factory) -> Iterator[str]:
    """A running 2-node job (one task's worth on each node) to attach to."""
    cwd = tmp_path_factory.mktemp("two-node")
    job = sbatch("sleep 300", env, cwd, ["-N", "2", "-w", ",".join(nodes), "-t", "5", "-J", "lost-version"])
    try:
        wait_job_state(job, {"RUNNING"}, 30, env)
        yield job
    finally:
        scancel(job, env)


def probes_started(col: Collector) -> dict[str, Record] | None:
    """Each node's ``probe_started`` once both nodes sent one."""
    started = {e["host"]: e for e in col.events("probe_started")}
    return started if len(started) >= 2 else None


def process_node(pid: int) -> tuple[list[bytes], str | None]:
    """A local process's argv and the SLURMD_NODENAME of its environment."""
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    names = [v.split(b"=", 1)[1].decode() for v in environ if v.startswith(b"SLURMD_NODENAME=")]
    return argv, names[0] if names else None


def test_silent_node_is_lost_within_the_silence_window(two_node_job, env, nodes) -> None:
    node1, node2 = nodes
    col = Collector(two_node_job, env, silence_s=SILENCE_S)
    pid = None
    try:
        started = wait_for(lambda: probes_started(col), 20, what="probe_started from both nodes")
        wait_for(lambda: col.gpu_hosts() == {node1, node2}, 15, what="records from both nodes")
        pid = int(started[node2]["pid"])
        argv, node = process_node(pid)
        assert argv[1:4] == [b"-m", b"gputui", b"probe"] and node == node2, (argv, node)

        stopped_at = time.time()
        os.kill(pid, signal.SIGSTOP)  # node2's probe stays alive (its task is not ended) but says nothing
        lost = wait_for(lambda: col.events("node_lost"), SILENCE_S + 5, interval=0.05, what="node_lost")
        ev = lost[0]
        assert ev["host"] == node2 and ev["cause"] == "silence", ev.fields
        assert ev["message"].startswith(f"node {node2}: probe silent (no record for "), ev["message"]
        assert ev["message"].endswith("other nodes keep streaming"), ev["message"]
        # Its last record came at most one interval before the stop; the attach checks every 0.2 s.
        after = ev.time - stopped_at
        assert SILENCE_S - INTERVAL_S - 0.3 <= after <= SILENCE_S + 3, after  # + srun's I/O lag under load

        wait_for(lambda: node1 in col.gpu_hosts(since=ev.time + 0.6), 10, what=f"{node1} still streaming")
        assert node2 not in col.gpu_hosts(since=stopped_at + 0.3)
        assert [e["host"] for e in col.events("node_lost")] == [node2] and col.thread.is_alive()

        os.kill(pid, signal.SIGCONT)  # node2 speaks again: its records join the stream again
        resumed = time.time()
        wait_for(lambda: node2 in col.gpu_hosts(since=resumed), 10, what=f"{node2} streaming after SIGCONT")
        assert len(col.events("node_lost")) == 1
        assert col.stop() == 0  # a detach: the job keeps running
    finally:
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        col.stop()


def stale_gputui_on(node: str, folder: Path) -> Path:
    """A PYTHONPATH folder whose ``sitecustomize`` makes gputui report :data:`OTHER_VERSION` in processes
    that Slurm started on ``node`` (as a stale copy of the environment there would)."""
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(
        "import os\n"
        f"if os.environ.get('SLURMD_NODENAME') == {node!r}:\n"
        "    import gputui\n\n"
        f"    gputui.__version__ = {OTHER_VERSION!r}\n"
    )
    return folder


def test_other_gputui_version_on_a_node_is_warned_once(two_node_job, env, nodes, tmp_path) -> None:
    node1, node2 = nodes
    stale = stale_gputui_on(node2, tmp_path / "stale")
    col = Collector(two_node_job, {**env, "PYTHONPATH": str(stale)})  # srun passes it to the probe tasks
    try:
        started = wait_for(lambda: probes_started(col), 20, what="probe_started from both nodes")
        assert started[node1]["version"] == __version__ and started[node2]["version"] == OTHER_VERSION
        settle = time.time() + 2 * INTERVAL_S  # more records from both nodes: no second warning comes
        wait_for(lambda: col.gpu_hosts(since=settle) == {node1, node2}, 15, what="records after the start")
        warnings = col.events("warning")
        assert len(warnings) == 1, [w["message"] for w in warnings]
        assert warnings[0]["host"] == node2, warnings[0].fields
        message = warnings[0]["message"]
        assert f"node {node2} runs gputui {OTHER_VERSION} but this side runs {__version__}" in message
        assert col.stop() == 0
    finally:
        col.stop()


# The batch shell, everything it starts and the step's task ignore SIGTERM ('' is inherited, a handler
# is not); "ready" once the step runs with its TERM ignored.
TERM_IGNORING_JOB = """\
trap '' TERM
srun -n 1 bash -c 'echo step ready; while :; do sleep 0.2; done' &
while :; do sleep 0.2; done
"""


def test_cancel_of_a_job_ignoring_term_is_not_confirmed(env, monkeypatch, capsys, tmp_path) -> None:
    for name, value in env.items():  # the in-process CLI reads os.environ
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(cancel_module, "CONFIRM_TIMEOUT_S", 1.0)  # well below KillWait (5 s)
    job = sbatch(TERM_IGNORING_JOB, env, tmp_path, ["-N", "1", "-t", "2", "-J", "ignores-term"])
    try:
        wait_job_state(job, {"RUNNING"}, 30, env)
        out = tmp_path / f"slurm-{job}.out"
        wait_for(lambda: out.exists() and "step ready" in out.read_text(), 15, what="the step to run")
        capsys.readouterr()
        asked = time.monotonic()
        code = cli_main(["cancel", job])
        took = time.monotonic() - asked
        res = capsys.readouterr()
        assert code == 1, res
        assert res.out == f"asked Slurm to cancel job {job}, but after 1 s it is still COMPLETING\n", res
        assert res.err == "" and 1.0 <= took < 4.5, (res.err, took)  # Slurm calls are slow on 26.05
        # Slurm's SIGKILL comes KillWait after the TERM: a later check sees the job end.
        assert wait_job_state(job, {"CANCELLED"}, 15, env) == "CANCELLED"
        assert time.monotonic() - asked >= 4.0  # it did outlive the TERM
    finally:
        scancel(job, env)
