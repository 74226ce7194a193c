"""The amd backend on a fake amdgpu sysfs tree, and pyrsmi/amdsmi over a fake ``amdsmi`` module."""

from __future__ import annotations

import builtins
import io
import os
import sys

import pytest
from amd_tree import GCDS, set_value
from ci_helpers import require_module
from fake_amdsmi import make_fake_amdsmi
from probe_helpers import clean_env, dev_root, parse_lines, run_gputui

from gputui.probes.amd.rocm import AmdRocmBackend, quiet_import
from gputui.probes.amd.sysfs import AmdSysfsBackend, decode_gpu_metrics
from gputui.probes.base import ProbeError


def _sample(backend, processes=False):
    backend.open()
    try:
        return {r["pci_bus_id"]: r for r in backend.sample(processes=processes, now=1.0)}
    finally:
        backend.close()


def test_sysfs_records_values_and_units(amd_tree):
    recs = _sample(
        AmdSysfsBackend({"SLURMD_NODENAME": "nid005123"}, root=str(amd_tree), dev_root=dev_root(amd_tree))
    )
    assert list(recs) == ["0000:c1:00.0", "0000:c6:00.0", "0000:d1:00.0"]  # ASPEED card0 skipped
    a = recs["0000:c1:00.0"]
    assert a["gpu_id"] == a["uuid"] == "GPU-5f1e4a2b3c4d5e01"
    assert (a["vendor"], a["source"], a["simulated"], a["host"]) == ("amd", "sysfs", False, "nid005123")
    assert a["util_gpu_pct"] == 91 and a["util_mem_bw_pct"] == 40
    assert a["mem_used_bytes"] == 30 * 2**30 and a["mem_total_bytes"] == 64 * 2**30
    assert a["temp_c"] == 45.0 and a["power_w"] == 412.0 and a["power_limit_w"] == 560.0
    assert a["energy_j"] == 5000.0 and a["clock_sm_mhz"] == 1700 and a["clock_mem_mhz"] == 1600
    c = recs["0000:d1:00.0"]
    assert c["gpu_id"] == "0000:d1:00.0" and c["uuid"] is None  # no unique_id: keyed by PCI bus id
    assert c["util_mem_bw_pct"] == 21  # no mem_busy_percent: umc activity from gpu_metrics
    assert c["energy_j"] is None and c["missing"]["energy_j"] == "not_supported"


def test_mi250x_pair_shows_package_power_once(amd_tree):
    recs = _sample(AmdSysfsBackend({}, root=str(amd_tree), dev_root=dev_root(amd_tree)))
    primary, secondary = recs["0000:c1:00.0"], recs["0000:c6:00.0"]
    assert primary["package_id"] == secondary["package_id"]
    assert primary["power_scope"] == "package" and primary["power_w"] == 412.0
    assert secondary["power_w"] is None and secondary["missing"]["power_w"] == "secondary_die"
    assert recs["0000:d1:00.0"]["package_id"] != primary["package_id"]


def test_files_are_kept_open_and_pcie_bw_never_read(amd_tree, monkeypatch):
    opened = []
    real_os_open, real_open = os.open, builtins.open
    monkeypatch.setattr(os, "open", lambda p, *a, **k: opened.append(str(p)) or real_os_open(p, *a, **k))
    monkeypatch.setattr(builtins, "open", lambda p, *a, **k: opened.append(str(p)) or real_open(p, *a, **k))
    b = AmdSysfsBackend({}, root=str(amd_tree), dev_root=dev_root(amd_tree))
    b.open()
    first = b.sample(processes=False, now=0)[0]["util_gpu_pct"]
    set_value(amd_tree, 1, "gpu_busy_percent", 5)
    opened_at_open = len(opened)
    second = b.sample(processes=False, now=1)[0]["util_gpu_pct"]
    b.close()
    assert (first, second) == (91, 5)
    assert len(opened) == opened_at_open  # sampling opens nothing: kept descriptors + pread
    assert not [p for p in opened if p.endswith("pcie_bw")]


def test_rocr_and_hip_visibility(amd_tree):
    b = AmdSysfsBackend({"ROCR_VISIBLE_DEVICES": "1,2"}, root=str(amd_tree), dev_root=dev_root(amd_tree))
    recs = b.sample(processes=False, now=0) if b.open() else []
    assert [(r["pci_bus_id"], r["index"], r["visible_id"]) for r in recs] == [
        ("0000:c6:00.0", 0, "1"),
        ("0000:d1:00.0", 1, "2"),
    ]
    # secondary die stays secondary even when its primary is not in the step
    assert recs[0]["missing"]["power_w"] == "secondary_die"
    b.close()
    b = AmdSysfsBackend(
        {"ROCR_VISIBLE_DEVICES": "GPU-5f1e4a2b3c4d5e02,2", "HIP_VISIBLE_DEVICES": "1"},
        root=str(amd_tree),
        dev_root=dev_root(amd_tree),
    )
    assert [d.pci_bus_id for d in b.open()] == ["0000:d1:00.0"]
    b.close()


def test_no_amd_devices_and_none_visible(tmp_path, amd_tree):
    with pytest.raises(ProbeError, match="no amdgpu device"):
        AmdSysfsBackend({}, root=str(tmp_path)).open()
    with pytest.raises(ProbeError, match="no GPUs visible"):
        AmdSysfsBackend({"ROCR_VISIBLE_DEVICES": ""}, root=str(amd_tree), dev_root=dev_root(amd_tree)).open()


def test_gpu_metrics_decoding():
    from amd_tree import gpu_metrics_blob

    m = decode_gpu_metrics(gpu_metrics_blob(edge=0xFFFF, gfx=42, power=250, gfxclk=1500))
    assert m["temp_edge_c"] is None and m["gfx_activity_pct"] == 42 and m["socket_power_w"] == 250
    assert m["clock_sm_mhz"] == 1500
    assert decode_gpu_metrics(b"\x00" * 8) == {}
    assert decode_gpu_metrics(b"\x78\x00\x02\x00" + b"\x00" * 200) == {}  # format 2 (APU): not decoded


@pytest.fixture
def fake_amdsmi(monkeypatch):
    mod = make_fake_amdsmi([g["slot"] for g in GCDS])
    monkeypatch.setitem(sys.modules, "amdsmi", mod)
    return mod


def test_pyrsmi_over_fake_amdsmi_fills_gaps_from_sysfs(amd_tree, fake_amdsmi):
    require_module("pyrsmi", "pip install 'gputui[amd]'")
    b = AmdRocmBackend({}, root=str(amd_tree), dev_root=dev_root(amd_tree), library="pyrsmi")
    recs = _sample(b)
    a = recs["0000:c1:00.0"]
    assert b.library == "pyrsmi" and a["source"] == "pyrsmi"
    assert a["util_gpu_pct"] == 60 and a["sources"]["util_gpu_pct"] == "pyrsmi"  # pyrsmi's own code ran
    assert a["mem_used_bytes"] == 10 * 2**30 and a["sources"]["mem_used_bytes"] == "pyrsmi"
    assert a["temp_c"] == 45.0 and a["sources"]["temp_c"] == "sysfs"  # pyrsmi has no temperature getter
    assert a["power_w"] == 412.0 and a["sources"]["power_w"] == "sysfs"  # pyrsmi returned -1
    sec = recs["0000:c6:00.0"]
    assert sec["power_w"] is None and sec["missing"]["power_w"] == "secondary_die"
    assert fake_amdsmi.state["init"] >= 1 and fake_amdsmi.state["shutdown"] == 1  # shut down on close


def test_amdsmi_direct(amd_tree, fake_amdsmi):
    recs = _sample(AmdRocmBackend({}, root=str(amd_tree), dev_root=dev_root(amd_tree), library="amdsmi"))
    a = recs["0000:c1:00.0"]
    assert a["source"] == "amdsmi" and a["temp_c"] == 50 and a["sources"]["temp_c"] == "amdsmi"
    assert a["power_w"] == 400 and a["sources"]["power_w"] == "amdsmi"
    assert a["clock_sm_mhz"] == 1700 and a["sources"]["clock_sm_mhz"] == "sysfs"


def test_amdsmi_without_rocm_prints_nothing_to_stdout(monkeypatch, capsys):
    def noisy_import(name, *args, **kwargs):
        if name == "amdsmi":
            print("/opt/rocm/lib/libamd_smi.so: cannot open shared object file")
            print("Unable to find libamd_smi.so library try installing amd-smi-lib")
            raise KeyError("libamd_smi.so")
        return real_import(name, *args, **kwargs)

    real_import = builtins.__import__
    monkeypatch.delitem(sys.modules, "amdsmi", raising=False)
    monkeypatch.setattr(builtins, "__import__", noisy_import)
    module, why = quiet_import("amdsmi")
    assert module is None and "KeyError" in why and "libamd_smi.so" in why
    assert capsys.readouterr().out == ""


def test_auto_library_falls_back_to_sysfs_quietly(amd_tree, monkeypatch):
    monkeypatch.setattr("gputui.probes.amd.rocm.quiet_import", lambda what: (None, "not installed"))
    b = AmdRocmBackend({}, root=str(amd_tree), dev_root=dev_root(amd_tree))
    recs = _sample(b)
    assert b.library is None and recs["0000:c1:00.0"]["source"] == "sysfs"
    with pytest.raises(ProbeError, match="ROCm library amdsmi unusable"):
        AmdRocmBackend({}, root=str(amd_tree), dev_root=dev_root(amd_tree), library="amdsmi").open()


def test_probe_command_on_fake_sysfs(amd_tree):
    env = clean_env(GPUTUI_SYSFS_ROOT=str(amd_tree), GPUTUI_AMD_LIBRARY="sysfs", ROCR_VISIBLE_DEVICES="0,1")
    res = run_gputui("probe", "--count", "1", env=env)  # auto: no NVML here, amdgpu cards found
    assert res.returncode == 0, res.stderr
    recs = parse_lines(res.stdout)
    assert recs[0]["backend"] == "amd" and recs[0]["gpus"] == 2
    assert [r["vendor"] for r in recs if r["kind"] == "gpu"] == ["amd", "amd"]


def test_quiet_import_keeps_stdout_clean_for_real_modules(capsys):
    quiet_import("amdsmi")
    assert capsys.readouterr().out == ""
    _ = io  # stdout redirection uses io.StringIO
