"""End-to-end runs of the jobs screen (``gputui`` with no command) against the local Slurm cluster, in a
120x36 tmux terminal, as a person sees it: a job submitted with plain ``sbatch`` shows up in the list, and
a 2-node PyTorch DDP job launched from the form (``l``) opens its dashboard (both nodes' simulated GPUs, a
falling loss), is listed again after ``q`` and is cancelled with ``c`` ``y``; ``q`` then quits.

Everything is read back with ``tmux capture-pane``; every wait polls with a deadline and shows the screen
when it runs out. Each test cancels its jobs by their (unique) name in a ``finally``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import psutil
import pytest
from slurm_helpers import job_state, run, wait_for, wait_job_state
from test_e2e_dashboard import Terminal, gpu_rows, header, shell, training_loss
from test_e2e_tmux import GPUTUI

pytestmark = [
    pytest.mark.skipif(
        shutil.which("tmux") is None and os.environ.get("CI") != "true", reason="tmux is not installed"
    ),
    pytest.mark.slurm,
]

#: seconds between two squeue calls of the jobs screen (``--refresh``)
REFRESH_S = 1


@pytest.fixture
def term(tmp_path: Path) -> Iterator[Terminal]:
    session = Terminal(f"gputui-home-{os.getpid()}-{tmp_path.name}")
    yield session
    session.kill()


def start_jobs_screen(term: Terminal, cluster, tmp_path: Path) -> None:
    """``gputui --refresh 1 --backend sim --interval 0.5`` in ``tmp_path``, with its own state folder (a
    fresh launch form) and no settings file; wait for the first list of jobs."""
    env = {
        "SLURM_CONF": cluster.env["SLURM_CONF"],
        "GPUTUI_STATE_DIR": str(tmp_path / "state"),
        "GPUTUI_CONFIG": str(tmp_path / "no-config.toml"),
    }
    command = f"{GPUTUI} --refresh {REFRESH_S} --backend sim --interval 0.5"
    term.start(shell(f"unset GPUTUI_CLUSTER GPUTUI_REFRESH; {command}"), env=env, cwd=tmp_path)
    term.wait(
        lambda s: re.search(rf"my jobs: .* every {REFRESH_S} s", header(s)) and "╭─ my jobs" in s and s,
        60,
        "the jobs screen's first list (header 'my jobs: … every 1 s')",
    )


def cancel_by_name(name: str, env: Mapping[str, str]) -> None:
    run(["scancel", f"--name={name}"], env, check=False)


def job_ids_named(name: str, env: Mapping[str, str]) -> list[str]:
    res = run(["squeue", "-h", f"--name={name}", "-o", "%i"], env, check=False)
    return res.stdout.split() if res.returncode == 0 else []


def list_row(screen: str, jobid: str, name: str) -> str | None:
    """The jobs table's row of ``jobid`` (``│ 123      name   partition  STATE ...``), if shown."""
    match = re.search(rf"^│ {jobid} +{re.escape(name)} +\S+ +(\S+).*$", screen, re.M)
    return match.group(0) if match else None


def gputui_pids(root: int) -> set[int]:
    """gputui processes under the pane's shell."""
    found = set()
    with contextlib.suppress(psutil.NoSuchProcess):
        for child in psutil.Process(root).children(recursive=True):
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                if "gputui" in " ".join(child.cmdline()) and "torch_ddp" not in " ".join(child.cmdline()):
                    found.add(child.pid)
    return found


def quit_and_check_the_prompt(term: Terminal) -> None:
    pane = term.pane_pid()
    term.keys("q")
    screen = term.wait_exit(30)
    assert "EXIT=0" in screen and "Traceback" not in screen, screen
    wait_for(lambda: not gputui_pids(pane), 10, what="no gputui process left in the pane")


# --------------------------------------------------------------------------- 1: a job from plain sbatch


@pytest.mark.timeout(120)
def test_a_job_from_plain_sbatch_appears_in_the_list(term: Terminal, slurm_cluster, tmp_path: Path) -> None:
    env = slurm_cluster.env
    name = f"e2eh-ls-{os.getpid() % 100000}"
    try:
        start_jobs_screen(term, slurm_cluster, tmp_path)
        screen = term.screen()
        assert "Traceback" not in screen and name not in screen, screen

        submitted = time.monotonic()
        res = run(
            ["sbatch", "--parsable", f"--job-name={name}", "-t", "5", "--wrap", "sleep 120"],
            env,
            cwd=tmp_path,
        )
        jobid = res.stdout.strip().split(";")[0]
        assert jobid.isdigit(), res.stdout
        row = term.wait(lambda s: list_row(s, jobid, name), 20, f"job {jobid} ({name}) in the list")
        seen_after = time.monotonic() - submitted
        assert re.search(r"\b(PENDING|RUNNING|CONFIGURING)\b", row), row
        # a squeue every second: listed after a refresh or two (slack for a busy machine)
        assert seen_after < 15 * REFRESH_S, f"listed only {seen_after:.1f} s after sbatch"
        assert job_state(jobid, env) in ("PENDING", "RUNNING", "CONFIGURING")

        quit_and_check_the_prompt(term)
        assert job_state(jobid, env) in ("PENDING", "RUNNING", "CONFIGURING"), "q must leave jobs running"
    finally:
        cancel_by_name(name, env)


# --------------------------------------------------------------------------- 2: launch, watch, cancel

EPOCHS = 30  # ~2 s an epoch on an idle 2-core machine: the job outlives the test's checks, then is cancelled


def trainer_command() -> str:
    return shlex.join(
        [
            sys.executable,
            "-m",
            "gputui.trainers.torch_ddp",
            "--device",
            "cpu",
            "--backend",
            "gloo",
            "--model",
            "cnn",
            "--epochs",
            str(EPOCHS),
            "--batch-size",
            "32",
            "--log-every",
            "2",
        ]
    )


def form_row(screen: str, label: str) -> str:
    """The text right of a launch form field's label (the form is the left part of the screen)."""
    match = re.search(rf"^ {re.escape(label)} +(.*?)\s*│", screen, re.M)
    return match.group(1) if match else ""


#: the launch form's one-line fields, in Tab order
FORM_LABELS = (
    "command or script",
    "job name",
    "nodes",
    "GPUs per node",
    "tasks per node",
    "CPUs per task",
    "memory per node",
    "time limit",
    "partition",
    "account",
)


def cursor_row(term: Terminal) -> int:
    """The terminal cursor's row: Textual puts it on the focused Input (app.cursor_position)."""
    out = subprocess.run(
        ["tmux", "display-message", "-p", "-t", term.name, "#{cursor_y}"],
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    )
    return int(out.stdout.strip())


def focused_label(term: Terminal) -> str | None:
    """The label of the launch form's field that has the focus (the one on the cursor's row).

    Keys bound to actions (Tab, End, BSpace) act only once the key event has bubbled up to the app,
    while a printable key is inserted by the focused Input at once: text typed right after a Tab can
    land in the previous field. So the form is filled one field at a time, after the focus is seen."""
    lines = term.screen().splitlines()
    row = cursor_row(term)
    line = lines[row] if 0 <= row < len(lines) else ""
    return next((label for label in FORM_LABELS if line.startswith(f" {label} ")), None)


def as_number(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


@pytest.mark.timeout(200)
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the DDP trainer needs PyTorch")
def test_launch_a_2_node_ddp_job_from_the_form_watch_it_and_cancel_it(
    term: Terminal, slurm_cluster, tmp_path: Path
) -> None:
    if len(slurm_cluster.nodes) < 2 or slurm_cluster.gpus_per_node < 1:
        pytest.skip("needs a cluster with at least 2 nodes with a GPU each")
    env = slurm_cluster.env
    nodes = slurm_cluster.nodes[:2]
    name = f"e2eh-ddp-{os.getpid() % 100000}"
    command = trainer_command()
    try:
        start_jobs_screen(term, slurm_cluster, tmp_path)

        # ---- the launch form: focus starts in the command field, Tab moves on, ctrl+s submits
        term.keys("l")
        term.wait(
            lambda s: "launch a job on" in header(s) and "command or script" in s, 15, "the launch form"
        )

        term.wait(lambda s: focused_label(term) == "command or script", 15, "the focus in the command field")

        def fill(label: str, value: str) -> None:
            """Tab to the field (a field's text is selected on focus: typing replaces it), type."""
            for _ in range(len(FORM_LABELS)):
                now = focused_label(term)
                if now == label:
                    break
                term.keys("Tab")
                wait_for(
                    lambda was=now: focused_label(term) not in (was, None),
                    10,
                    what=f"Tab to move the focus from {now!r} (towards {label!r})",
                )
            else:
                raise AssertionError(f"Tab never reached {label!r}:\n{term.screen()}")
            term.keys("-l", value)
            term.wait(lambda s: form_row(s, label).endswith(value[-20:]), 10, f"{value!r} in {label!r}")

        fill("command or script", command)
        fill("job name", name)
        fill("nodes", "2")
        fill("GPUs per node", "1")
        fill("time limit", "5")

        def script_ready(screen: str) -> str | None:
            wanted = (f"--job-name={name}", "--nodes=2", "--gres=gpu:1", "--time=5", "srun ")
            return screen if all(w in screen for w in wanted) else None

        screen = term.wait(script_ready, 10, "the batch script preview with the typed values")
        assert form_row(screen, "nodes") == "2" and form_row(screen, "GPUs per node") == "1", screen
        assert "nothing submitted" not in screen, screen

        # ---- ctrl+s: submitted, the new job's dashboard opens
        term.keys("C-s")

        def dashboard(screen: str) -> str | None:
            return screen if re.search(rf"job \d+ .*{re.escape(name)}", header(screen)) else None

        screen = term.wait(dashboard, 60, "the new job's dashboard")
        jobid = re.search(r"job (\d+)", header(screen)).group(1)
        assert job_ids_named(name, env) == [jobid], (job_ids_named(name, env), header(screen))

        def both_nodes(screen: str) -> str | None:
            return screen if all(gpu_rows(screen, node) for node in nodes) else None

        screen = term.wait(both_nodes, 90, f"GPU rows of {nodes}")
        assert all(len(gpu_rows(screen, node)) == 1 for node in nodes), screen  # 1 GPU per node
        top = header(screen)
        assert "SIMULATED" in top and "2 nodes × 1 GPU" in top and "RUNNING" in top, top
        assert re.search(r"^│ +SIMULATED +GPUs 2 ", screen, re.M), screen

        # ---- the loss falls
        first_text = term.wait(
            lambda s: as_number(training_loss(s)) is not None and training_loss(s),
            90,
            "a loss in the training pane",
        )
        first = as_number(first_text)
        lower = term.wait(
            lambda s: (x := as_number(training_loss(s))) is not None and x < first and training_loss(s),
            90,
            f"a loss below the first one seen ({first_text})",
        )
        assert as_number(lower) < first, (first_text, lower)
        screen = term.screen()
        assert both_nodes(screen) and "Traceback" not in screen, screen

        # ---- q: back to the list, where the job is listed (running)
        term.keys("q")
        # the list shows its last answer at once and asks squeue again on return (none while the dashboard
        # was on top): the job's row turns RUNNING with that answer
        screen = term.wait(
            lambda s: "╭─ my jobs" in s and "RUNNING" in (list_row(s, jobid, name) or "") and s,
            30,
            f"job {jobid} RUNNING in the list",
        )
        assert re.search(rf"^ submitted job {jobid} *$", screen, re.M), screen

        # choose the job's row (the list also holds other jobs): filter on its name
        term.keys("/")
        term.wait(lambda s: "filter: words in any column" in s, 10, "the filter box")
        term.keys("-l", name)
        term.keys("Enter")
        term.wait(lambda s: re.search(rf"^ job {jobid} · ", s, re.M), 15, f"job {jobid} chosen (detail line)")
        assert job_state(jobid, env) == "RUNNING", "the job ended before the test could cancel it"

        # ---- c, y: cancelled, Slurm confirms
        term.keys("c")
        term.wait(lambda s: f"Cancel job {jobid} ({name}, RUNNING)?" in s, 15, "the cancel question")
        term.keys("y")
        term.wait(
            lambda s: re.search(rf"^ cancelled job {jobid} \(state \w+", s, re.M), 30, "the status line"
        )
        wait_job_state(jobid, {"CANCELLED", "COMPLETING"}, 30, env)
        assert job_state(jobid, env) != "RUNNING"
        term.wait(
            lambda s: (r := list_row(s, jobid, name)) and "CANCELLED" in r, 20, "the row to say CANCELLED"
        )

        # ---- q: the app ends, the shell goes on
        quit_and_check_the_prompt(term)
    finally:
        cancel_by_name(name, env)
