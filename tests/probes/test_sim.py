"""The simulated backend: deterministic, per-node UUIDs, visibility, always labelled simulated."""

from __future__ import annotations

import itertools

import pytest

from gputui.probes.base import ProbeError
from gputui.probes.sim import SimBackend


def _run(env, ticks=3, processes=True):
    b = SimBackend(env)
    b.open()
    out = [b.sample(processes=processes and t == 0, now=1000.0 + t) for t in range(ticks)]
    return b, out


def test_deterministic_for_a_node_and_different_between_nodes():
    _, a = _run({"SLURMD_NODENAME": "node1"})
    _, b = _run({"SLURMD_NODENAME": "node1"})
    _, c = _run({"SLURMD_NODENAME": "node2"})
    assert [r.to_json_dict() for t in a for r in t] == [r.to_json_dict() for t in b for r in t]
    ids_a = {r["gpu_id"] for r in a[0]}
    ids_c = {r["gpu_id"] for r in c[0]}
    assert len(ids_a) == 4 and not ids_a & ids_c
    assert {r["host"] for r in c[0]} == {"node2"}


def test_always_labelled_simulated_with_all_fields():
    _, ticks = _run({"SLURMD_NODENAME": "n", "SLURM_JOB_ID": "77"})
    for rec in ticks[0]:
        assert rec["simulated"] is True and rec["source"] == "sim"
        assert rec["job"] == "77"
        for key in ("util_gpu_pct", "mem_used_bytes", "mem_total_bytes", "power_w", "temp_c", "energy_j"):
            assert isinstance(rec[key], int | float)
        assert rec["processes"][0]["rank"] is not None
    assert ticks[1][0]["processes"] is None and ticks[1][0]["missing"] == {"processes": "not_sampled"}


def test_training_like_trace_memory_ramps_and_energy_grows():
    b = SimBackend({"SLURMD_NODENAME": "n", "GPUTUI_SIM_GPUS": "1"})
    b.open()
    recs = [b.sample(processes=False, now=t)[0] for t in range(60)]
    mem = [r["mem_used_bytes"] for r in recs]
    assert mem[-1] > 5 * mem[0]
    util = [r["util_gpu_pct"] for r in recs]
    assert max(util) > 85 and min(util[10:]) < 40  # busy plateau with data-loader dips
    energy = [r["energy_j"] for r in recs]
    assert all(b > a for a, b in itertools.pairwise(energy))


def test_honours_cuda_visible_devices_and_slurm_step_gpus():
    b, ticks = _run({"SLURMD_NODENAME": "n", "CUDA_VISIBLE_DEVICES": "3,1"}, ticks=1)
    assert [d.index for d in b.devices] == [3, 1]
    assert [r["index"] for r in ticks[0]] == [0, 1]
    assert [r["visible_id"] for r in ticks[0]] == ["3", "1"]
    b2, _ = _run({"SLURMD_NODENAME": "n", "SLURM_STEP_GPUS": "2"}, ticks=1)
    assert [d.index for d in b2.devices] == [2]
    assert b2.devices[0].uuid == b.devices[0].uuid or b2.devices[0].index == 2


def test_count_vendor_and_model_configurable():
    _b, ticks = _run(
        {"GPUTUI_SIM_GPUS": "8", "GPUTUI_SIM_VENDOR": "amd", "GPUTUI_SIM_MODEL": "MI250X GCD"}, 1
    )
    assert len(ticks[0]) == 8
    assert {r["vendor"] for r in ticks[0]} == {"amd"} and {r["name"] for r in ticks[0]} == {"MI250X GCD"}


def test_no_gpu_visible_is_an_error():
    with pytest.raises(ProbeError, match="no GPUs visible"):
        SimBackend({"CUDA_VISIBLE_DEVICES": ""}).open()
