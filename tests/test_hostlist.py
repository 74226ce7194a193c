"""Host-list and tasks-per-node expansion (gputui.hostlist)."""

from __future__ import annotations

import subprocess

import pytest

from gputui.hostlist import HostlistError, expand_hostlist, expand_tasks_per_node


@pytest.mark.parametrize(
    "hostlist, hosts",
    [
        ("node1", ["node1"]),
        ("node[1-2],gpu[07-09]", ["node1", "node2", "gpu07", "gpu08", "gpu09"]),
        (
            "nid[005001-005003,005010],gpu-a100-[01-02]",
            ["nid005001", "nid005002", "nid005003", "nid005010", "gpu-a100-01", "gpu-a100-02"],
        ),
        ("r[1-2]n[01-02]", ["r1n01", "r1n02", "r2n01", "r2n02"]),
        ("a,b,c", ["a", "b", "c"]),
        ("n[8-11]", ["n8", "n9", "n10", "n11"]),
        ("", []),
    ],
)
def test_expand_hostlist(hostlist: str, hosts: list[str]) -> None:
    assert expand_hostlist(hostlist) == hosts


@pytest.mark.parametrize("bad", ["n[1-", "n]1[", "n[3-1]", "n[a-b]", "n[[1]]", "a b", "n[1-9999999]"])
def test_bad_hostlists_raise(bad: str) -> None:
    with pytest.raises(HostlistError):
        expand_hostlist(bad)


def test_tasks_per_node() -> None:
    assert expand_tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    assert expand_tasks_per_node("4") == [4]
    with pytest.raises(HostlistError):
        expand_tasks_per_node("2(x)")


@pytest.mark.slurm
@pytest.mark.parametrize("hostlist", ["node[1-2],gpu[07-09]", "r[1-2]n[01-02]", "x[001-003,010],y"])
def test_agrees_with_scontrol_show_hostnames(slurm_cluster, hostlist: str) -> None:
    out = subprocess.run(
        ["scontrol", "show", "hostnames", hostlist],
        capture_output=True,
        text=True,
        check=True,
        timeout=10,
        env=slurm_cluster.env,
    ).stdout.split()
    assert expand_hostlist(hostlist) == out
