"""gputui.slurm against the real local Slurm cluster (any version of the tests): submit, list, detail,
attach (records from both nodes within a deadline), node loss, pending and finished jobs, arrays, cancel and
signals, injection attempts, and the three launch patterns with a real 2-node PyTorch DDP job (gloo, CPU).

Every wait polls with a deadline. The cluster is shared with other tests (everyone is root there), so
jobs are always looked up by id, never by "the only job"."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from attach_helpers import Collector, gputui, job_env, submit_with_run
from slurm_helpers import run, sbatch, scancel, step_ids, wait_for, wait_job_state

from gputui.slurm.attach import Attacher, AttachError, AttachOptions
from gputui.slurm.cancel import cancel_job
from gputui.slurm.jobs import list_jobs
from gputui.slurm.scontrol import job_detail
from gputui.stream.io import parse_line, parse_prefixed
from gputui.stream.records import Record

pytestmark = pytest.mark.slurm

DATA = Path(__file__).parent / "data"
TICKER = (
    "import time\nfrom gputui.stream.io import format_prefixed\nfrom gputui.stream.records import metric\n"
    "for i in range(600):\n    print(format_prefixed(metric('loss', 1.0 / (i + 1), step=i)), flush=True)\n"
    "    time.sleep(0.5)\n"
)


@pytest.fixture(scope="module")
def env(slurm_cluster, tmp_path_factory) -> dict[str, str]:
    return job_env(slurm_cluster.env, tmp_path_factory.mktemp("gputui-state"))


@pytest.fixture(scope="module")
def running_job(env, slurm_cluster, tmp_path_factory):
    """A 2-node job with 2 GPUs per node printing a metric record every 0.5 s."""
    cwd = tmp_path_factory.mktemp("running")
    job, script = submit_with_run(
        [
            "-N",
            "2",
            "--gpus-per-node",
            "2",
            "--ntasks-per-node",
            "1",
            "--job-name",
            "ticker",
            "--",
            sys.executable,
            "-c",
            TICKER,
        ],
        env,
        cwd,
    )
    wait_job_state(job, {"RUNNING"}, 30, env)
    yield job, script, cwd
    scancel(job, env)


def test_submit_list_detail(running_job, env, slurm_cluster) -> None:
    job, script, cwd = running_job
    node1, node2 = slurm_cluster.nodes[:2]
    assert script.name == f"ticker-{job}.sh" and script.parent == Path(env["GPUTUI_STATE_DIR"]) / "scripts"
    assert script.read_text().startswith("#!/bin/bash")
    listed = {j.job_id: j for j in list_jobs(env=env)}
    assert job in listed and listed[job].nodes == [node1, node2] and listed[job].name == "ticker"
    assert listed[job].stdout == str(cwd / f"slurm-{job}.out")
    detail = job_detail(job, env=env)
    assert detail.state == "RUNNING" and detail.num_nodes == 2 and detail.user
    assert set(detail.gpus) == {node1, node2} and all(len(v) == 2 for v in detail.gpus.values())
    assert detail.stdout == str(cwd / f"slurm-{job}.out") and detail.work_dir == str(cwd)
    out = gputui(["jobs", "--json"], env, cwd)
    assert out.returncode == 0 and job in {j["job_id"] for j in json.loads(out.stdout)}


def test_attach_receives_both_nodes_and_detaches_leaving_the_job(running_job, env, slurm_cluster) -> None:
    job, _, _ = running_job
    both = set(slurm_cluster.nodes[:2])
    col = Collector(job, env)
    try:
        wait_for(lambda: col.gpu_hosts() >= both, 15, what="gpu records from both nodes")
    except TimeoutError:
        raise AssertionError(f"{col.result!r} {col.snapshot()[:5]}") from None
    wait_for(
        lambda: any(r.kind == "metric" and r.get("name") == "loss" for r in col.snapshot()),
        15,
        what="a metric record from the job's output file (log follower)",
    )
    probe_steps = [s for s in step_ids(job, env) if s not in (f"{job}.batch", f"{job}.0", f"{job}.extern")]
    assert len(probe_steps) == 1, step_ids(job, env)  # one step for all nodes
    assert col.stop() == 0
    wait_for(lambda: probe_steps[0] not in step_ids(job, env), 15, what="the probe step to end")
    assert job_detail(job, env=env).state == "RUNNING"  # stopping ended only the probe step
    started_events = col.events("probe_started")
    assert {e["host"] for e in started_events} == both, col.attacher.bad_lines
    assert not col.events("warning")  # same version on both sides


def test_node_loss_other_node_keeps_streaming(running_job, env, slurm_cluster) -> None:
    job, _, _ = running_job
    node1, node2 = slurm_cluster.nodes[:2]
    col = Collector(job, env)
    try:
        started = wait_for(
            lambda: (
                {e["host"]: e for e in col.events("probe_started")}
                if len(col.events("probe_started")) == 2
                else None
            ),
            15,
        )
        os.kill(started[node2]["pid"], signal.SIGKILL)  # one node's probe task dies
        lost = wait_for(lambda: col.events("node_lost"), 15, what="node_lost")
        assert lost[0]["host"] == node2 and len(lost) == 1
        after = lost[0].time
        wait_for(lambda: node1 in col.gpu_hosts(since=after + 0.6), 10, what=f"{node1} still streaming")
        assert node2 not in col.gpu_hosts(since=after + 0.6)
    finally:
        col.stop()


def test_attach_cli_json_stream(running_job, env, slurm_cluster) -> None:
    job, _, cwd = running_job
    # --detach-after counts from before the probe step starts (srun, step creation, two Python imports):
    # 9 s leaves a loaded CI machine room for both nodes' first samples.
    res = gputui(
        ["attach", job, "--json", "--probe-backend", "sim", "--probe-interval", "0.5", "--detach-after", "9"],
        env,
        cwd,
    )
    assert res.returncode == 0, res.stderr
    records = [json.loads(line) for line in res.stdout.splitlines()]
    assert {r["host"] for r in records if r["kind"] == "gpu"} == set(slurm_cluster.nodes[:2])


def test_pending_job_waits_then_attaches(env, tmp_path) -> None:
    job = sbatch("sleep 120", env, tmp_path, ["--hold", "-N", "1"])
    try:
        col = Collector(job, env, pending_poll_s=0.3)
        wait_for(
            lambda: any("waiting" in e.get("message", "") for e in col.events("job_state")),
            10,
            what="pending",
        )
        assert not col.gpu_hosts()
        run(["scontrol", "release", job], env)
        wait_for(lambda: col.gpu_hosts(), 20, what="records once the job runs")
        col.stop()
    finally:
        scancel(job, env)


def test_finished_and_unknown_jobs(env, tmp_path) -> None:
    job = sbatch("true", env, tmp_path)
    wait_job_state(job, {"COMPLETED"}, 30, env)
    seen: list[Record] = []
    assert Attacher(job, seen.append, AttachOptions(backend="sim"), env=env).run() == 0
    assert "has ended: COMPLETED" in seen[-1]["message"]
    with pytest.raises(AttachError):
        Attacher("99999999", seen.append, env=env).run()
    for argv in (["attach", "99999999"], ["cancel", "99999999"]):
        res = gputui(argv, env, tmp_path)
        assert res.returncode == 1 and res.stderr.count("\n") == 1 and "not known to Slurm" in res.stderr, (
            res.stderr
        )


def test_array_job(env, tmp_path) -> None:
    job = sbatch(
        'echo "task $SLURM_ARRAY_TASK_ID"; sleep 60',
        env,
        tmp_path,
        ["--array=0-1", "-o", "arr-%A_%a.out", "-J", "arr|x"],
    )
    try:
        wanted = {f"{job}_0", f"{job}_1"}

        def both_listed() -> dict | None:
            found = {j.job_id: j for j in list_jobs(env=env) if j.job_id in wanted}
            return found if len(found) == 2 else None

        listed = wait_for(both_listed, 20, what="both array tasks in squeue")
        assert listed[f"{job}_1"].stdout == str(
            tmp_path / f"arr-{job}_1.out"
        )  # our expansion of the raw pattern
        detail = job_detail(f"{job}_1", env=env)
        assert detail.job_id == f"{job}_1" and detail.array_task_id == 1 and detail.name == "arr|x"
        assert detail.stdout == listed[f"{job}_1"].stdout  # scontrol's expansion agrees with ours
        wait_for(lambda: Path(detail.stdout).exists() and "task 1" in Path(detail.stdout).read_text(), 20)
    finally:
        scancel(job, env)


# The signalled script is Python, not bash: a bash loop forks `sleep` all the time, and a signal that lands in
# a child between fork and exec (or before bash installs the trap) ends the script, which once made this
# test see COMPLETING on Slurm 26.05 in CI. Python's handler runs in the one process, and sleep resumes.
SIGNALLED_SCRIPT = f"""#!{sys.executable}
import signal, time
signal.signal(signal.SIGUSR1, lambda *_: print("got USR1", flush=True))
print("ready", flush=True)
for _ in range(600):
    time.sleep(0.2)
"""


def test_signal_and_cancel_confirmed(env, tmp_path) -> None:
    job = sbatch(SIGNALLED_SCRIPT, env, tmp_path)
    try:
        wait_job_state(job, {"RUNNING"}, 30, env)
        out = tmp_path / f"slurm-{job}.out"
        wait_for(lambda: out.exists() and "ready" in out.read_text(), 30, what="the handler to be installed")
        res = gputui(["cancel", job, "--signal", "usr1"], env, tmp_path)
        assert res.returncode == 0 and "SIGUSR1" in res.stdout, res.stderr
        wait_for(lambda: "got USR1" in out.read_text(), 15, what="the handler to run")
        detail = job_detail(job, env=env)
        assert detail.state == "RUNNING", (detail, out.read_text())
        result = cancel_job(job, env=env)
        assert result.confirmed and result.state == "CANCELLED"
    finally:
        scancel(job, env)


def test_user_command_reaches_the_program_byte_exact(env, tmp_path) -> None:
    tricky = ["a b", "it's", '"dq"', "$HOME", "x;y", "`id`", "$(id)", "back\\slash", "*", "", "é"]
    code = "import json, sys; print('ARGV=' + json.dumps(sys.argv[1:]))"
    job, _ = submit_with_run(["--", sys.executable, "-c", code, *tricky], env, tmp_path)
    wait_job_state(job, {"COMPLETED"}, 30, env)
    line = next(
        ln for ln in (tmp_path / f"slurm-{job}.out").read_text().splitlines() if ln.startswith("ARGV=")
    )
    assert json.loads(line[5:]) == tricky


def test_three_launch_patterns_with_real_ddp(env, slurm_cluster, tmp_path) -> None:
    script = str(DATA / "ddp_allreduce.py")
    jobs = {}
    for pattern in ("per-gpu", "torchrun", "per-node"):
        folder = tmp_path / pattern
        folder.mkdir()
        jobs[pattern], _ = submit_with_run(
            [
                "-N",
                "2",
                "--ntasks-per-node",
                "2",
                "--pattern",
                pattern,
                "--job-name",
                f"ddp-{pattern}",
                "--",
                sys.executable,
                script,
            ],
            env,
            folder,
        )
    for pattern, job in jobs.items():
        state = wait_job_state(job, {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}, 120, env)
        text = (tmp_path / pattern / f"slurm-{job}.out").read_text()
        assert state == "COMPLETED", text[-2000:]
        records = [r for ln in text.splitlines() if (rs := parse_prefixed(ln)) for r in rs]
        world = 2 if pattern == "per-node" else 4
        assert sorted(r["rank"] for r in records) == list(range(world)), text[-2000:]
        assert {r["value"] for r in records} == {float(sum(range(world)))}
        assert {r["host"] for r in records} == set(slurm_cluster.nodes[:2])
        assert {r["world_size"] for r in records} == {world}


# The job's program runs until both nodes' samplers wrote 4 ticks (4 GPUs each), at most 60 s: a fixed sleep
# left a loaded machine's samplers, which start beside it, too little time.
UNTIL_SAMPLED = (
    "import glob, os, time\n"
    "deadline = time.time() + 60\n"
    "def ticks(path):\n"
    "    with open(path) as f:\n"
    '        return f.read().count(\'"kind":"gpu"\') // 4\n'
    "while time.time() < deadline:\n"
    "    files = glob.glob(f\"gputui-{os.environ['SLURM_JOB_ID']}-*.jsonl\")\n"
    "    if len(files) == 2 and min(map(ticks, files)) >= 5:\n"
    "        break\n"
    "    time.sleep(0.5)\n"
)


def test_gpu_log_writes_one_valid_jsonl_file_per_node(env, slurm_cluster, tmp_path) -> None:
    """`gputui run --gpu-log`: one sampler per node (not one per task), records of that node only, every
    line a record, a clean stop (probe_stopped), and nothing of it in the job's own output."""
    nodes = slurm_cluster.nodes[:2]
    job, script = submit_with_run(
        [
            *("-N", "2", "--ntasks-per-node", "2", "--gpu-log", "--job-name", "gpulog"),
            *("--probe-backend", "sim", "--probe-interval", "0.5"),
            *("--", sys.executable, "-c", UNTIL_SAMPLED),
        ],
        env,
        tmp_path,
    )
    assert "--interval 0.5 --backend sim &" in script.read_text()
    state = wait_job_state(job, {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}, 60, env)
    job_out = (tmp_path / f"slurm-{job}.out").read_text()
    assert state == "COMPLETED", job_out
    assert "srun:" not in job_out and "CANCELLED" not in job_out, job_out
    assert sorted(p.name for p in tmp_path.glob("gputui-*.jsonl")) == [
        f"gputui-{job}-{n}.jsonl" for n in nodes
    ]
    for node in nodes:
        lines = (tmp_path / f"gputui-{job}-{node}.jsonl").read_bytes().splitlines()
        records = [r for line in lines for r in parse_line(line)]  # raises on any line that is not a record
        events = [r["event"] for r in records if r.kind == "event"]
        assert events[0] == "probe_started" and events[-1] == "probe_stopped", events
        assert events.count("probe_started") == 1, events  # one sampler per node
        gpus = [r for r in records if r.kind == "gpu"]
        assert {r["host"] for r in records if r.get("host")} == {node}
        assert len({r["gpu_id"] for r in gpus}) == 4 and len(gpus) >= 4 * 4, len(gpus)
        assert {r["source"] for r in gpus} == {"sim"} and {r["job"] for r in gpus} == {job}
        err = (tmp_path / f"gputui-{job}-{node}.err").read_text()
        assert "gputui: stopped (sigint)" in err, err


def test_requeued_job_is_attached_again(env, slurm_cluster, tmp_path) -> None:
    """A requeue (what a node failure does to a batch job by default) ends the probe step with the job's
    run; the attach says so, waits while the job is pending again, and attaches to its next run."""
    job = sbatch("sleep 120", env, tmp_path, ["-N", "2", "-t", "3", "--requeue"])
    try:
        wait_job_state(job, {"RUNNING"}, 30, env)
        col = Collector(job, env, pending_poll_s=0.3)
        wait_for(lambda: col.gpu_hosts() == set(slurm_cluster.nodes[:2]), 15, what="records from both nodes")
        run(["scontrol", "requeue", job], env)
        requeued = wait_for(
            lambda: [e for e in col.events("job_state") if "was requeued" in e["message"]], 30, what="requeue"
        )
        waiting = wait_for(
            lambda: [e for e in col.events("job_state") if "waiting for it to start" in e["message"]], 10
        )
        # Skip Slurm's 120 s requeue delay, though not the second the requeue revoked the job's credential
        # in (a run whose credential is from that same second is "Job credential revoked").
        wait_for(lambda: time.time() >= int(waiting[0].time) + 1.05, 3, what="the next second")
        run(["scontrol", "update", f"JobId={job}", "StartTime=now"], env)
        wait_for(lambda: col.gpu_hosts(since=requeued[0].time), 30, what="records from the job's next run")
        assert len(col.events("probe_started")) >= 3 and not col.events("node_lost")
        assert col.stop() == 0
    finally:
        scancel(job, env)
