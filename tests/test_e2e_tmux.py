"""End-to-end runs of the real CLI in a terminal (tmux send-keys / capture-pane), as a person sees them."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from slurm_helpers import wait_for

from gputui.stream.io import ReadStats, read_file

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None and os.environ.get("CI") != "true", reason="tmux is not installed"
)
GPUTUI = shlex.join([sys.executable, "-m", "gputui"])


class Tmux:
    def __init__(self, name: str) -> None:
        self.name = name

    def start(self, command: str) -> None:
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", self.name, "-x", "120", "-y", "30", command],
            check=True,
            timeout=10,
        )

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True, timeout=10)

    def screen(self) -> str:
        out = subprocess.run(
            ["tmux", "capture-pane", "-p", "-J", "-t", self.name], capture_output=True, text=True, timeout=10
        )
        return out.stdout

    def kill(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True, timeout=10)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    session = Tmux(f"gputui-test-{os.getpid()}-{tmp_path.name}")
    yield session
    session.kill()


def records_in(path: Path) -> list:
    if not path.exists():
        return []
    return list(read_file(path, ReadStats()))


def test_help_in_a_terminal(tmux: Tmux) -> None:
    tmux.start(f"{GPUTUI} --help; sleep 30")
    screen = wait_for(
        lambda: "records and their schema" in (s := tmux.screen()) and s, 15, what="the help text"
    )
    assert "gputui attach 123456" in screen and "Traceback" not in screen


def test_headless_log_stops_on_ctrl_c_with_a_summary_and_a_valid_file(tmux: Tmux, tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    tmux.start(f"{GPUTUI} --log {shlex.quote(str(log))} --backend sim --interval 0.2; echo EXIT=$?; sleep 30")
    wait_for(lambda: sum(r.kind == "host" for r in records_in(log)) >= 3, 20, what="three host samples")
    tmux.keys("C-c")
    screen = wait_for(lambda: "EXIT=" in (s := tmux.screen()) and s, 15, what="the command to exit")
    assert "EXIT=0" in screen and "stopped" in screen and "util mean" in screen
    assert "Traceback" not in screen
    stats = ReadStats()
    recs = list(read_file(log, stats))
    assert stats.skipped == 0
    assert recs[0]["event"] == "probe_started" and recs[-1]["event"] == "probe_stopped"
    assert all(r["simulated"] for r in recs if r.kind == "gpu")


def test_headless_log_survives_the_terminal_closing(tmux: Tmux, tmp_path: Path) -> None:
    """SIGHUP (the SSH session or terminal goes away) must not stop the recording."""
    log = tmp_path / "hup.jsonl"
    tmux.start(f"{GPUTUI} --log {shlex.quote(str(log))} --backend sim --interval 0.2")
    started = wait_for(lambda: [r for r in records_in(log) if r.kind == "event"], 20, what="probe_started")
    pid = started[0]["pid"]
    try:
        tmux.kill()  # the pane's process group gets SIGHUP
        before = len(records_in(log))
        wait_for(
            lambda: len(records_in(log)) > before + 10, 20, what="samples written after the terminal closed"
        )
        os.kill(pid, signal.SIGTERM)
        wait_for(
            lambda: records_in(log)[-1].get("event") == "probe_stopped",
            20,
            what="probe_stopped after SIGTERM",
        )
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)  # a recorder that outlives its terminal must not outlive the test


def test_local_scale_sweep_stops_on_ctrl_c(tmux: Tmux, tmp_path: Path) -> None:
    """Ctrl-C during a local sweep stops it (not just the current size), with one line and status 130."""
    slow = [sys.executable, "-m", "gputui.trainers.torch_ddp", "--epochs", "200", "--model", "resnet18"]
    sweep = shlex.join([*shlex.split(GPUTUI), "scale", "--gpus", "1,2", "--local", "--cpu", "--", *slow])
    setup = f"cd {shlex.quote(str(tmp_path))} && export GPUTUI_STATE_DIR=state OMP_NUM_THREADS=1"
    tmux.start(f"{setup} && {sweep}; echo EXIT=$?; sleep 30")
    wait_for(lambda: "running 1 rank" in tmux.screen(), 60, what="the sweep to start its first size")
    out = tmp_path / "state" / "local"
    wait_for(lambda: any(p.stat().st_size for p in out.glob("scale-*-1/rank-0.out")), 60, what="training")
    tmux.keys("C-c")
    screen = wait_for(lambda: "EXIT=" in (s := tmux.screen()) and s, 60, what="the sweep to stop")
    assert "EXIT=130" in screen and "gputui: sweep stopped" in screen
    assert "running 2 ranks" not in screen and "Traceback" not in screen
