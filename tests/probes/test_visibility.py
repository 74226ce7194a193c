"""Which GPUs belong to the step, host/job naming and log file name patterns."""

from __future__ import annotations

import pytest

from gputui.probes.backends import make_backend
from gputui.probes.base import Device, ProbeError, select_visible, visibility_list
from gputui.probes.headless import expand_log_path


def _devs(n=4):
    return [
        Device(index=i, uuid=f"GPU-aaaa{i}bbb-0000", pci_bus_id=f"00000000:{0x10 + i:02X}:00.0", name="x")
        for i in range(n)
    ]


def test_unset_means_all_devices():
    assert [d.index for d in select_visible(_devs(), None, None)] == [0, 1, 2, 3]


def test_indices_select_in_list_order_with_visible_id():
    chosen = select_visible(_devs(), ["2", "0"], "CUDA_VISIBLE_DEVICES")
    assert [d.index for d in chosen] == [2, 0]
    assert [d.visible_id for d in chosen] == ["2", "0"]


def test_uuid_prefix_and_pci_bus_id_select():
    chosen = select_visible(_devs(), ["GPU-aaaa3bbb", "0000:11:00.0"], "CUDA_VISIBLE_DEVICES")
    assert [d.index for d in chosen] == [3, 1]


def test_empty_list_selects_nothing_and_out_of_range_cuda_index_is_dropped():
    assert select_visible(_devs(), [], "CUDA_VISIBLE_DEVICES") == []
    assert [d.index for d in select_visible(_devs(2), ["1", "5"], "CUDA_VISIBLE_DEVICES")] == [1]


def test_slurm_global_ids_out_of_range_mean_renumbered_step():
    # device cgroups: the node shows only the step's 2 GPUs, numbered 0-1, while SLURM_STEP_GPUS says 4,5
    assert [d.index for d in select_visible(_devs(2), ["4", "5"], "SLURM_STEP_GPUS")] == [0, 1]


def test_visibility_precedence():
    env = {"CUDA_VISIBLE_DEVICES": "1", "SLURM_STEP_GPUS": "0,1", "ROCR_VISIBLE_DEVICES": "0"}
    assert visibility_list("nvidia", env) == (["1"], "CUDA_VISIBLE_DEVICES")
    assert visibility_list("amd", env) == (["0"], "ROCR_VISIBLE_DEVICES")
    assert visibility_list("nvidia", {"SLURM_JOB_GPUS": "2,3"}) == (["2", "3"], "SLURM_JOB_GPUS")
    assert visibility_list("nvidia", {"CUDA_VISIBLE_DEVICES": "NoDevFiles"}) == ([], "CUDA_VISIBLE_DEVICES")
    assert visibility_list("nvidia", {}) == (None, None)


def test_log_path_patterns():
    env = {"SLURM_JOB_ID": "4242", "SLURMD_NODENAME": "nid005123.lumi", "SLURM_NODEID": "3"}
    assert expand_log_path("gpu-%j-%N-%n.jsonl", env) == "gpu-4242-nid005123-3.jsonl"
    assert expand_log_path("100%%-%j", {}) == "100%-nojob"
    assert expand_log_path("x-%n", {}) == "x-0"


def test_unknown_backend_is_a_probe_error():
    with pytest.raises(ProbeError, match="unknown backend 'cuda'"):
        make_backend("cuda", {})


def test_auto_never_picks_sim(monkeypatch):
    monkeypatch.setattr("gputui.probes.nvidia.nvml_available", lambda: (False, "libnvidia-ml.so.1 not found"))
    with pytest.raises(ProbeError) as info:
        make_backend("auto", {"GPUTUI_SYSFS_ROOT": "/nonexistent"})
    text = str(info.value)
    assert "libnvidia-ml.so.1" in text and "amdgpu" in text and "--backend sim" in text
