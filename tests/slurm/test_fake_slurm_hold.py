"""Hold and release (:mod:`gputui.slurm.job_actions`, the ``H``/``U`` entries of the job-action table)
through the fake ``scontrol``: ``scontrol hold J`` / ``scontrol release J`` as argv lists, confirmed only
once ``scontrol show job`` says the job is held (or no longer held); a job that is not pending, not held,
unknown or someone else's never reaches the verb. The scontrol lines are the 22.05 capture with the state
and reason that ``scontrol hold`` gives (``JobState=PENDING Reason=JobHeldUser``)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from fake_slurm import FakeSlurm, job, response

from gputui.home.actions import ACTIONS, action
from gputui.slurm.commands import SlurmError
from gputui.slurm.job_actions import hold_job, release_job

PENDING = job("PENDING", "Priority")
HELD = job("PENDING", "JobHeldUser")
INVALID = "Invalid job id specified for job 3\nslurm_suspend error: Invalid job id specified\n"  # 22.05


@pytest.fixture
def slurm(tmp_path, monkeypatch) -> Iterator[FakeSlurm]:
    fake = FakeSlurm(tmp_path, monkeypatch)
    yield fake
    fake.close()


def test_hold_is_confirmed_once_slurm_says_the_job_is_held(slurm):
    slurm.set("scontrol show job", PENDING).set("scontrol hold", response(then={"scontrol show job": [HELD]}))
    result = hold_job("3")
    assert slurm.calls("scontrol hold") == [["hold", "3"]]
    assert result.confirmed and result.state == "PENDING"
    assert result.message == "held job 3 (JobHeldUser): it starts only once released"


def test_hold_that_slurm_took_but_did_not_apply_is_not_confirmed(slurm):
    slurm.set("scontrol show job", PENDING).set("scontrol hold", response())
    result = hold_job("3")
    assert not result.confirmed
    assert result.message == "asked Slurm to hold job 3, but it is PENDING, Priority"


def test_release_is_confirmed_once_the_hold_is_gone(slurm):
    slurm.set("scontrol show job", HELD)
    slurm.set("scontrol release", response(then={"scontrol show job": [PENDING]}))
    result = release_job("3")
    assert slurm.calls("scontrol release") == [["release", "3"]]
    assert result.confirmed and result.message == "released job 3 (PENDING, Priority)"


@pytest.mark.parametrize(
    ("verb", "answer", "error"),
    [
        ("hold", job(), "job 3 is RUNNING: only a pending job can be held"),
        ("hold", HELD, "job 3 is already held (JobHeldUser)"),
        ("release", PENDING, "job 3 is not held (Priority): nothing to release"),
        ("release", job(), "job 3 is RUNNING: only a pending job can be released"),
        ("hold", job("GONE"), "job 3 is not known to Slurm (nothing to hold)"),
    ],
)
def test_jobs_that_do_not_qualify_never_reach_the_verb(slurm, verb, answer, error):
    slurm.set("scontrol show job", answer).set(f"scontrol {verb}", response())
    with pytest.raises(SlurmError) as caught:
        action(verb).run("3", None)
    assert str(caught.value) == error
    assert slurm.calls(f"scontrol {verb}") == []


def test_someone_elses_job_is_never_held(slurm, monkeypatch):
    theirs = response(PENDING["stdout"].replace(f"({os.getuid()})", "(1234)"))
    slurm.set("scontrol show job", theirs).set("scontrol hold", response())
    monkeypatch.setattr(os, "getuid", lambda: 1000)  # root may hold any job: be someone else
    with pytest.raises(SlurmError, match=r"^job 3 belongs to .*, not to you$"):
        hold_job("3")
    assert slurm.calls("scontrol hold") == []


def test_scontrols_refusal_is_one_line(slurm):
    slurm.set("scontrol show job", PENDING).set("scontrol hold", response(stderr=INVALID, exit=1))
    with pytest.raises(SlurmError) as caught:
        hold_job("3")
    assert str(caught.value) == "scontrol hold: slurm_suspend error: Invalid job id specified"


@pytest.mark.parametrize("bad", ["3;rm -rf /", "-1", "", "3 4"])
def test_a_bad_job_id_runs_nothing(slurm, bad):
    with pytest.raises(ValueError):
        hold_job(bad)
    assert slurm.entries() == []


def test_the_table_names_each_key_once():
    keys = [a.key for a in ACTIONS]
    assert len(keys) == len(set(keys)) and {"c", "s", "H", "U"} <= set(keys)
    assert action("hold").confirm and not action("release").confirm
