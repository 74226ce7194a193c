"""Slurm: behaviour mutation testing found unchecked (docs/testing.md, "Mutation testing").

Submission through a fake ``sbatch`` on PATH (the job id of ``--parsable`` output, the reason of a
refusal), the one-line error of any failing Slurm command, zero-padded host lists, the tasks and name
of a job, a pending job's node count, the Slurm releases each feature starts at, and the grace the
other ranks of a local run get when one fails.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
from fake_slurm import RUNNING_LINE, replaced

from gputui.hostlist import HostlistError, expand_hostlist
from gputui.slurm.batch_script import LaunchSpec, render, submit
from gputui.slurm.commands import SlurmError, run_slurm
from gputui.slurm.launch_local import LocalRun
from gputui.slurm.scontrol import parse_scontrol_job
from gputui.slurm.version import SlurmVersion


def _fake(bin_dir, name: str, *, stdout: str = "", stderr: str = "", status: int = 0) -> None:
    """A command ``name`` on PATH that prints ``stdout``/``stderr`` and exits with ``status``."""
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(f"#!/bin/sh\nprintf '%s' '{stdout}'\nprintf '%s' '{stderr}' >&2\nexit {status}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def fake_path(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "no-slurm.conf"))
    return bin_dir


def _script(tmp_path):
    path = tmp_path / "train-20260101-120000-42.sh"
    path.write_text("#!/bin/sh\n")
    return path


def test_submit_takes_the_job_id_before_the_cluster_name(tmp_path, fake_path) -> None:
    _fake(fake_path, "sbatch", stdout="4242;cluster1\n")
    job, final = submit(_script(tmp_path))
    assert job == "4242" and final.name == "train-4242.sh" and final.exists()


def test_submit_refused_says_sbatchs_reason(tmp_path, fake_path) -> None:
    _fake(
        fake_path,
        "sbatch",
        stderr="sbatch: warning: first line\nsbatch: error: Batch job submission failed: Invalid account\n",
        status=1,
    )
    with pytest.raises(SlurmError) as err:
        submit(_script(tmp_path))
    assert str(err.value) == "sbatch: Batch job submission failed: Invalid account"


def test_a_failing_slurm_command_is_one_line_naming_the_command(fake_path) -> None:
    _fake(fake_path, "scontrol", stderr="a first line\nInvalid job id specified\n", status=1)
    with pytest.raises(SlurmError) as err:
        run_slurm(["scontrol", "show", "job", "99"])
    assert str(err.value) == "scontrol: Invalid job id specified"
    _fake(fake_path, "squeue", stderr="squeue: error: Invalid user: nobody\n", status=1)
    with pytest.raises(SlurmError) as err:
        run_slurm(["squeue", "--me"])
    assert str(err.value) == "squeue: error: Invalid user: nobody"  # already names the command


def test_zero_padded_host_ranges() -> None:
    assert expand_hostlist("gpu[00-03]") == ["gpu00", "gpu01", "gpu02", "gpu03"]
    assert expand_hostlist("n[0,7-8]") == ["n0", "n7", "n8"]
    with pytest.raises(HostlistError, match="too large"):
        expand_hostlist("n[100-200100]")


def test_a_job_without_gpus_or_task_counts_runs_one_task_per_node() -> None:
    spec = LaunchSpec(cmd=["python", "train.py"], nodes=2)
    assert spec.ranks_per_node == 1 and spec.world_size == 2
    assert "#SBATCH --ntasks-per-node=1" in render(spec)


def test_a_scripts_job_name_is_the_script_not_one_of_its_arguments() -> None:
    assert LaunchSpec(cmd=["./train.sh", "--epochs", "3"]).name == "train.sh"
    assert LaunchSpec(cmd=["python", "train.py", "--lr", "0.1"]).name == "train.py"
    assert LaunchSpec(cmd=["python3", "-m", "gputui.trainers.torch_ddp"]).name == "gputui.trainers.torch_ddp"


def test_a_pending_job_with_a_node_range_shows_the_minimum() -> None:
    job = parse_scontrol_job(replaced(RUNNING_LINE, ("NumNodes=2", "NumNodes=2-4")))
    assert job.num_nodes == 2


@pytest.mark.parametrize(
    ("feature", "first"),
    [
        ("has_overlap", SlurmVersion(20, 11)),
        ("overlap_shares_gpus", SlurmVersion(22, 5)),
        ("has_squeue_json", SlurmVersion(21, 8)),
        ("json_filters_work", SlurmVersion(23, 2)),
        ("has_scontrol_json", SlurmVersion(23, 11)),
    ],
)
def test_each_feature_starts_at_the_first_release_that_has_it(feature: str, first: SlurmVersion) -> None:
    before = (
        SlurmVersion(first.major, first.minor - 1, 9) if first.minor else SlurmVersion(first.major - 1, 11)
    )
    assert getattr(first, feature) is True
    assert getattr(SlurmVersion(first.major, first.minor, 3), feature) is True
    assert getattr(before, feature) is False


def _ranks(tmp_path, *codes_after: tuple[int, float]) -> LocalRun:
    """A local run whose rank i exits with status codes_after[i][0] after codes_after[i][1] seconds."""
    procs = [
        subprocess.Popen([sys.executable, "-c", f"import time, sys; time.sleep({delay}); sys.exit({code})"])
        for code, delay in codes_after
    ]
    return LocalRun(run_id="t", folder=tmp_path, port=0, procs=procs)


def test_when_a_local_rank_fails_the_others_get_their_grace(tmp_path) -> None:
    run = _ranks(tmp_path, (0, 1.0), (3, 0.0))
    assert run.wait(timeout=60, grace_s=30) == [0, 3]  # rank 0 finished on its own within the grace


def test_a_local_rank_still_running_after_the_grace_is_terminated(tmp_path) -> None:
    run = _ranks(tmp_path, (0, 60.0), (3, 0.0))
    assert run.wait(timeout=60, grace_s=0.5) == [-15, 3]


def test_a_duration_slurm_did_not_write_as_one_is_none() -> None:
    from gputui.slurm.jobs import parse_duration

    assert parse_duration("1-02:03:04") == 93784
    assert parse_duration("soon") is None and parse_duration("1-xx:00") is None
