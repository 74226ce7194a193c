"""slurmctld's RPC rate limiter (23.02+, issue 23.3) through the fake Slurm commands: once it refuses a
call ("Rate limit exceeded, please retry momentarily", Slurm's ``slurm_strerror(1804)``, printed as each
command prints a load error), the jobs screen's poller makes no call for 10 s, twice as long while it
repeats, and starts again at the next answer; the last table stays meanwhile."""

from __future__ import annotations

import subprocess

import pytest
from fake_slurm import DATA, FakeSlurm, response

from gputui.home.budget import BACKOFF_FIRST_S
from gputui.home.poller import SlurmPoller

SQUEUE_OUT = (DATA / "squeue-22.05-O.txt").read_text()
CONFIG_22_05 = (DATA.parent.parent / "home" / "data" / "scontrol-22.05-config.txt").read_text()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_rate_limited_calls_pause_the_poller_and_it_doubles_while_it_repeats(tmp_path, monkeypatch) -> None:
    slurm = FakeSlurm(tmp_path, monkeypatch)
    slurm.set("squeue", response(SQUEUE_OUT))
    slurm.set("scontrol show config", response(CONFIG_22_05))
    slurm.set("sacct", response(stderr="Slurm accounting storage is disabled\n", exit=1))
    slurm.set("sinfo", response((DATA / "sinfo-22.05-idle.txt").read_text()))
    slurm.set("scontrol show job", response(""))
    clock = Clock()
    poller = SlurmPoller(user="root", clock=clock)
    first = poller.poll(quick=True)
    assert first.errors == [] and first.jobs
    slurm.limit_rpcs(0)  # slurmctld answers every call with "Rate limit exceeded" from now on
    clock.now += 5
    snap = poller.poll()
    limited = [e for e in slurm.entries() if e.get("limited")]
    assert len(limited) == 1, limited  # the first refused call pauses every other one
    assert any("slurmctld asked gputui to slow down" in e and "next call in 10 s" in e for e in snap.errors)
    assert [j.job_id for j in snap.jobs] == [j.job_id for j in first.jobs]  # the last table stays
    calls = len(slurm.entries())
    for _ in range(3):  # paused: 10 s without any call, whatever the refresh
        clock.now += 3
        assert poller.poll(force=True).errors[0].startswith("slurmctld asked gputui to slow down")
    assert len(slurm.entries()) == calls
    clock.now += 2
    poller.poll()
    assert len([e for e in slurm.entries() if e.get("limited")]) == 2
    assert poller.budget.paused() == pytest.approx(2 * BACKOFF_FIRST_S)  # refused again: twice as long
    slurm.limit_rpcs(100)
    clock.now += 2 * BACKOFF_FIRST_S
    assert poller.poll().errors == [] and poller.budget.backoff_s == 0  # an answer ends the back-off


def test_the_fake_rate_limiter_answers_like_slurm(tmp_path, monkeypatch) -> None:
    slurm = FakeSlurm(tmp_path, monkeypatch).set("squeue", response(SQUEUE_OUT)).limit_rpcs(1)
    ok = subprocess.run(["squeue", "--me"], capture_output=True, text=True)
    refused = subprocess.run(["squeue", "--me"], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout == SQUEUE_OUT
    assert refused.returncode == 1
    assert refused.stderr == "slurm_load_jobs error: Rate limit exceeded, please retry momentarily\n"
    assert [bool(e.get("limited")) for e in slurm.entries()] == [False, True]
