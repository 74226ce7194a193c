"""A ``Key=value`` token in the user's command line never shadows the real field (issue 23.2).

Slurm 22.05 prints a batch script's arguments in ``Command=`` (measured), and 26.05's ``scontrol show
job -o`` prints ``SubmitLine=<the user's whole command line>`` before ``WorkDir``, ``StdErr``, ``StdIn``
and ``StdOut``. The 26.05 line is the captured 22.05 line with ``SubmitLine=`` put where 26.05 prints
it (slurm-versions.md), and 26.05's empty ``StdErr=`` when stderr goes to stdout."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_slurm import FakeSlurm, mine, replaced, response
from slurm_helpers import run, scancel, wait_job_state

from gputui.slurm.scontrol import job_detail, parse_scontrol_job

DATA = Path(__file__).parent / "data"
LINE_22_05 = mine((DATA / "scontrol-22.05-job-gres.txt").read_text().strip())
REAL_OUT = "/tmp/s5/out-my job|x-3.out"
LURE = "sleep 1 # WorkDir=/x StdErr=/x/e StdIn=/x/i StdOut=/x/o TresPerNode=gres/gpu:9 JobState=FAILED"


def line_26_05(submit_line: str, *, empty_stderr: bool = False) -> str:
    line = replaced(LINE_22_05, (" WorkDir=", f" SubmitLine={submit_line} WorkDir="))
    if empty_stderr:
        line = replaced(line, (f"StdErr={REAL_OUT} ", "StdErr= "))
    return line


@pytest.mark.parametrize("empty_stderr", [False, True])
def test_key_value_tokens_in_the_submit_line_are_the_users_text(empty_stderr: bool) -> None:
    base = parse_scontrol_job(LINE_22_05)
    job = parse_scontrol_job(line_26_05(f"sbatch -N2 --gres=gpu:2 --wrap {LURE}", empty_stderr=empty_stderr))
    assert job.work_dir == base.work_dir == "/tmp/s5"
    assert job.stdout == REAL_OUT
    assert job.stderr == REAL_OUT  # an empty StdErr: stderr goes to the stdout file
    assert job.tres_per_node == base.tres_per_node and job.state == "RUNNING"
    assert job.gpus == base.gpus == {"node1": [0, 1], "node2": [0, 1]}


def test_a_submit_line_repeating_the_whole_tail_still_reads_the_real_one() -> None:
    tail = LINE_22_05[LINE_22_05.index(" WorkDir=") + 1 :].replace("/tmp/s5", "/evil")
    job = parse_scontrol_job(line_26_05(f"sbatch --wrap x {tail}"))
    assert job.work_dir == "/tmp/s5" and job.stdout == REAL_OUT


def test_script_arguments_in_command_on_22_05() -> None:
    line = replaced(LINE_22_05, (" WorkDir=", " x WorkDir=/x StdOut=/x/o StdErr=/x/e WorkDir="))
    job = parse_scontrol_job(line)
    assert (job.work_dir, job.stdout, job.stderr) == ("/tmp/s5", REAL_OUT, REAL_OUT)


def test_job_detail_through_the_fake_scontrol(tmp_path, monkeypatch) -> None:
    slurm = FakeSlurm(tmp_path, monkeypatch)
    slurm.set("scontrol show job", response(line_26_05(f"sbatch --wrap {LURE}") + "\n"))
    job = job_detail("3")
    assert (job.work_dir, job.stdout) == ("/tmp/s5", REAL_OUT)


@pytest.mark.slurm
def test_on_the_cluster_a_wrapped_command_with_key_tokens(slurm_cluster, tmp_path) -> None:
    """On every version: the script's arguments are in ``Command=`` (22.05 too: it printed
    ``Command=/t/job.sh x WorkDir=/x StdOut=/x/o WorkDir=/t``), and in ``SubmitLine=`` on 23.02+."""
    env = slurm_cluster.env
    out = tmp_path / "real.out"
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\nsleep 30\n")
    argv = ["sbatch", "--parsable", "-o", str(out), str(script), "x", "WorkDir=/x", "StdOut=/x/o"]
    jid = run(argv, env, cwd=tmp_path).stdout.strip()
    try:
        wait_job_state(jid, {"RUNNING"}, 30, env)
        job = job_detail(jid, env=env)
        assert (job.work_dir, job.stdout) == (str(tmp_path), str(out))
    finally:
        scancel(jid, env)
