""":meth:`Attacher.run` over a job's life with the fake ``srun``/``scontrol``: pending then running, a requeue
(attached again), the job ending (COMPLETING, then the summary), the probe step ending or failing to start
while the job runs, and the Slurm version gates. ``scontrol show job`` answers in the order the attach asks
(the step itself asks nothing), so each scenario is the list of the job's states."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_slurm import NODES, FakeSlurm, job, response

from gputui.slurm.attach import AttachError

STEP_CANCELLED = "slurmstepd: error: *** STEP 3.0 ON node1 CANCELLED AT 2026-11-21T06:06:47 ***\n"
TASKS_TERMINATED = "srun: error: node1: task 0: Terminated\nsrun: error: node2: task 1: Terminated\n"


@pytest.fixture
def slurm(tmp_path, monkeypatch) -> Iterator[FakeSlurm]:
    fake = FakeSlurm(tmp_path, monkeypatch)
    yield fake
    fake.close()


def test_a_pending_job_is_waited_for_then_attached(slurm):
    slurm.set("scontrol show job", job("PENDING", "JobHeldUser"), job("PENDING", "JobHeldUser"), job())
    slurm.set("srun", {"nodes": NODES})
    run = slurm.attach()
    run.wait(lambda: run.hosts() == {"node1", "node2"}, "records once the job runs")
    assert run.stop() == 0
    waiting, attached, *_ = run.events("job_state")
    assert waiting["message"] == "job 3 is PENDING (JobHeldUser): waiting for it to start"
    assert attached["message"].startswith("attached to job 3")
    keys = [e["key"] for e in slurm.entries() if "argv" in e]
    assert keys.count("scontrol show job") == 3 and keys[-1] == "srun", "the step starts once it runs"


def test_no_wait_reports_the_pending_job_and_starts_no_step(slurm):
    slurm.set("scontrol show job", job("PENDING", "Priority"))
    run = slurm.attach(wait_pending=False)
    assert run.finish() == 0
    assert [e["message"] for e in run.events("job_state")] == ["job 3 is PENDING (Priority)"]
    assert slurm.calls("srun") == []


def test_a_requeued_job_is_attached_again(slurm):
    states = [job(), job("PENDING", "BeginTime"), job("PENDING", "BeginTime"), job()]
    slurm.set("scontrol show job", *states)
    first = {
        "nodes": NODES,
        "end_after": 1.0,
        "end_stderr": STEP_CANCELLED + TASKS_TERMINATED,
        "end_exit": 143,
    }
    slurm.set("srun", first, {"nodes": NODES})
    run = slurm.attach()
    requeued = run.wait_event("job_state", "the requeue", state="PENDING")
    assert requeued["message"] == "job 3 was requeued (PENDING, BeginTime); its probe step ended with it"
    run.wait(lambda: run.hosts(after=requeued) == {"node1", "node2"}, "records from the next run")
    assert run.stop() == 0
    assert len(slurm.calls("srun")) == 2 and slurm.step_events() == ["end", "sigterm"]
    attached = [e for e in run.events("job_state") if e["message"].startswith("attached to job 3")]
    assert len(attached) == 2
    assert not run.events("node_lost"), "the tasks ended with the step, not with their nodes"


def test_the_job_ending_ends_the_attach_with_a_summary(slurm):
    done = job("COMPLETED")
    slurm.set("scontrol show job", job(), job("COMPLETING"), job("COMPLETING"), done)
    # end_after counts from the fake srun's start: 5 s leaves both real probes time to import and sample
    slurm.set("srun", {"nodes": NODES, "end_after": 5, "end_stderr": STEP_CANCELLED + TASKS_TERMINATED})
    run = slurm.attach()
    assert run.finish() == 0
    assert run.hosts() == {"node1", "node2"}
    final = run.events("job_state")[-1]
    assert final["state"] == "COMPLETED"
    assert final["message"].startswith("job 3 has ended: COMPLETED (exit 0:0), ran 00:00:00 on node[1-2]")
    assert len(slurm.calls("scontrol show job")) == 4  # waited while COMPLETING
    assert not run.events("node_lost")


def test_a_probe_step_ending_while_the_job_runs_returns_1(slurm):
    slurm.set("scontrol show job", job())
    slurm.set("srun", {"nodes": NODES, "end_after": 5, "end_exit": 2})
    run = slurm.attach()
    assert run.finish() == 1
    final = run.events("job_state")[-1]
    assert final["message"] == "the probe step ended (srun exit 2) but job 3 is still RUNNING"


def test_a_probe_step_that_cannot_start_raises_srun_s_own_message(slurm):
    slurm.set("scontrol show job", job())
    why = "srun: error: Unable to create step for job 3: Requested node configuration is not available"
    slurm.set("srun", {"stderr": f"{why}\n", "exit": 1})
    run = slurm.attach()
    result = run.finish()
    assert isinstance(result, AttachError) and str(result) == f"the probe step did not start: {why}"


@pytest.mark.parametrize(
    ("version", "outcome"),
    [
        ("slurm 20.02.7\n", "Slurm 20.02.7 has no 'srun --overlap' (added in 20.11)"),
        ("slurm 21.08.8\n", "Slurm 21.08.8: overlap steps get no GPUs before 22.05; GPU data may be missing"),
    ],
    ids=["20.02", "21.08"],
)
def test_the_slurm_version_gates_the_attach(slurm, version, outcome):
    slurm.set("srun --version", response(version))
    slurm.set("scontrol show job", job())
    slurm.set("srun", {"nodes": NODES})
    run = slurm.attach()
    if version.startswith("slurm 20"):
        result = run.finish()
        assert isinstance(result, AttachError) and str(result).startswith(outcome)
        assert slurm.calls("srun") == [] and slurm.calls("scontrol show job") == []
        return
    warning = run.wait_event("warning", "the version warning")
    assert warning["message"] == outcome
    run.wait(lambda: run.hosts() == {"node1", "node2"}, "records from both nodes")
    assert run.stop() == 0
