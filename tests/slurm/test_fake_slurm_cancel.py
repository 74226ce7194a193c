"""``gputui cancel`` through the fake ``scontrol``/``scancel``: a cancel is confirmed only once Slurm says
the job left the active states, a signal goes to every step and the batch shell (``--full``), and jobs
that are unknown, ended or someone else's are never passed to scancel. ``scancel -v`` prints what the
22.05 binary's format strings say ("Terminating job 3", "Signal 10 to job 3")."""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from attach_helpers import gputui as run_gputui
from fake_slurm import DATA, FakeSlurm, job, mine, response

from gputui.cli import main as cli_main
from gputui.slurm import cancel as cancel_module
from gputui.slurm.cancel import cancel_job
from gputui.slurm.commands import SlurmError

TERMINATING = "scancel: Terminating job 3\n"
SIGNAL_USR1 = "scancel: Signal 10 to job 3\n"
COMPLETED_914 = (DATA / "scontrol-22.05-job-completed.txt").read_text()


@pytest.fixture
def slurm(tmp_path, monkeypatch) -> Iterator[FakeSlurm]:
    fake = FakeSlurm(tmp_path, monkeypatch).set("scontrol show job", job())
    yield fake
    fake.close()


def gputui(*args: str) -> subprocess.CompletedProcess[str]:
    """The gputui CLI in a subprocess, with this test's PATH (the fakes first)."""
    return run_gputui(list(args), os.environ, Path.cwd())


def test_cancel_is_confirmed_once_the_job_has_left_completing(slurm):
    ending = [job("COMPLETING"), job("COMPLETING"), job("CANCELLED")]
    slurm.set("scancel", response(stderr=TERMINATING, then={"scontrol show job": ending}))
    res = gputui("cancel", "3")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "cancelled job 3 (state CANCELLED)\n"
    assert slurm.calls("scancel") == [["-v", "3"]]  # no --signal: a real cancel
    assert len(slurm.calls("scontrol show job")) == 5  # the table's check, before, then until CANCELLED


def test_cancel_of_a_job_that_keeps_running_is_not_confirmed(slurm, monkeypatch, capsys):
    slurm.set("scancel", response(stderr=TERMINATING))  # Slurm took it, but the job still runs
    result = cancel_job("3", timeout=0.5)
    assert not result.confirmed and result.state == "RUNNING"
    assert result.message == "asked Slurm to cancel job 3, but after 0.5 s it is still RUNNING"
    monkeypatch.setattr(cancel_module, "cancel_job", functools.partial(cancel_job, timeout=0.5))
    assert cli_main(["cancel", "3"]) == 1
    assert capsys.readouterr().out == f"{result.message}\n"


def test_a_job_that_vanishes_is_confirmed_cancelled(slurm):
    slurm.set("scancel", response(stderr=TERMINATING, then={"scontrol show job": [job("GONE")]}))
    result = cancel_job("3", timeout=5)
    assert result.confirmed and result.state == "GONE"


def test_signal_goes_to_all_steps_and_the_batch_shell(slurm):
    slurm.set("scancel", response(stderr=SIGNAL_USR1))
    res = gputui("cancel", "3", "--signal", "usr1")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "sent SIGUSR1 to job 3 (all steps and the batch shell); job is RUNNING\n"
    assert slurm.calls("scancel") == [["-v", "--full", "--signal=USR1", "3"]]


def test_signal_to_a_job_that_ended_meanwhile_is_not_confirmed(slurm):
    slurm.set("scontrol show job", job(), job("GONE"))
    slurm.set("scancel", response(stderr=SIGNAL_USR1))
    result = cancel_job("3", signal="SIGUSR1")
    assert not result.confirmed and result.state == "UNKNOWN"
    assert slurm.calls("scancel") == [["-v", "--full", "--signal=USR1", "3"]]


def test_scancel_errors_are_one_line(slurm):
    why = "scancel: error: Kill job error on job id 3: Invalid job id specified"
    slurm.set("scancel", response(stderr=f"{TERMINATING}{why}\n", exit=1))
    with pytest.raises(SlurmError) as exc:
        cancel_job("3")
    assert str(exc.value) == "scancel: error: Kill job error on job id 3: Invalid job id specified"


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (job("GONE"), "job 3 is not known to Slurm (nothing to cancel)"),
        (job("COMPLETED"), "job 3 has already ended (COMPLETED)"),
        (response(mine(COMPLETED_914)), "job 914 has already ended (COMPLETED)"),
        (response(job()["stdout"].replace(f"({os.getuid()})", "(1234)")), "belongs to"),
    ],
    ids=["unknown", "ended", "ended-captured", "someone-else-s"],
)
def test_jobs_that_cannot_be_cancelled_never_reach_scancel(slurm, monkeypatch, capsys, answer, error):
    job_id = "914" if "914" in error else "3"
    slurm.set("scontrol show job", answer)
    slurm.set("scancel", response(stderr=TERMINATING))
    if error == "belongs to":
        monkeypatch.setattr(os, "getuid", lambda: 1000)  # root may cancel any job: be someone else
    assert cli_main(["cancel", job_id]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gputui: error: ") and error in err and err.count("\n") == 1
    assert slurm.calls("scancel") == []
