"""``gputui hold JOBID`` / ``gputui release JOBID`` / ``gputui cancel JOBID`` on the local Slurm cluster:
the CLI runs the jobs screen's job-action table (:data:`gputui.home.actions.ACTIONS`), so it prints the
same confirmed outcome and refuses with the same one-line reasons. A job that waits for its begin time
stays pending; it is held (``JobHeldUser``, or ``JobHeldAdmin`` as root, an operator) and released, each
confirmed from ``scontrol show job``. Someone else's job is tried by running the CLI as ``nobody``."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest
from attach_helpers import gputui, job_env
from slurm_helpers import sbatch, scancel, wait_job_state

import gputui as gputui_package
from gputui.cli import main as cli_main
from gputui.home import actions
from gputui.slurm.job_actions import HELD_REASONS
from gputui.slurm.scontrol import job_detail

REPO = Path(gputui_package.__file__).resolve().parent.parent
NOBODY = 65534
PENDING_FOR_AN_HOUR = ["--begin=now+1hour"]


@pytest.fixture(scope="module")
def env(slurm_cluster, tmp_path_factory) -> dict[str, str]:
    return job_env(slurm_cluster.env, tmp_path_factory.mktemp("gputui-state"))


@pytest.fixture
def pending_job(env, tmp_path):
    """One of my jobs, pending for an hour (its begin time), cancelled afterwards."""
    job = sbatch("sleep 30\n", env, tmp_path, [*PENDING_FOR_AN_HOUR, "-o", str(tmp_path / "out-%j.txt")])
    try:
        wait_job_state(job, {"PENDING"}, 30, env)
        yield job
    finally:
        scancel(job, env)


def one_error_line(res: subprocess.CompletedProcess[str]) -> str:
    """The one ``gputui: error:`` line of a failed command (no traceback, nothing on stdout)."""
    assert res.stdout == "" and res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res
    assert res.stderr.startswith("gputui: error: "), res.stderr
    return res.stderr.removeprefix("gputui: error: ").rstrip("\n")


@pytest.mark.slurm
def test_hold_then_release_a_pending_job(env, pending_job, tmp_path) -> None:
    job = pending_job
    held = gputui(["hold", job], env, tmp_path)
    reason = job_detail(job, env=env).reason
    assert reason in HELD_REASONS
    assert (held.returncode, held.stderr) == (0, ""), held
    assert held.stdout == f"held job {job} ({reason}): it starts only once released\n"

    again = gputui(["hold", job], env, tmp_path)
    assert again.returncode == 1 and one_error_line(again) == f"job {job} is already held ({reason})"

    released = gputui(["release", job], env, tmp_path)
    after = job_detail(job, env=env)
    assert after.state == "PENDING" and after.reason not in HELD_REASONS
    assert (released.returncode, released.stderr) == (0, ""), released
    assert re.fullmatch(rf"released job {job} \(PENDING, [^)]+\)\n", released.stdout), released.stdout

    # Not held any more: the table's qualifying rule answers, in the jobs screen's words (U key).
    twice = gputui(["release", job], env, tmp_path)
    assert twice.returncode == 1 and one_error_line(twice) == f"job {job} is not held: nothing to release"
    assert job_detail(job, env=env).reason not in HELD_REASONS


@pytest.mark.slurm
def test_unknown_jobs_are_one_line_and_exit_1(env, tmp_path) -> None:
    for verb in ("hold", "release", "cancel"):
        res = gputui([verb, "99999999"], env, tmp_path)
        assert res.returncode == 1, res
        assert one_error_line(res) == f"job 99999999 is not known to Slurm (nothing to {verb})"


@pytest.mark.parametrize("argv", [["hold", "abc"], ["release", "12;id"], ["cancel", "$(id)"], ["hold", "-1"]])
def test_an_invalid_job_id_is_a_usage_error_and_reaches_no_slurm(argv, tmp_path) -> None:
    no_slurm = {**os.environ, "PATH": "/nonexistent"}  # a Slurm call would fail with another message
    res = gputui(argv, no_slurm, tmp_path)
    assert res.returncode == 2, res
    assert "is not a Slurm job id (expected 123, array 123_4 or het 123+1)" in one_error_line(res)


def test_an_unknown_signal_is_a_usage_error(tmp_path) -> None:
    res = gputui(["cancel", "5", "--signal", "NOPE"], {**os.environ, "PATH": "/nonexistent"}, tmp_path)
    assert res.returncode == 2 and one_error_line(res) == "'NOPE' is not a signal name (e.g. USR1, TERM, INT)"


@pytest.mark.slurm
def test_cancel_goes_through_the_action_table(env, pending_job, monkeypatch, capsys) -> None:
    """The CLI's cancel is the table's entry: a table whose cancel refuses every job cancels nothing."""
    for name, value in env.items():  # the in-process CLI reads os.environ
        monkeypatch.setenv(name, value)
    refuse = dataclasses.replace(
        actions.action("cancel"), qualifies=lambda job: f"table says no to {job.job_id}"
    )
    monkeypatch.setattr(actions, "ACTIONS", (refuse, *(a for a in actions.ACTIONS if a.name != "cancel")))
    assert cli_main(["cancel", pending_job]) == 1
    assert capsys.readouterr().err == f"gputui: error: table says no to {pending_job}\n"
    assert job_detail(pending_job, env=env).state == "PENDING"


def as_nobody(args: list[str], env: Mapping[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The gputui CLI of this checkout run as ``nobody`` by an interpreter that user may run."""
    setpriv = shutil.which("setpriv")
    if os.getuid() != 0 or setpriv is None:
        pytest.skip("running the CLI as another user needs root and setpriv")
    base = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    # A copy of the package that nobody may read: the checkout may sit below a folder only root may enter
    # (a fresh clone in a mktemp folder does, and this test then skipped in CI).
    readable = Path(tempfile.mkdtemp(prefix="gputui-as-nobody-", dir="/tmp"))
    readable.chmod(0o755)
    shutil.copytree(REPO / "gputui", readable / "gputui", ignore=shutil.ignore_patterns("__pycache__"))
    for path in readable.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    their_env = {**env, "HOME": "/nonexistent", "PYTHONPATH": str(readable), "PYTHONDONTWRITEBYTECODE": "1"}
    their_env.pop("GPUTUI_STATE_DIR", None)
    for python in ("/usr/bin/python3", "/usr/local/bin/python3"):
        ready = [
            *base,
            python,
            "-c",
            "import gputui.cli, subprocess; subprocess.run(['scontrol', 'ping'], check=True)",
        ]
        try:
            usable = subprocess.run(ready, env=their_env, capture_output=True, timeout=30).returncode == 0
        except OSError:
            usable = False
        if usable:
            try:
                return subprocess.run(
                    [*base, python, "-m", "gputui", *args],
                    env=their_env,
                    cwd=cwd,
                    capture_output=True,
                    text=True,
                    timeout=60,
                    stdin=subprocess.DEVNULL,
                )
            finally:
                shutil.rmtree(readable, ignore_errors=True)
    shutil.rmtree(readable, ignore_errors=True)
    pytest.skip("no Python that nobody may run imports this checkout and reaches Slurm")


@pytest.mark.slurm
def test_someone_elses_job_is_never_held(env, pending_job) -> None:
    res = as_nobody(["hold", pending_job], env, Path("/"))
    assert res.returncode == 1, res
    assert one_error_line(res) == f"job {pending_job} belongs to root, not to you"
    assert job_detail(pending_job, env=env).reason not in HELD_REASONS
