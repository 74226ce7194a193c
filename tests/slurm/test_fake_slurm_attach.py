"""Attaching to a running job through the fake ``srun``/``scontrol`` (tests/fakes/slurm): the probe step's
command line, the merged stream of both nodes, a node whose probe falls silent or dies, a node failure, a
node running another gputui version, and the reader threads. The step runs the real ``gputui probe``
(backend sim) once per node; no cluster needed."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator

import pytest
from attach_helpers import gputui
from fake_slurm import NODES, FakeSlurm, job, node_down

from gputui import __version__
from gputui.stream.io import format_prefixed
from gputui.stream.records import metric

PROBE_FLAGS = (
    "--jobid=3",
    "--overlap",
    "--ntasks-per-node=1",
    "--kill-on-bad-exit=0",
    "--quiet",
    "--no-kill",
)


@pytest.fixture
def slurm(tmp_path, monkeypatch) -> Iterator[FakeSlurm]:
    fake = FakeSlurm(tmp_path, monkeypatch).set("scontrol show job", job())
    yield fake
    fake.close()


def test_one_overlap_step_streams_both_nodes_and_detaching_leaves_the_job(slurm, tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_JOB_ID", "999")  # as inside another allocation: must not reach srun
    out = tmp_path / "slurm-3.out"
    out.write_text(format_prefixed(metric("loss", 0.5, step=7)) + "\n")
    slurm.set("scontrol show job", job(stdout=str(out)))
    slurm.set("srun", {"nodes": NODES})
    run = slurm.attach(follow_logs=True, log_poll_s=0.1)
    run.wait(lambda: run.hosts() == {"node1", "node2"}, "records from both nodes")
    run.wait(lambda: [r for r in run.snapshot() if r.kind == "metric"], "the metric of the job's output")
    assert run.stop() == 0

    (argv,) = slurm.calls("srun")  # one long-lived step, never one per refresh
    opts, probe = argv[: argv.index(sys.executable)], argv[argv.index(sys.executable) :]
    assert set(PROBE_FLAGS) <= set(opts) and "-N 2 -n 2" in " ".join(opts), argv
    assert not {"-u", "--unbuffered", "-l", "--label"} & set(opts), "line-buffered on purpose"
    assert probe == [sys.executable, "-m", "gputui", "probe", "--backend", "sim", "--interval", "0.2"]
    assert slurm.calls("srun --version") == [["--version"]]
    (srun_env,) = [e["env"] for e in slurm.entries() if e.get("key") == "srun" and "argv" in e]
    assert "SLURM_JOB_ID" not in srun_env and srun_env["SLURM_TIME_FORMAT"] == "standard"

    started = {e["host"]: e["version"] for e in run.events("probe_started")}
    assert started == {"node1": __version__, "node2": __version__}
    attached, *_, detached = run.events("job_state")
    assert attached["message"].startswith("attached to job 3 (my job|x): RUNNING on node[1-2], 4 GPUs")
    assert detached["message"] == "detached from job 3 (the job keeps running)"
    (loss,) = [r for r in run.snapshot() if r.kind == "metric"]
    assert loss["name"] == "loss" and loss["value"] == 0.5 and loss["step"] == 7
    assert not run.events("node_lost") and not run.events("warning")
    assert slurm.step_events() == ["sigterm"]  # only the probe step was stopped ...
    assert slurm.calls("scancel") == []  # ... never the job
    assert run.attacher.proc is not None and run.attacher.proc.poll() is not None


def test_the_attach_command_writes_the_json_stream_and_detaches(slurm, tmp_path):
    slurm.set("srun", {"nodes": NODES})
    args = ["attach", "3", "--json", "--probe-backend", "sim", "--probe-interval", "0.2"]
    res = gputui([*args, "--no-logs", "--detach-after", "8"], os.environ, tmp_path)  # room for 2 probe starts
    assert res.returncode == 0, res.stderr
    records = [json.loads(line) for line in res.stdout.splitlines()]
    assert {r["host"] for r in records if r["kind"] == "gpu"} == {"node1", "node2"}
    assert records[-1]["message"] == "detached from job 3 (the job keeps running)"
    (argv,) = slurm.calls("srun")
    assert argv[-4:] == ["--backend", "sim", "--interval", "0.2"]
    assert slurm.step_events() == ["sigterm"] and slurm.calls("scancel") == []


def test_a_silent_node_is_reported_lost_and_the_other_keeps_streaming(slurm):
    slurm.set("srun", {"nodes": [{"name": "node1"}, {"name": "node2", "silent_after": 0.6}]})
    run = slurm.attach(silence_s=1.5)
    lost = run.wait_event("node_lost", "node2 reported lost", host="node2")
    assert lost["cause"] == "silence" and "probe silent (no record for" in lost["message"]
    run.wait(lambda: "node1" in run.hosts(after=lost), "node1 still streaming")
    assert run.stop() == 0
    assert [e["host"] for e in run.events("node_lost")] == ["node2"]  # once, and never node1


def test_a_dead_probe_task_is_reported_lost_and_the_other_keeps_streaming(slurm):
    slurm.set("srun", {"nodes": [{"name": "node1"}, {"name": "node2", "die_after": 0.8}]})
    run = slurm.attach()  # default silence window (10 s): srun's own line must tell
    lost = run.wait_event("node_lost", "node2 reported lost", host="node2", timeout=5)
    assert lost["cause"] == "task_exit"
    assert lost["message"] == "node node2: probe stopped (Killed); other nodes keep streaming"
    run.wait(lambda: "node1" in run.hosts(after=lost), "node1 still streaming")
    assert run.stop() == 0
    assert [e["host"] for e in run.events("node_lost")] == ["node2"]


def test_a_node_failure_names_the_state_slurm_gave_the_node(slurm):
    slurm.set("scontrol show node", node_down("node2"))
    node2 = {"name": "node2", "silent_after": 0.2}  # a dead node's probe says nothing more
    slurm.set(
        "srun", {"nodes": [NODES[0], node2], "stderr_after": [[1.0, "srun: error: Node failure on node2\n"]]}
    )
    run = slurm.attach()
    lost = run.wait_event("node_lost", "node2 reported lost", host="node2", timeout=5)
    assert lost["cause"] == "node_failure" and lost["state"] == "DOWN+NOT_RESPONDING"
    assert "Slurm marked it DOWN+NOT_RESPONDING (Not responding)" in lost["message"]
    assert slurm.calls("scontrol show node") == [["show", "node", "-o", "node2"]]
    run.wait(lambda: "node1" in run.hosts(after=lost), "node1 still streaming")
    assert run.stop() == 0


def test_a_node_with_another_gputui_version_is_warned_about(slurm):
    slurm.set("srun", {"nodes": [{"name": "node1"}, {"name": "node2", "version": "0.0.1"}]})
    run = slurm.attach()
    warning = run.wait_event("warning", "the version warning", host="node2")
    assert warning["message"].startswith(f"node node2 runs gputui 0.0.1 but this side runs {__version__}")
    run.wait(lambda: run.hosts() == {"node1", "node2"}, "records from both nodes")
    assert run.stop() == 0
    assert len(run.events("warning")) == 1  # node1 runs this version


def test_the_reader_threads_drain_stderr_and_count_lines_that_are_not_records(slurm):
    """256 KiB on srun's stderr before any record: nothing arrives unless stderr is read alongside."""
    noise = ["srun: not a record on stdout", '{"v":1,"kind":"gpu"']
    slurm.set("srun", {"nodes": NODES, "stderr_flood": 256 * 1024, "stdout_noise": noise})
    run = slurm.attach()
    run.wait(lambda: run.hosts() == {"node1", "node2"}, "records from both nodes")
    assert run.stop() == 0
    assert run.attacher.malformed == 2 and run.attacher.bad_lines[0].startswith(b"srun: not a record")
    assert not run.events("node_lost")
