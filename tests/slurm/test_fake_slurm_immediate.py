"""The probe step starts with ``srun --immediate`` (issue 23.3): a step that cannot start fails at once
with srun's one-line reason instead of blocking srun (60-309 s per attempt on real clusters). The fake
``srun`` (tests/fakes/slurm/step.py) waits on a busy step unless ``--immediate`` is given, and then
answers with 22.05's line (measured: ``srun --immediate=3`` on a job whose CPUs a step holds)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_slurm import NODES, FakeSlurm, job

from gputui.slurm.attach import PROBE_IMMEDIATE_S, AttachError


@pytest.fixture
def slurm(tmp_path, monkeypatch) -> Iterator[FakeSlurm]:
    fake = FakeSlurm(tmp_path, monkeypatch).set("scontrol show job", job())
    yield fake
    fake.close()


def test_a_busy_probe_step_fails_at_once_with_srun_s_reason(slurm) -> None:
    slurm.set("srun", {"nodes": NODES, "busy": True, "end_after": 60})
    run = slurm.attach()
    result = run.finish(timeout=20)  # without --immediate the fake srun waits 60 s, as the real one retries
    why = "srun: error: Unable to create step for job 3: Requested nodes are busy"
    assert isinstance(result, AttachError) and str(result) == f"the probe step did not start: {why}"
    (argv,) = slurm.calls("srun")
    assert f"--immediate={PROBE_IMMEDIATE_S}" in argv and "--overlap" in argv
    assert slurm.step_events() == ["immediate"]


def test_a_probe_step_that_can_start_streams_as_before(slurm) -> None:
    slurm.set("srun", {"nodes": NODES})
    run = slurm.attach()
    run.wait(lambda: run.hosts() == {"node1", "node2"}, "records from both nodes")
    assert run.stop() == 0
