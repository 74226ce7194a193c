"""gputui.slurm.cluster: partitions and GPUs from one ``sinfo`` call.

Fixtures: ``data/sinfo-22.05-{idle,busy}.txt`` captured from :func:`sinfo_argv` on the local Slurm 22.05.8
cluster (busy: one job ``-N2 --gres=gpu:2`` plus one ``-w node1 --gres=gpu:1``); ``sinfo-a100-mixed.txt``
and ``sinfo-lumi-mi250.txt`` are hand-written in the same format (typed GPUs, drained/down/reserved
nodes, a node in two partitions, an inactive partition). Also ``ci/slurm-cluster env`` under ``eval``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from slurm_helpers import REPO

from gputui.slurm import cluster as cluster_mod
from gputui.slurm.cluster import (
    SEP,
    NodeGpus,
    PartitionGpus,
    cluster_gpus,
    parse_gres,
    parse_gres_used,
    parse_sinfo,
    parse_snapshot,
    sinfo_argv,
)

DATA = Path(__file__).parent / "data"


def _snapshot(name: str):
    return parse_snapshot((DATA / name).read_text())


def _by_name(partitions: list[PartitionGpus]) -> dict[str, PartitionGpus]:
    return {p.name: p for p in partitions}


def _states(**counts: int) -> dict[str, int]:
    return {"idle": 0, "mixed": 0, "allocated": 0, "drain": 0, "down": 0, "other": 0, **counts}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gpu:4", [(None, 4)]),
        ("gpu:a100:4(S:0-1)", [("a100", 4)]),
        ("gpu:a100:2,gpu:v100:1", [("a100", 2), ("v100", 1)]),
        ("gpu:mi250:8", [("mi250", 8)]),
        ("gpu:1g.5gb:7(S:0),shard:28", [("1g.5gb", 7)]),
        ("(null)", []),
        ("", []),
        ("shard:8", []),
        ("tmpdisk:100", []),
        ("gpu:v100:2(S:0),tmpdisk:100", [("v100", 2)]),
    ],
)
def test_parse_gres(text, expected):
    assert parse_gres(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gpu:0", [(None, 0)]),
        ("gpu:a100:2(IDX:0-1)", [("a100", 2)]),
        ("gpu:(null):0", [(None, 0)]),
        ("gpu:tesla:0(IDX:N/A)", [("tesla", 0)]),
        ("gpu:3(IDX:0,2-3),gpu:v100:1(IDX:4)", [(None, 3), ("v100", 1)]),
        ("gpu:v100:2(IDX:0-1),tmpdisk:0", [("v100", 2)]),
    ],
)
def test_parse_gres_used(text, expected):
    assert parse_gres_used(text) == expected


def test_sinfo_argv_is_one_unpadded_call():
    argv = sinfo_argv()
    assert argv[:4] == ["sinfo", "-h", "-N", "-O"]
    assert argv[4].split(",") == [f"{name}:{SEP}" for name in cluster_mod.SINFO_FIELDS]


def test_real_22_05_idle():
    snap = _snapshot("sinfo-22.05-idle.txt")
    assert snap.skipped == 0
    [debug] = snap.partitions
    assert (debug.name, debug.default, debug.available) == ("debug", True, "up")
    assert (debug.total_gpus, debug.used_gpus, debug.free_gpus) == (8, 0, 8)
    assert debug.gpu_types == []
    assert debug.node_states == _states(idle=2)
    assert (debug.nodes_total, debug.cpus_idle, debug.cpus_total) == (2, 16, 16)
    assert [n.node for n in snap.nodes] == ["node1", "node2"]
    assert snap.nodes[0] == NodeGpus(
        "node1", ["debug"], "idle", None, 4, 0, cpus_idle=8, cpus_total=8, memory_mb=4000, alloc_mem_mb=0
    )


def test_real_22_05_busy():
    snap = _snapshot("sinfo-22.05-busy.txt")
    [debug] = snap.partitions
    assert (debug.total_gpus, debug.used_gpus, debug.free_gpus) == (8, 5, 3)
    assert debug.node_states == _states(mixed=2)
    assert (debug.cpus_idle, debug.cpus_total) == (12, 16)
    assert [(n.node, n.state, n.used, n.free) for n in snap.nodes] == [
        ("node1", "mixed", 3, 1),
        ("node2", "mixed", 2, 2),
    ]


def test_a100_mixed_partitions_drained_down_and_shared_node():
    snap = _snapshot("sinfo-a100-mixed.txt")
    assert snap.skipped == 1  # the truncated gpu05 line
    assert [p.name for p in snap.partitions] == ["gpu", "long"]  # default first
    parts = _by_name(snap.partitions)

    gpu = parts["gpu"]
    assert gpu.default is True
    assert gpu.gpu_types == ["a100"]
    assert (gpu.total_gpus, gpu.used_gpus, gpu.free_gpus) == (16, 2, 6)  # gpu01 2 + gpu02 4; gpu01 once
    assert gpu.node_states == _states(idle=1, mixed=1, drain=1, down=1)
    assert (gpu.nodes_total, gpu.cpus_idle, gpu.cpus_total) == (4, 96, 256)

    long = parts["long"]
    assert long.default is False
    assert long.gpu_types == ["a100", "v100"]
    assert (long.total_gpus, long.used_gpus, long.free_gpus) == (8, 3, 5)  # gpu02 4 + v100n02 1
    assert long.node_states == _states(idle=1, mixed=1, allocated=1)
    assert (long.nodes_total, long.cpus_idle, long.cpus_total) == (3, 92, 128)

    nodes = {n.node: n for n in snap.nodes}
    assert len(snap.nodes) == 6
    assert nodes["gpu02"].partitions == ["gpu", "long"]
    assert (nodes["gpu03"].category, nodes["gpu03"].usable) == ("drain", False)
    assert (nodes["gpu04"].category, nodes["gpu04"].flags, nodes["gpu04"].base_state) == ("down", "*", "down")
    assert (nodes["v100n01"].gpu_type, nodes["v100n01"].total, nodes["v100n01"].used) == ("v100", 2, 2)
    assert parse_sinfo((DATA / "sinfo-a100-mixed.txt").read_text()) == snap.partitions


def test_lumi_mi250():
    snap = _snapshot("sinfo-lumi-mi250.txt")
    assert snap.skipped == 0
    assert [p.name for p in snap.partitions] == ["dev-g", "eap-g", "small-g", "standard-g"]
    parts = _by_name(snap.partitions)
    assert not any(p.default for p in snap.partitions)
    assert all(p.gpu_types == ["mi250"] for p in snap.partitions)
    expected = {  # total, used, free, states
        "standard-g": (32, 16, 8, _states(allocated=2, idle=1, other=1)),  # nid005003 reserved
        "small-g": (16, 7, 5, _states(mixed=1, drain=1)),  # nid005005 draining
        "dev-g": (16, 0, 8, _states(idle=1, down=1)),  # nid005006 idle*: not responding
        "eap-g": (8, 0, 0, _states(idle=1)),  # partition inactive
    }
    for name, (total, used, free, states) in expected.items():
        p = parts[name]
        assert (p.total_gpus, p.used_gpus, p.free_gpus, p.node_states) == (total, used, free, states), name
    assert parts["eap-g"].available == "inact"
    assert (parts["standard-g"].cpus_idle, parts["standard-g"].cpus_total) == (256, 512)


@pytest.mark.parametrize(
    ("state", "usable", "category"),
    [
        ("idle", True, "idle"),
        ("mixed", True, "mixed"),
        ("idle~", True, "idle"),
        ("allocated", False, "allocated"),
        ("completing", False, "allocated"),
        ("drained", False, "drain"),
        ("draining", False, "drain"),
        ("mixed*", False, "down"),
        ("down", False, "down"),
        ("fail", False, "down"),
        ("maint", False, "other"),
        ("reserved", False, "other"),
        ("idle$", False, "other"),
        ("idle@", False, "other"),
        ("mixed-", False, "other"),
        ("idle+drain", False, "drain"),
    ],
)
def test_node_state_rule(state, usable, category):
    node = NodeGpus("n1", state=state, total=4, used=1)
    assert (node.usable, node.category) == (usable, category)


def test_unreadable_lines_are_counted_blank_lines_not():
    good = (DATA / "sinfo-22.05-idle.txt").read_text().splitlines()[0]
    snap = parse_snapshot(f"{good}\n\nsinfo: garbage\n{good.replace(SEP, '|')}\n")
    assert snap.skipped == 2
    assert [p.total_gpus for p in snap.partitions] == [4]


def test_cluster_gpus_makes_exactly_one_sinfo_call(monkeypatch):
    calls = []

    def fake_run(argv, *, env=None, timeout=15.0):
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, (DATA / "sinfo-22.05-busy.txt").read_text(), "")

    monkeypatch.setattr(cluster_mod, "run_slurm", fake_run)
    snap = cluster_gpus(env={"SLURM_CONF": "/x"})
    assert calls == [sinfo_argv()]
    assert snap.partitions[0].free_gpus == 3


@pytest.mark.slurm
@pytest.mark.timeout(60)
def test_cluster_gpus_on_real_cluster(slurm_cluster):
    snap = cluster_gpus(env=slurm_cluster.env)
    assert snap.skipped == 0
    debug = _by_name(snap.partitions)["debug"]
    assert debug.default is True
    assert debug.total_gpus == len(slurm_cluster.nodes) * slurm_cluster.gpus_per_node == 8
    assert debug.nodes_total == len(slurm_cluster.nodes)
    assert 0 <= debug.free_gpus <= debug.total_gpus


def test_cluster_script_env_is_exported_to_children(tmp_path):
    root = tmp_path / "slurm root"  # a space: the path must be quoted
    res = subprocess.run(
        ["bash", "-c", 'eval "$(ci/slurm-cluster env)"; bash -c "echo \\$SLURM_CONF"'],
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "GPUTUI_SLURM_ROOT": str(root)},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert res.stdout.strip() == str(root / "etc" / "slurm.conf")
