"""End-to-end runs of the Textual dashboard through the real CLI in a 120x36 tmux terminal, as a person
sees it: ``gputui demo`` (a real local DDP run on simulated GPUs), ``gputui replay FILE`` (the time
cursor) and ``gputui attach JOBID`` on a 2-node job of the local Slurm cluster.

The app draws to the terminal, so its output is never redirected; everything is read back with
``tmux capture-pane``. Every wait polls with a deadline and shows the screen when it runs out.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TypeVar

import psutil
import pytest
from slurm_helpers import job_state, sbatch, scancel, step_ids, wait_for, wait_job_state
from test_e2e_tmux import GPUTUI, Tmux

from gputui.stream.io import RecordWriter, parse_prefixed
from gputui.stream.records import gpu_sample, host_sample, metric

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None and os.environ.get("CI") != "true", reason="tmux is not installed"
)
T = TypeVar("T")
COLUMNS, ROWS = 120, 36


class Terminal(Tmux):
    """A tmux session of COLUMNS x ROWS running one shell command, with its own environment and cwd
    (a tmux server that is already running would otherwise hand its own environment to the command).

    COLUMNS and LINES are unset in the pane: pytest loads GNU readline (through pdb), which exports
    COLUMNS=80 LINES=24 into the process environment; a tmux server started from here passes them on, and
    Textual (shutil.get_terminal_size) would then draw 80x24 in the 120x36 pane."""

    def start(self, command: str, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> None:
        argv = ["tmux", "new-session", "-d", "-s", self.name, "-x", str(COLUMNS), "-y", str(ROWS)]
        if cwd is not None:
            argv += ["-c", str(cwd)]
        for key, value in (env or {}).items():
            argv += ["-e", f"{key}={value}"]
        subprocess.run([*argv, f"unset COLUMNS LINES; {command}"], check=True, timeout=10)

    def pane_pid(self) -> int:
        out = subprocess.run(
            ["tmux", "display-message", "-p", "-t", self.name, "#{pane_pid}"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return int(out.stdout.strip())

    def wait(self, predicate: Callable[[str], T], timeout: float, what: str) -> T:
        """Poll the screen until ``predicate(screen)`` is truthy and return that; on timeout fail with
        the last screen in the message."""
        last = [""]

        def check() -> T:
            last[0] = self.screen()
            return predicate(last[0])

        try:
            return wait_for(check, timeout, interval=0.25, what=what)
        except TimeoutError as exc:
            raise AssertionError(f"{exc}; the screen was:\n{last[0]}") from None

    def wait_exit(self, timeout: float = 30) -> str:
        """Wait for the ``echo EXIT=$?`` after the command; return the screen."""
        return self.wait(lambda s: re.search(r"^EXIT=\d+", s, re.M) and s, timeout, "the command to exit")


@pytest.fixture
def term(tmp_path: Path) -> Iterator[Terminal]:
    session = Terminal(f"gputui-dash-{os.getpid()}-{tmp_path.name}")
    yield session
    session.kill()


def shell(command: str) -> str:
    """``command``, then its exit status on a line of its own, then a pause that keeps the pane open."""
    return f"{command}; echo EXIT=$?; sleep 120"


# --------------------------------------------------------------------------- reading the screen


def gpu_rows(screen: str, host: str) -> list[int]:
    """GPU indices of the GPU pane's rows of ``host`` (the pane shows the first 10 characters)."""
    label = re.escape(host[:10].ljust(10))
    return [int(m.group(1)) for m in re.finditer(rf"^│ {label} +(\d+)\S* ", screen, re.M)]


def training_loss(screen: str) -> str | None:
    """The latest loss of the training pane: ``loss X`` of an epoch run's status line (``images/s R  loss
    X  accuracy A``), or the last of ``loss FIRST → LAST`` of a step run's."""
    for line in screen.splitlines():
        _gpus, sep, right = line.partition("││")  # the training pane is right of the GPU pane
        match = sep and re.match(r" (?:images/s \S+ +)?loss (\S+)(?: → (\S+))?", right)
        if match:
            return match.group(2) or match.group(1)
    return None


def header(screen: str) -> str:
    return screen.splitlines()[0] if screen else ""


def cursor(screen: str) -> tuple[int, int] | None:
    """The replay cursor of the header, ``⏸ 00:09:36/00:10:00``, as (position s, end s)."""
    match = re.search(r"[⏸▶] (\d+):(\d\d):(\d\d)/(\d+):(\d\d):(\d\d)", header(screen))
    if not match:
        return None
    h, m, s, eh, em, es = map(int, match.groups())
    return h * 3600 + m * 60 + s, eh * 3600 + em * 60 + es


def fmt(value: float) -> str:
    """A value as the dashboard prints it (gputui.tui.format.number for values below 1000)."""
    return f"{value:.4g}"


# --------------------------------------------------------------------------- demo


def trainer_pids(root: int) -> set[int]:
    """Processes under ``root`` running the demo's trainer."""
    try:
        children = psutil.Process(root).children(recursive=True)
    except psutil.NoSuchProcess:
        return set()
    found = set()
    for child in children:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            if "gputui.trainers.torch_ddp" in child.cmdline():
                found.add(child.pid)
    return found


def alive(pids: set[int]) -> set[int]:
    out = set()
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.add(pid)
    return out


@pytest.mark.timeout(240)
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the demo needs PyTorch")
def test_demo_shows_both_simulated_gpus_and_a_moving_loss_then_q_ends_the_ranks(
    term: Terminal, tmp_path: Path
) -> None:
    env = {"GPUTUI_STATE_DIR": str(tmp_path / "state")}
    term.start(shell(f"{GPUTUI} demo"), env=env, cwd=tmp_path)
    host = socket.gethostname()

    screen = term.wait(lambda s: sorted(gpu_rows(s, host)) == [0, 1] and s, 60, "two simulated GPU rows")
    assert "SIMULATED" in header(screen) and "1 node × 2 GPU" in header(screen), header(screen)
    assert re.search(r"^│ +SIMULATED +GPUs 2 ", screen, re.M), screen  # the GPU pane's own label
    pids = term.wait(lambda s: trainer_pids(term.pane_pid()), 60, "the demo's trainer ranks")

    first = term.wait(training_loss, 120, "a loss in the training pane")
    second = term.wait(lambda s: (x := training_loss(s)) != first and x, 90, f"the loss to move from {first}")
    assert re.fullmatch(r"\d\S*", first) and re.fullmatch(r"\d\S*", second), (first, second)
    screen = term.screen()
    assert sorted(gpu_rows(screen, host)) == [0, 1], screen
    assert "RUNNING" in header(screen) and "Traceback" not in screen, screen
    pids |= trainer_pids(term.pane_pid())
    assert len(pids) == 2, f"expected 2 ranks, found {pids}"

    term.keys("q")
    screen = term.wait_exit(30)
    assert "EXIT=0" in screen and "Traceback" not in screen, screen
    wait_for(lambda: not alive(pids), 10, what=f"the demo's ranks {sorted(pids)} to end")
    pgrep = subprocess.run(
        ["pgrep", "-f", "gputui.trainers.torch_ddp"], capture_output=True, text=True, timeout=10
    )
    left = {int(p) for p in pgrep.stdout.split()} & pids
    assert not left, f"trainer processes left after q: {sorted(left)}"


# --------------------------------------------------------------------------- replay

T0 = 1_700_000_000.0
TICK_S, TICKS = 5.0, 121  # 10 minutes: 00:00:00 .. 00:10:00


def replay_loss(i: int) -> float:
    return 2.0 - 0.01 * i


def write_recording(path: Path) -> None:
    """1 node x 2 GPUs sampled every 5 s for 10 minutes, a loss record with every sample."""
    writer = RecordWriter(str(path))
    try:
        for i in range(TICKS):
            t = T0 + i * TICK_S
            for gpu in range(2):
                writer.write(
                    gpu_sample(
                        host="replaynode",
                        gpu_id=f"GPU-00000000-0000-0000-0000-00000000000{gpu}",
                        vendor="nvidia",
                        source="nvml",
                        time=t,
                        index=gpu,
                        simulated=False,
                        name="NVIDIA A100-SXM4-40GB",
                        util_gpu_pct=60 + 10 * gpu + i % 7,
                        mem_used_bytes=(10 + gpu) * 1024**3,
                        mem_total_bytes=40 * 1024**3,
                        temp_c=55 + gpu,
                        power_w=250.0 + gpu,
                    )
                )
            writer.write(host_sample(host="replaynode", time=t, cpu_pct=20.0, cpu_count=8))
            writer.write(metric("loss", replay_loss(i), step=i + 1, epoch=1, epoch_base=1, time=t))
    finally:
        writer.close()


def loss_at(position_s: int) -> str:
    return fmt(replay_loss(min(TICKS - 1, int(position_s // TICK_S))))


@pytest.mark.timeout(60)
def test_replay_cursor_moves_with_the_keys(term: Terminal, tmp_path: Path) -> None:
    record = tmp_path / "run.jsonl"
    write_recording(record)
    term.start(shell(f"{GPUTUI} replay run.jsonl"), cwd=tmp_path)

    screen = term.wait(lambda s: cursor(s) and s, 30, "the replay cursor in the header")
    assert "⏸ 00:10:00/00:10:00" in header(screen), header(screen)
    assert "replay run.jsonl" in header(screen) and "live" in header(screen), header(screen)
    screen = term.wait(lambda s: sorted(gpu_rows(s, "replaynode")) == [0, 1] and s, 10, "both GPU rows")
    assert "SIMULATED" not in screen, screen
    screen = term.wait(lambda s: training_loss(s) == loss_at(600) and s, 10, f"loss {loss_at(600)}")

    term.keys("Left")  # one key: a second could land after the cursor below was read
    screen = term.wait(lambda s: (c := cursor(s)) and c[0] < 600 and s, 10, "an earlier cursor")
    position, end = cursor(screen)
    assert end == 600 and 0 < position < 600, header(screen)
    assert "live" not in header(screen), header(screen)
    screen = term.wait(lambda s: cursor(s) == (position, 600) and training_loss(s) == loss_at(position) and s,
                       10, f"the loss at {position} s ({loss_at(position)})")  # fmt: skip

    term.keys("End")
    screen = term.wait(lambda s: cursor(s) == (600, 600) and s, 10, "the cursor back at the end")
    assert "⏸ 00:10:00/00:10:00" in header(screen) and "live" in header(screen), header(screen)
    term.wait(lambda s: training_loss(s) == loss_at(600), 10, f"loss {loss_at(600)} again")

    term.keys("q")
    screen = term.wait_exit(20)
    assert "EXIT=0" in screen and "Traceback" not in screen, screen


# --------------------------------------------------------------------------- attach (local Slurm)

TICKER = """\
import os, time
from gputui.stream.io import format_prefixed
from gputui.stream.records import metric
rank = int(os.environ.get("SLURM_PROCID", "0"))
for i in range(180):
    value = round(3.0 - 0.01 * i + 0.5 * rank, 4)
    print(format_prefixed(metric("loss", value, step=i + 1, rank=rank)), flush=True)
    time.sleep(1)
"""


@pytest.mark.slurm
@pytest.mark.timeout(120)
def test_attach_shows_both_nodes_and_the_loss_and_q_leaves_the_job_running(
    term: Terminal, slurm_cluster, tmp_path: Path
) -> None:
    if len(slurm_cluster.nodes) < 2:
        pytest.skip("needs a cluster with at least 2 nodes")
    nodes = slurm_cluster.nodes[:2]
    gres = ["--gres=gpu:2"] if slurm_cluster.gpus_per_node >= 2 else []
    ticker = tmp_path / "ticker.py"
    ticker.write_text(TICKER)
    env = {**slurm_cluster.env, "GPUTUI_STATE_DIR": str(tmp_path / "state")}
    args = ["-N2", "--ntasks-per-node=1", *gres, "-t", "5", "-J", "e2e-dashboard"]
    jobid = sbatch(f"srun --quiet {sys.executable} {ticker}\n", env, tmp_path, [*args, "--output=job-%j.out"])
    try:
        wait_job_state(jobid, {"RUNNING"}, 30, env)
        output = tmp_path / f"job-{jobid}.out"
        term_env = {"SLURM_CONF": env["SLURM_CONF"], "GPUTUI_STATE_DIR": env["GPUTUI_STATE_DIR"]}
        command = f"{GPUTUI} attach {jobid} --probe-backend sim --probe-interval 0.5"
        term.start(shell(command), env=term_env, cwd=tmp_path)

        def both_nodes(screen: str) -> str | None:
            rows = {node: gpu_rows(screen, node) for node in nodes}
            return screen if all(rows.values()) else None

        screen = term.wait(both_nodes, 45, f"GPU rows of {nodes}")
        if gres:
            assert all(sorted(gpu_rows(screen, n)) == [0, 1] for n in nodes), screen
        top = header(screen)
        assert f"job {jobid}" in top and "e2e-dashboard" in top and "RUNNING" in top, top
        assert "2 nodes" in top and "SIMULATED" in top, top

        def the_jobs_loss(screen: str) -> str | None:
            shown = training_loss(screen)
            printed = output.read_text() if output.exists() else ""
            values = {
                fmt(r["value"])
                for line in printed.splitlines()
                for r in parse_prefixed(line) or []
                if r.get("rank") == 0
            }
            return shown if shown in values else None

        loss = term.wait(the_jobs_loss, 30, "rank 0's loss from the job's output")
        term.wait(lambda s: (x := training_loss(s)) and x != loss, 15, f"the loss to move from {loss}")
        assert "Traceback" not in term.screen()

        term.keys("q")
        screen = term.wait_exit(30)
        assert "EXIT=0" in screen and "Traceback" not in screen, screen
        assert job_state(jobid, env) == "RUNNING"
        # only the probe step went away: the job's own step keeps running
        steps = wait_for(
            lambda: (ids := step_ids(jobid, env)) and set(ids) <= {f"{jobid}.0", f"{jobid}.batch"} and ids,
            15,
            what="the probe step to end",
        )
        assert f"{jobid}.0" in steps, steps
        seen = len(output.read_text().splitlines())
        wait_for(lambda: len(output.read_text().splitlines()) > seen, 10, what="the job to keep printing")
        assert job_state(jobid, env) == "RUNNING"
    finally:
        scancel(jobid, env)
    wait_job_state(jobid, {"CANCELLED", "COMPLETING"}, 20, env)
