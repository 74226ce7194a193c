"""Slurm 26.05's ``SLUID=`` field is not part of the job name (issue 23.2).

``scontrol show job -o -d`` on 26.05.5 prints ``SLUID=s<13 base-32 characters>`` (the job's unique id)
between ``JobName=<name>`` and ``UserId=``. The lines in data/scontrol-26.05-sluid.txt were captured on the
26.05 test cluster (``ci/slurm-version-cluster up 26.05``): a held array task named ``arr|x``, and a
running 2-node GPU job named ``my job|x SLUID=sFAKEFAKEFAKE0 UserId=me(1)`` (a name that imitates the new
field and the next one) whose output path holds the name (``%x``)."""

from __future__ import annotations

from pathlib import Path

from fake_slurm import FakeSlurm, mine, replaced, response

from gputui.slurm.scontrol import job_detail, parse_scontrol_job

DATA = Path(__file__).parent / "data"
ARRAY_TASK, RUNNING = (mine(line) for line in (DATA / "scontrol-26.05-sluid.txt").read_text().splitlines())
LURE_NAME = "my job|x SLUID=sFAKEFAKEFAKE0 UserId=me(1)"


def test_array_task_name_ends_before_sluid() -> None:
    job = parse_scontrol_job(ARRAY_TASK)
    assert job.name == "arr|x"
    assert (job.job_id, job.array_task_id, job.state) == ("82_1", 1, "PENDING")
    assert job.stdout == "/tmp/h23cap/arr-82_1.out"


def test_a_name_imitating_sluid_and_user_stays_the_name() -> None:
    job = parse_scontrol_job(RUNNING)
    assert job.name == LURE_NAME
    assert job.stdout == job.stderr == f"/tmp/s5/out-{LURE_NAME}-81.out"
    assert (job.state, job.work_dir, job.batch_host) == ("RUNNING", "/tmp/h23cap", "snode1")
    assert job.gpus == {"snode1": [0, 1], "snode2": [0, 1]}
    assert job.tres_per_node == "gres/gpu:2"


def test_the_same_lines_without_sluid_read_as_on_older_slurm() -> None:
    """22.05-24.11 print no SLUID: a name ending in ``SLUID=`` and something not shaped like one keeps it
    (one shaped exactly like one, ``s`` and 13 base-32 capitals, reads as 26.05's field: docs/slurm.md)."""
    older = replaced(RUNNING, (" SLUID=sAF5M8BJ3QVR00 ", " "))
    assert parse_scontrol_job(older).name == LURE_NAME
    for name in ("my job|x SLUID=fake", "SLUID=sAF5M8BJ3QVR0", "a SLUID=sAF5M8BJ3QVR00x"):
        job = parse_scontrol_job(older.replace(LURE_NAME, name))
        assert (job.name, job.stdout) == (name, f"/tmp/s5/out-{name}-81.out")


def test_job_detail_through_the_fake_scontrol(tmp_path, monkeypatch) -> None:
    slurm = FakeSlurm(tmp_path, monkeypatch)
    slurm.set("scontrol show job", response(RUNNING + "\n"))
    job = job_detail("81")
    assert (job.name, job.uid, job.state) == (LURE_NAME, parse_scontrol_job(RUNNING).uid, "RUNNING")
