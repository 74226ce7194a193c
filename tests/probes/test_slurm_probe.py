"""``gputui probe`` inside a real Slurm step on two nodes: each node reports its own step's fake GPUs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict

import pytest
from probe_helpers import clean_env, parse_lines, run_gputui

pytestmark = pytest.mark.slurm


def _uuids_of(lib_dir: str, node: str) -> list[str]:
    """The UUIDs the fake NVML gives node ``node`` (all 4 GPUs, no step filtering)."""
    env = clean_env(LD_LIBRARY_PATH=lib_dir, FAKE_NVML_GPUS="4", FAKE_NVML_SEED=node)
    res = run_gputui("probe", "--backend", "nvidia", "--count", "1", env=env)
    assert res.returncode == 0, res.stderr
    return [r["uuid"] for r in parse_lines(res.stdout) if r["kind"] == "gpu"]


def test_probe_in_a_two_node_step_reports_the_steps_gpus(slurm_cluster, fake_nvml):
    env = {**slurm_cluster.env, "LD_LIBRARY_PATH": fake_nvml["default"], "FAKE_NVML_GPUS": "4"}
    for key in ("CUDA_VISIBLE_DEVICES", "FAKE_NVML_SEED"):
        env.pop(key, None)
    nodes = slurm_cluster.nodes[:2]
    cmd = [
        "srun", "--nodes=2", "--ntasks-per-node=1", "--gres=gpu:2", "--quiet", "--label",
        "--time=2", sys.executable, "-m", "gputui", "probe", "--backend", "nvidia",
        "--count", "2", "--interval", "0.1",
    ]  # fmt: skip
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    by_task = defaultdict(list)
    for line in res.stdout.splitlines():
        label, _, payload = line.partition(": ")
        by_task[int(label.strip())].append(json.loads(payload))
    assert sorted(by_task) == [0, 1]
    hosts = {}
    for records in by_task.values():
        start = records[0]
        assert start["event"] == "probe_started" and start["gpus"] == 2 and start["job"]
        gpus = [r for r in records if r["kind"] == "gpu"]
        host = start["host"]
        hosts[host] = gpus
        assert {g["host"] for g in gpus} == {host}
        assert [g["index"] for g in gpus] == [0, 1, 0, 1]
        assert [g["visible_id"] for g in gpus[:2]] == ["0", "1"]
    assert sorted(hosts) == sorted(nodes)
    for node, gpus in hosts.items():
        # the step holds GPUs 0 and 1 of each node (--gres=gpu:2): their UUIDs, not another node's
        assert [g["uuid"] for g in gpus[:2]] == _uuids_of(fake_nvml["default"], node)[:2]
    all_ids = [g["uuid"] for gpus in hosts.values() for g in gpus[:2]]
    assert len(set(all_ids)) == 4
