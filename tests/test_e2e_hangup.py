"""However gputui ends, it ends its own processes and never the job: the real CLI in a tmux terminal whose
session is killed (the terminal closes: SIGHUP, as when an SSH link drops), or that gets SIGTERM or SIGHUP.

Attach (on the local Slurm cluster): the probe step must be gone from ``squeue -s``, no gputui or srun
process of ours may be left (srun runs in its own session, so nothing but gputui ends it), and the job must
still be RUNNING. Local runs (``demo``, ``run --local``): no rank may be left. Every wait has a deadline.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
import shlex
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from slurm_helpers import job_state, sbatch, scancel, step_ids, wait_for, wait_job_state
from test_e2e_dashboard import Terminal, header, shell
from test_e2e_home import start_jobs_screen
from test_e2e_tmux import GPUTUI

from gputui.slurm.attach import Attacher, AttachOptions
from gputui.stream.io import ReadStats, read_file
from gputui.stream.records import Record

CLEANUP_S = 20  # srun gets STOP_GRACE_S (5 s) after its SIGTERM, then is killed: well inside this
PROBE = "--probe-backend sim --probe-interval 0.5"


@pytest.fixture
def term(tmp_path: Path) -> Iterator[Terminal]:
    session = Terminal(f"gputui-hangup-{tmp_path.name}")
    yield session
    session.kill()


def descendants(pid: int) -> dict[int, str]:
    """pid → command line of every live process under ``pid``."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return {}
    found = {}
    for child in children:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            found[child.pid] = " ".join(child.cmdline())
    return found


def alive(pids: dict[int, str]) -> dict[int, str]:
    """Those of ``pids`` still running (a zombie has ended)."""
    left = {}
    for pid, cmd in pids.items():
        with contextlib.suppress(psutil.NoSuchProcess):
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                left[pid] = cmd
    return left


def gone(pids: dict[int, str], what: str) -> None:
    """Wait (CLEANUP_S at most) until none of ``pids`` runs; the failure names those left."""
    try:
        wait_for(lambda: not alive(pids), CLEANUP_S, what=f"{what} to end")
    except TimeoutError as exc:
        raise AssertionError(f"{exc}; still running: {alive(pids)}") from None


def job_processes(jobid: str) -> dict[int, str]:
    """gputui's processes for ``jobid`` anywhere in the process table: its srun (in its own session, so not
    a descendant once gputui is gone) and the probes on the job's nodes (local processes of slurmstepd)."""
    found = {}
    for proc in psutil.process_iter(["pid", "cmdline"]):
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            cmd = " ".join(proc.info["cmdline"] or [])
            if "gputui probe" not in cmd:
                continue
            if f"--jobid={jobid}" in cmd or proc.environ().get("SLURM_JOB_ID") == jobid:
                found[proc.pid] = cmd
    return found


# --------------------------------------------------------------------------- attach (local Slurm)


@pytest.fixture(scope="module")
def job(slurm_cluster, tmp_path_factory) -> Iterator[tuple[str, dict[str, str]]]:
    """A sleeping job on (up to) two nodes, shared by the attach tests: each must leave it RUNNING."""
    cwd = tmp_path_factory.mktemp("hangup-job")
    env = {**slurm_cluster.env, "GPUTUI_STATE_DIR": str(cwd / "state")}
    nodes = min(2, len(slurm_cluster.nodes))
    jobid = sbatch("sleep 600\n", env, cwd, ["-N", str(nodes), "-t", "10", "-J", "hangup"])
    try:
        wait_job_state(jobid, {"RUNNING"}, 30, env)
        yield jobid, env
    finally:
        scancel(jobid, env)


def probe_steps(jobid: str, env: dict[str, str]) -> list[str]:
    return [s for s in step_ids(jobid, env) if s != f"{jobid}.batch"]


def attached(term: Terminal, jobid: str, env: dict[str, str]) -> dict[int, str]:
    """Wait until gputui's probe step runs on the job; gputui's processes then (itself, its srun, the
    probes on the job's nodes)."""
    wait_for(lambda: probe_steps(jobid, env), 45, what="the probe step in squeue -s")
    ours = wait_for(
        lambda: (d := descendants(term.pane_pid())) and any("srun" in c for c in d.values()) and d,
        15,
        what="gputui and its srun",
    )
    return {**ours, **job_processes(jobid)}


def end(term: Terminal, ours: dict[int, str], how: str, command: str) -> str:
    """End gputui: "close" kills the tmux session (the terminal closes: SIGHUP), "SIGTERM"/"SIGHUP" send
    that signal to the process running ``command``. Returns the screen after it ended ("" after close)."""
    if how == "close":
        term.kill()
        return ""
    (pid,) = [pid for pid, cmd in ours.items() if command in cmd]
    psutil.Process(pid).send_signal(getattr(signal, how))
    return term.wait_exit(CLEANUP_S)


def left_nothing(ours: dict[int, str], jobid: str, env: dict[str, str]) -> None:
    """The probe step is gone from ``squeue -s``, none of gputui's processes runs, the job is RUNNING."""
    try:
        wait_for(lambda: not probe_steps(jobid, env), CLEANUP_S, what="the probe step to leave squeue -s")
    except TimeoutError as exc:
        raise AssertionError(f"{exc}: {probe_steps(jobid, env)}; running: {alive(ours)}") from None
    gone(ours, "gputui's processes")
    assert not job_processes(jobid), job_processes(jobid)
    assert job_state(jobid, env) == "RUNNING"


def start_attach(term: Terminal, tmp_path: Path, job, args: str) -> dict[int, str]:
    jobid, env = job
    term_env = {"SLURM_CONF": env["SLURM_CONF"], "GPUTUI_STATE_DIR": env["GPUTUI_STATE_DIR"]}
    term.start(shell(f"{GPUTUI} attach {jobid} {args}"), env=term_env, cwd=tmp_path)
    return attached(term, jobid, env)


@pytest.mark.slurm
@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["close", "SIGTERM", "SIGHUP"])
def test_ending_the_dashboard_ends_the_probe_step_and_srun_not_the_job(term, tmp_path, job, how):
    ours = start_attach(term, tmp_path, job, PROBE)
    screen = end(term, ours, how, "gputui attach")
    left_nothing(ours, *job)
    if how != "close":
        assert "EXIT=0" in screen and "Traceback" not in screen, screen


@pytest.mark.slurm
@pytest.mark.timeout(120)
def test_closing_the_terminal_under_attach_output_ends_the_probe_step_keeps_the_records(term, tmp_path, job):
    out = tmp_path / "records.jsonl"
    ours = start_attach(term, tmp_path, job, f"--output {shlex.quote(str(out))} {PROBE}")
    wait_for(lambda: gpu_records(out), 30, what="GPU records in the output file")
    end(term, ours, "close", "gputui attach")
    left_nothing(ours, *job)
    stats = ReadStats()
    records = list(read_file(out, stats))
    assert stats.skipped == 0 and any(r.kind == "gpu" for r in records)
    last = [r for r in records if r.kind == "event"][-1]
    assert "detached from job" in last.get("message", ""), last  # the orderly stop, not a kill


@pytest.mark.slurm
@pytest.mark.timeout(150)
def test_closing_the_terminal_under_a_dashboard_opened_from_the_jobs_screen_ends_its_probe_step(
    term, tmp_path, job, slurm_cluster
):
    jobid, env = job
    start_jobs_screen(term, slurm_cluster, tmp_path)
    term.keys("/")
    term.wait(lambda s: "filter: words in any column" in s, 10, "the filter box")
    term.keys("-l", "hangup")
    term.keys("Enter")
    term.wait(lambda s: re.search(rf"^ job {jobid} · ", s, re.M), 15, f"job {jobid} chosen")

    for _ in range(3):  # enter on the row; again if the key reached the filter box, still focused
        term.keys("Enter")
        with contextlib.suppress(TimeoutError):
            wait_for(lambda: re.search(rf"job {jobid} .*hangup", header(term.screen())), 10, what="dashboard")
            break
    else:
        raise AssertionError(f"job {jobid}'s dashboard did not open; the screen:\n{term.screen()}")
    ours = attached(term, jobid, env)
    end(term, ours, "close", "gputui")
    left_nothing(ours, jobid, env)


class Boom(Exception):
    pass


@pytest.mark.slurm
@pytest.mark.timeout(60)
def test_an_error_while_attached_ends_the_probe_step_not_the_job(job):
    """An exception while the step streams (here: from the consumer of the first GPU record) ends srun."""
    jobid, env = job

    def emit(record: Record) -> None:
        if record.kind == "gpu":
            raise Boom("the consumer failed")

    attacher = Attacher(jobid, emit, AttachOptions(backend="sim", interval=0.5), env=env)
    with pytest.raises(Boom):
        attacher.run()
    assert attacher.proc is not None and attacher.proc.poll() is not None, "srun still runs"
    left_nothing({attacher.proc.pid: "srun"}, jobid, env)


def gpu_records(path: Path) -> list:
    return [r for r in read_file(path, ReadStats()) if r.kind == "gpu"] if path.exists() else []


# --------------------------------------------------------------------------- local runs

# Each rank says it is ready (a file in its working directory) once SIGHUP is ignored.
IGNORES_HUP = (
    "import os, signal, time; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
    "open(f'ready-{os.getpid()}', 'w').close(); time.sleep(300)"
)


def ranks_of(term: Terminal, marker: str, count: int) -> dict[int, str]:
    def running() -> dict[int, str]:
        ranks = {  # gputui's own command line (and its shell's) may hold the marker too: not a rank
            pid: cmd
            for pid, cmd in descendants(term.pane_pid()).items()
            if marker in cmd and "gputui run" not in cmd and "gputui demo" not in cmd
        }
        return ranks if len(ranks) >= count else {}

    return wait_for(running, 90, what=f"{count} ranks running {marker!r}")


@pytest.mark.timeout(180)
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the demo needs PyTorch")
@pytest.mark.parametrize("flags,how", [("", "close"), ("", "SIGTERM"), ("--headless", "SIGTERM")])
def test_ending_the_demo_ends_its_ranks(term, tmp_path, flags, how):
    """Closing the terminal: the kernel's hang-up reaches the ranks too (gputui's process group), and
    gputui ends the ones still running; SIGTERM reaches only gputui, which ends them."""
    env = {"GPUTUI_STATE_DIR": str(tmp_path / "state")}
    term.start(shell(f"{GPUTUI} demo {flags}"), env=env, cwd=tmp_path)
    ranks = ranks_of(term, "gputui.trainers.torch_ddp", 2)
    ours = {**descendants(term.pane_pid()), **ranks}
    screen = end(term, ours, how, "gputui demo")
    gone(ours, "the demo and its ranks")
    if how != "close":
        assert "Traceback" not in screen and ("EXIT=0" in screen or "EXIT=1" in screen), screen


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["dashboard", "--text"])
def test_closing_the_terminal_ends_local_ranks_that_ignore_sighup(term, tmp_path, mode):
    """A rank that ignores SIGHUP outlives the kernel's hang-up: gputui must end it."""
    flags = "--text" if mode == "--text" else ""
    command = f"{GPUTUI} run --local --ntasks-per-node 2 {flags} -- {shlex.quote(sys.executable)} -c "
    env = {"GPUTUI_STATE_DIR": str(tmp_path / "state")}
    term.start(shell(command + shlex.quote(IGNORES_HUP)), env=env, cwd=tmp_path)
    ranks = ranks_of(term, "SIG_IGN", 2)
    wait_for(lambda: len(list(tmp_path.glob("ready-*"))) >= 2, 30, what="both ranks ignoring SIGHUP")
    ours = {**descendants(term.pane_pid()), **ranks}
    end(term, ours, "close", "gputui run")
    gone(ours, "gputui and its ranks")
