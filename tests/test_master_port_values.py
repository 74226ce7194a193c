"""MASTER_PORT for known job ids: fixed numbers, worked out by hand from 10000 + id % 22768.

Every rank of a job must compute the same port, in Python (``gputui.distenv``, the trainers) and in the
batch script's shell arithmetic (``gputui run``): a formula change on one side only would make ranks
wait for each other on different ports. The numbers below are not computed by the code under test.
"""

from __future__ import annotations

import subprocess

import pytest

from gputui.distenv import from_environ, master_port_for_job
from gputui.slurm.batch_script import LaunchSpec, render

# job id -> port; 22768 = 32767 - 10000 + 1 ports
PORTS = {
    "1": 10001,
    "0": 10000,
    "12345": 22345,  # 12345 < 22768
    "22767": 32767,  # the highest port
    "22768": 10000,  # wraps
    "45537": 10001,  # 45537 = 2 * 22768 + 1
    "4294967295": 21775,  # 2**32 - 1 = 188640 * 22768 + 11775
    "4242_7": 14242,  # array task: the leading number
    "4242+1": 14242,  # heterogeneous component: the leading number
}


@pytest.mark.parametrize(("job_id", "port"), PORTS.items())
def test_master_port_for_known_job_ids(job_id: str, port: int) -> None:
    assert master_port_for_job(job_id) == port


def test_master_port_without_or_with_a_non_numeric_job_id() -> None:
    assert master_port_for_job(None) == master_port_for_job("") == master_port_for_job("  ") == 29500
    assert master_port_for_job(12345) == 22345  # an int id as a string one
    # CRC32("abc") = 0x352441C2 = 891568578 = 39158 * 22768 + 19234 (Slurm's own ids are numeric)
    assert master_port_for_job("abc") == 29234


def test_the_batch_scripts_shell_arithmetic_gives_the_same_ports() -> None:
    text = render(LaunchSpec(cmd=["true"]))
    port_lines = [ln for ln in text.splitlines() if ln.startswith(("job_number=", "export MASTER_PORT="))]
    assert port_lines == [
        "job_number=${SLURM_JOB_ID%%[!0-9]*}",
        "export MASTER_PORT=$(( 10000 + job_number % 22768 ))",
    ]
    script = "\n".join(port_lines) + '\necho "$MASTER_PORT"'
    for job_id, port in PORTS.items():
        out = subprocess.run(
            ["bash", "-c", script], env={"SLURM_JOB_ID": job_id}, capture_output=True, text=True, check=True
        )
        assert int(out.stdout) == port, job_id


def test_trainers_rendezvous_on_the_same_port() -> None:
    env = {"SLURM_JOB_ID": "12345", "SLURM_PROCID": "3", "SLURM_NTASKS": "8", "SLURM_JOB_NODELIST": "n[1-2]"}
    env |= {"SLURM_NODEID": "0", "SLURM_LOCALID": "3", "SLURM_TASKS_PER_NODE": "4(x2)"}
    dist = from_environ(env)
    assert dist.master_port == 22345 and dist.torch_environ()["MASTER_PORT"] == "22345"
    assert from_environ({**env, "MASTER_PORT": "29400"}).master_port == 29400  # the environment wins
