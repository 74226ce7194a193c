"""``gputui jobs --all`` lists ended jobs from sacct as the jobs screen does (issue 23.2): one squeue
``-t all`` call, one sacct call of the last ``[jobs] ended_hours``, merged by the screen's one rule
(:func:`gputui.slurm.sacct.merge_ended`: squeue's row wins for the same id). Through the fake Slurm
commands (the 22.05 squeue capture, a synthetic sacct answer, 22.05's real "accounting disabled")."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from attach_helpers import gputui
from fake_slurm import DATA, FakeSlurm, response

from gputui.home.poller import current_user
from gputui.slurm import sacct

SQUEUE_OUT = (DATA / "squeue-22.05-O.txt").read_text()
SQUEUE_IDS = ["26", "25_0", "25_1", "24", "22"]
SACCT_ENDED = (DATA.parent.parent / "home" / "data" / "sacct-ended-synthetic.txt").read_text()
DISABLED = (DATA / "sacct-22.05-disabled.txt").read_text()


@pytest.fixture
def slurm(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUTUI_CONFIG", str(tmp_path / "config.toml"))
    fake = FakeSlurm(tmp_path, monkeypatch).set("squeue", response(SQUEUE_OUT))
    yield fake
    fake.close()


def sacct_calls(slurm: FakeSlurm) -> list[list[str]]:
    """sacct's argv without the per-process field separator (``--delimiter=\\x1f`` + random hex)."""
    return [[a for a in argv if not a.startswith("--delimiter=")] for argv in slurm.calls("sacct")]


def expected(hours: float) -> list[list[str]]:
    return [[a for a in sacct.ended_argv(current_user(), hours)[1:] if not a.startswith("--delimiter=")]]


def run(*args: str):
    return gputui(["jobs", *args], os.environ, Path.cwd())


def test_all_lists_sacct_s_ended_jobs_after_squeue_s(slurm) -> None:
    slurm.set("sacct", response(SACCT_ENDED))
    res = run("--all", "--json")
    assert res.returncode == 0, res.stderr
    ids = [j["job_id"] for j in json.loads(res.stdout)]
    assert sorted(ids[:5]) == sorted(SQUEUE_IDS) and ids[5:] == ["240", "241", "253_0", "242"]  # no step
    assert slurm.calls("squeue")[0][:5] == ["--me", "--array", "-h", "-t", "all"]
    assert sacct_calls(slurm) == expected(24)
    assert "FAILED" in run("--all").stdout


def test_all_with_ended_hours_from_the_settings(slurm, tmp_path) -> None:
    (tmp_path / "config.toml").write_text("[jobs]\nended_hours = 2\n")
    slurm.set("sacct", response(SACCT_ENDED))
    assert run("--all").returncode == 0
    assert sacct_calls(slurm) == expected(2)


def test_all_without_accounting_is_one_warning_and_squeue_s_jobs(slurm) -> None:
    slurm.set("sacct", response(stderr=DISABLED, exit=1))
    res = run("--all", "--json")
    assert res.returncode == 0
    assert sorted(j["job_id"] for j in json.loads(res.stdout)) == sorted(SQUEUE_IDS)
    why = "Slurm accounting is disabled: ended jobs are listed only while Slurm remembers them"
    assert res.stderr == f"gputui: warning: {why}\n"


def test_without_all_no_sacct(slurm) -> None:
    assert run().returncode == 0 and slurm.calls("sacct") == []
