"""The distributed-environment contract (gputui.distenv)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gputui.distenv import DistEnvError, from_environ, master_port_for_job

SLURM_RANK_3 = {
    "SLURM_JOB_ID": "4242",
    "SLURM_PROCID": "3",
    "SLURM_NTASKS": "4",
    "SLURM_LOCALID": "1",
    "SLURM_NODEID": "1",
    "SLURM_JOB_NODELIST": "node[1-2]",
    "SLURM_TASKS_PER_NODE": "2(x2)",
}


def test_slurm_variables() -> None:
    env = from_environ(SLURM_RANK_3)
    assert (env.source, env.rank, env.local_rank, env.world_size, env.node_rank) == ("slurm", 3, 1, 4, 1)
    assert env.nodes == ("node1", "node2") and env.local_world_size == 2
    assert env.master_addr == "node1" and env.master_port == master_port_for_job("4242")
    assert env.torch_environ()["RANK"] == "3" and env.torch_environ()["MASTER_ADDR"] == "node1"


def test_step_nodelist_wins_over_job_nodelist() -> None:
    env = from_environ(
        {
            **SLURM_RANK_3,
            "SLURM_STEP_NODELIST": "node2",
            "SLURM_NODEID": "0",
            "SLURM_STEP_TASKS_PER_NODE": "4",
            "SLURM_LOCALID": "3",
        }
    )
    assert env.nodes == ("node2",) and env.master_addr == "node2" and env.local_world_size == 4


def test_torchrun_variables_win_inside_a_slurm_step() -> None:
    env = from_environ(
        {
            **SLURM_RANK_3,
            "RANK": "5",
            "WORLD_SIZE": "8",
            "LOCAL_RANK": "1",
            "LOCAL_WORLD_SIZE": "4",
            "MASTER_ADDR": "node1",
            "MASTER_PORT": "29400",
        }
    )
    assert (env.source, env.rank, env.world_size, env.local_rank, env.master_port) == (
        "torchrun",
        5,
        8,
        1,
        29400,
    )


def test_single_process_default() -> None:
    env = from_environ({})
    assert (env.source, env.rank, env.world_size, env.is_main, env.is_distributed) == (
        "single",
        0,
        1,
        True,
        False,
    )


@pytest.mark.parametrize(
    "override, problem",
    [
        ({"SLURM_PROCID": "4"}, "outside world size"),
        ({"SLURM_NTASKS": "four"}, "not a whole number"),
        ({"SLURM_JOB_NODELIST": "node[1-"}, "unbalanced"),
        ({"MASTER_PORT": "70000"}, "not a TCP port"),
    ],
)
def test_impossible_layouts_are_errors(override: dict[str, str], problem: str) -> None:
    with pytest.raises(DistEnvError, match=problem):
        from_environ({**SLURM_RANK_3, **override})


@given(st.one_of(st.integers(min_value=0, max_value=10**12), st.text(max_size=30)))
def test_master_port_is_always_in_range(job_id: int | str) -> None:
    port = master_port_for_job(job_id)
    assert 10000 <= port <= 32767 or (str(job_id).strip() == "" and port == 29500)


def test_master_port_is_stable_and_separates_neighbouring_jobs() -> None:
    assert master_port_for_job("123456") == master_port_for_job(123456)
    assert master_port_for_job("123456_7") == master_port_for_job("123456+1") == master_port_for_job(123456)
    assert len({master_port_for_job(j) for j in range(900000, 900100)}) == 100
