"""A slow or broken Slurm through the fake commands: ``gputui jobs`` says so (exit 1, one line), never
"no jobs"; the jobs screen's poller is stopped at once with a hung squeue; and in a real terminal ``q``
(or Ctrl-C) returns to the shell promptly while squeue hangs, leaving no squeue behind.

The fake ``squeue`` (``slow``: it answers after N seconds, in its own process; ``garbage``: an error page,
a header, random text) is the one on PATH, so the real ``run_slurm`` runs it, times it out and kills it.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import psutil
import pytest
from attach_helpers import gputui as run_gputui
from fake_slurm import DATA, GARBAGE, FakeSlurm, garbage, job, response, slow
from slurm_helpers import wait_for

import gputui.commands.jobs as jobs_command
from gputui.cli import main as cli_main
from gputui.home.poller import SlurmPoller

SQUEUE_OUT = (DATA / "squeue-22.05-O.txt").read_text()
SQUEUE_IDS = ["26", "25_0", "25_1", "24", "22"]  # the capture: a held job, array 25, two running jobs


@pytest.fixture
def slurm(tmp_path, monkeypatch):
    fake = FakeSlurm(tmp_path, monkeypatch)
    yield fake
    fake.close()


def gputui(*args: str):
    return run_gputui(list(args), os.environ, Path.cwd())


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# --------------------------------------------------------------------------- gputui jobs


@pytest.mark.parametrize("kind", ["html", "header", "random"])
def test_gputui_jobs_fails_on_garbage(slurm, kind: str) -> None:
    slurm.set("squeue", garbage(kind))
    res = gputui("jobs")
    assert res.returncode == 1 and res.stdout == ""
    (line,) = res.stderr.splitlines()
    assert line.startswith("gputui: error: squeue output unreadable (no job row in ")
    assert "\x1b" not in line  # the garbage's escape sequences are quoted, not sent to the terminal
    res = gputui("jobs", "--json")
    assert res.returncode == 1 and res.stdout == "" and len(res.stderr.splitlines()) == 1


def test_gputui_jobs_fails_when_squeue_fails(slurm) -> None:
    why = "squeue: error: Unable to contact slurm controller (connect failure)"
    slurm.set("squeue", response(stderr=f"{why}\n", exit=1))
    res = gputui("jobs")
    assert (res.returncode, res.stdout, res.stderr) == (1, "", f"gputui: error: {why}\n")


def test_gputui_jobs_times_out(slurm, monkeypatch, capsys) -> None:
    """A hung squeue: killed at the timeout (1 s here), one line, exit 1."""
    slurm.set("squeue", slow(60, response(SQUEUE_OUT)))
    monkeypatch.setattr(jobs_command, "TIMEOUT_S", 1.0)
    assert cli_main(["jobs"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "gputui: error: squeue did not answer within 1 s (is slurmctld reachable?)\n"
    (entry,) = [e for e in slurm.entries() if e.get("key") == "squeue"]
    assert not alive(entry["pid"])


def test_gputui_jobs_empty_answer_is_no_jobs(slurm) -> None:
    slurm.set("squeue", response(""))
    res = gputui("jobs")
    assert (res.returncode, res.stdout, res.stderr) == (0, "no jobs (squeue --me lists none)\n", "")


def test_gputui_jobs_lists_the_good_rows_and_counts_the_others(slurm) -> None:
    slurm.set("squeue", response(GARBAGE["header"] + SQUEUE_OUT + "cut\x1fshort\n"))
    res = gputui("jobs", "--json")
    assert res.returncode == 0
    assert res.stderr == "gputui: warning: squeue: 2 of 7 rows unreadable, skipped (the others are shown)\n"
    assert sorted(j["job_id"] for j in json.loads(res.stdout)) == sorted(SQUEUE_IDS)


# --------------------------------------------------------------------------- the poller


def test_stopping_the_poller_kills_a_hung_squeue(slurm) -> None:
    slurm.set("squeue", slow(60, response(SQUEUE_OUT)))
    poller = SlurmPoller(user="root")
    snaps = []
    thread = threading.Thread(target=lambda: snaps.append(poller.poll(quick=True)), daemon=True)
    thread.start()
    wait_for(lambda: slurm.calls("squeue"), 10, interval=0.05, what="squeue to start")
    (entry,) = [e for e in slurm.entries() if e.get("key") == "squeue"]
    poller.stop()
    thread.join(5)  # not squeue's 60 s, nor the poller's 10 s timeout
    assert not thread.is_alive()
    assert not alive(entry["pid"])
    assert snaps[0].errors == ["squeue stopped: gputui is quitting; no list of jobs yet"]
    poller.poll(force=True)  # stopped for good: no Slurm command runs any more
    assert [e["key"] for e in slurm.entries() if "argv" in e] == ["squeue"]


# --------------------------------------------------------------------------- q in a real terminal


@pytest.mark.skipif(shutil.which("tmux") is None and os.environ.get("CI") != "true", reason="no tmux")
@pytest.mark.timeout(120)
@pytest.mark.parametrize("key", ["q", "C-c"])
def test_quitting_returns_to_the_shell_at_once_while_squeue_hangs(slurm, tmp_path: Path, key: str) -> None:
    from test_e2e_dashboard import Terminal, shell
    from test_e2e_tmux import GPUTUI

    slurm.set("squeue", response(SQUEUE_OUT), response(SQUEUE_OUT), slow(60, response(SQUEUE_OUT)))
    slurm.set("scontrol show config", response("ClusterName = fake\nSLURM_VERSION = 22.05.8\n"))
    slurm.set("scontrol show job", job("RUNNING"))
    slurm.set("sacct", response(stderr=(DATA / "sacct-22.05-disabled.txt").read_text(), exit=1))
    slurm.set("sinfo", response((DATA / "sinfo-22.05-busy.txt").read_text()))
    env = {name: os.environ[name] for name in ("PATH", "GPUTUI_FAKE_SLURM", "SLURM_CONF")}
    env.update(GPUTUI_STATE_DIR=str(tmp_path / "state"), GPUTUI_CONFIG=str(tmp_path / "none.toml"))
    term = Terminal(f"gputui-slow-{os.getpid()}-{tmp_path.name}")
    try:
        term.start(shell(f"unset GPUTUI_CLUSTER GPUTUI_REFRESH; {GPUTUI} --refresh 1"), env=env, cwd=tmp_path)
        term.wait(lambda s: "my jobs: 1 pending, 4 running" in s, 60, "the first list")
        wait_for(lambda: len(slurm.calls("squeue")) >= 3, 30, interval=0.05, what="the hanging squeue")
        hung = [e for e in slurm.entries() if e.get("key") == "squeue"][2]["pid"]
        assert alive(hung)
        term.keys(key)
        began = time.monotonic()
        screen = wait_for(lambda: "EXIT=" in (s := term.screen()) and s, 30, interval=0.05, what="the prompt")
        took = time.monotonic() - began
        assert took < 5, f"the shell came back {took:.1f} s after {key}"  # was 10.4 s: the poller's timeout
        assert "EXIT=0" in screen and "Traceback" not in screen
        wait_for(lambda: not alive(hung), 5, interval=0.05, what="the hung squeue to be gone")
    finally:
        term.kill()
