"""Jobs Slurm has forgotten, through the fake ``scontrol``/``sacct``: accounting disabled (the captured
22.05 answer) is one plain line, never a raw sacct error; a job in accounting gets its summary; other
sacct failures stay one line. And ``gputui jobs`` through the fake ``squeue`` (the captured -O output)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from attach_helpers import gputui as run_gputui
from fake_slurm import DATA, FakeSlurm, job, response

from gputui.slurm.attach import AttachError
from gputui.slurm.commands import SlurmError
from gputui.slurm.jobs import SEP
from gputui.slurm.sacct import SACCT_FIELDS

DISABLED = (DATA / "sacct-22.05-disabled.txt").read_text()  # on stderr, exit status 1, as sacct does
ACCOUNTING_OFF = "Slurm accounting is disabled on this cluster: finished jobs are not kept"


def sacct_line(job_id: str, state: str) -> str:
    values = [job_id, "train", "root", state, "debug", "", "2", "node[1-2]", "00:10:00", "01:00:00"]
    values += ["2026-11-21T05:40:11", "2026-11-21T05:40:12", "2026-11-21T05:50:12", "/tmp/s5", "0:0"]
    assert len(values) == len(SACCT_FIELDS)
    return SEP.join(values)


@pytest.fixture
def slurm(tmp_path, monkeypatch) -> Iterator[FakeSlurm]:
    fake = FakeSlurm(tmp_path, monkeypatch).set("scontrol show job", job("GONE"))
    yield fake
    fake.close()


def gputui(*args: str) -> subprocess.CompletedProcess[str]:
    """The gputui CLI in a subprocess, with this test's PATH (the fakes first)."""
    return run_gputui(list(args), os.environ, Path.cwd())


def test_a_forgotten_job_without_accounting_is_one_plain_line(slurm):
    slurm.set("sacct", response(stderr=DISABLED, exit=1))
    result = slurm.attach().finish()
    assert isinstance(result, AttachError)
    assert str(result) == f"job 3 is not known to Slurm any more; {ACCOUNTING_OFF}"
    (argv,) = slurm.calls("sacct")
    assert argv[argv.index("-j") + 1] == "3" and "-X" in argv
    res = gputui("attach", "3", "--text")
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr == f"gputui: error: job 3 is not known to Slurm any more; {ACCOUNTING_OFF}\n"


def test_a_forgotten_job_in_accounting_gets_its_summary(slurm):
    step = sacct_line("3.batch", "COMPLETED")
    slurm.set("sacct", response(stdout=f"{sacct_line('3', 'COMPLETED')}\n{step}\n"))
    run = slurm.attach()
    assert run.finish() == 0
    (final,) = run.events("job_state")
    assert final["message"] == "job 3 has ended: COMPLETED (exit 0:0), ran 00:10:00 on node[1-2]"
    assert slurm.calls("srun") == []


def test_a_job_unknown_to_accounting_too(slurm):
    slurm.set("sacct", response(stdout=f"{sacct_line('4', 'COMPLETED')}\n"))
    result = slurm.attach().finish()
    assert isinstance(result, AttachError) and str(result) == "job 3 is not known to Slurm"


def test_other_sacct_failures_stay_one_line(slurm):
    why = "sacct: error: Problem talking to the database: Connection refused"
    slurm.set("sacct", response(stderr=f"sacct: error: slurmdbd: Connection refused\n{why}\n", exit=1))
    result = slurm.attach().finish()
    assert isinstance(result, SlurmError) and str(result) == f"sacct: {why}"


def test_gputui_jobs_lists_the_captured_squeue_output(slurm):
    slurm.set("squeue", response((DATA / "squeue-22.05-O.txt").read_text()))
    res = gputui("jobs")
    assert res.returncode == 0, res.stderr
    rows = {line.split()[0]: line for line in res.stdout.splitlines()[1:]}
    assert {"26", "22", "24", "25_0", "25_1"} <= set(rows)
    assert "(JobHeldUser)" in rows["26"] and "node[1-2]" in rows["22"]
    (argv,) = slurm.calls("squeue")
    assert argv[:3] == ["--me", "--array", "-h"]
