"""The nvidia backend through nvidia-ml-py's real ctypes path, on the fake libnvidia-ml.so.1.

NVML is loaded once per process, so every case runs ``gputui probe`` in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys

from probe_helpers import clean_env, parse_lines, run_gputui


def _probe(lib_dir, *args, **env):
    res = run_gputui(
        "probe",
        "--backend",
        "nvidia",
        "--interval",
        "0.05",
        *args,
        env=clean_env(LD_LIBRARY_PATH=lib_dir, **env),
    )
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    return parse_lines(res.stdout)


def _gpus(records):
    return [r for r in records if r["kind"] == "gpu"]


def test_records_from_nvml(fake_nvml):
    recs = _probe(fake_nvml["default"], "--count", "2", FAKE_NVML_GPUS="3", SLURMD_NODENAME="gpu07")
    assert recs[0]["event"] == "probe_started" and recs[0]["backend"] == "nvidia" and recs[0]["gpus"] == 3
    gpus = _gpus(recs)
    assert len(gpus) == 6
    first = gpus[0]
    assert first["gpu_id"] == first["uuid"] and first["uuid"].startswith("GPU-")
    assert first["source"] == "nvml" and first["simulated"] is False and first["host"] == "gpu07"
    assert first["pci_bus_id"] == "00000000:07:00.0" and first["name"] == "NVIDIA A100-SXM4-40GB"
    assert first["power_limit_w"] == 400.0 and first["mem_total_bytes"] == 40 * 2**30
    assert first["clock_sm_mhz"] == 1410 and 60 <= first["power_w"] <= 400
    assert "missing" not in first
    assert gpus[3]["missing"] == {"processes": "not_sampled"}  # processes every few seconds, not every tick
    assert [r["kind"] for r in recs].count("host") == 2
    assert recs[-1]["event"] == "probe_stopped" and recs[-1]["samples"] == 2


def test_not_supported_and_no_permission_are_missing_not_zero(fake_nvml):
    recs = _probe(
        fake_nvml["default"],
        "--count",
        "2",
        FAKE_NVML_UNSUPPORTED="1:power,*:energy",
        FAKE_NVML_NO_PERMISSION="0:temp",
    )
    g0, g1 = _gpus(recs)[:2]
    assert g1["power_w"] is None and g1["missing"]["power_w"] == "not_supported"
    assert g0["power_w"] is not None
    assert g0["energy_j"] is None and g0["missing"]["energy_j"] == "not_supported"
    assert g0["temp_c"] is None and g0["missing"]["temp_c"] == "no_permission"
    assert g1["temp_c"] is not None


def test_processes_with_rank_from_environment(fake_nvml):
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"],
        stdin=subprocess.PIPE,
        env={**os.environ, "RANK": "13"},
    )
    try:
        recs = _probe(fake_nvml["default"], "--count", "1", FAKE_NVML_PROCS=f"0:{child.pid}:123456789")
    finally:
        child.communicate(b"")
    procs = _gpus(recs)[0]["processes"]
    assert len(procs) == 1
    assert (procs[0]["pid"], procs[0]["used_mem_bytes"], procs[0]["rank"]) == (child.pid, 123456789, 13)
    assert procs[0]["name"].startswith("python")
    assert _gpus(recs)[1]["processes"] == []


def test_old_driver_without_v3_and_memory_v2_falls_back(fake_nvml):
    recs = _probe(fake_nvml["old"], "--count", "1", FAKE_NVML_PROCS="1:4242:1000")
    g0, g1 = _gpus(recs)
    assert g1["processes"][0]["pid"] == 4242  # _v3 missing: NVMLLibraryMismatchError -> _v2
    assert g0["mem_used_bytes"] > 0 and "missing" not in g0  # v1 memory info


def test_gpu_lost_mid_run_is_marked_and_the_probe_continues(fake_nvml):
    recs = _probe(fake_nvml["default"], "--count", "5", FAKE_NVML_LOST="1:3")
    gpus = _gpus(recs)
    lost = [g for g in gpus if g["index"] == 1]
    ok = [g for g in gpus if g["index"] == 0]
    assert len(lost) == len(ok) == 5
    assert lost[1].get("lost") is None and lost[1]["util_gpu_pct"] is not None
    assert all(g["lost"] is True and g["util_gpu_pct"] is None for g in lost[3:])
    assert lost[4]["missing"]["util_gpu_pct"] == "error"
    assert all(g["util_gpu_pct"] is not None for g in ok)
    errors = [r for r in recs if r.get("event") == "error"]
    assert len(errors) == 1 and "lost" in errors[0]["message"]


def test_mig_instances_are_listed(fake_nvml):
    recs = _probe(fake_nvml["default"], "--count", "1", FAKE_NVML_MIG="1:2")
    gpus = _gpus(recs)
    assert len(gpus) == 3
    migs = [g for g in gpus if "mig" in g]
    assert len(migs) == 2 and all(g["uuid"].startswith("MIG-") for g in migs)
    parent = migs[0]["mig"]["parent_uuid"]
    assert parent.startswith("GPU-") and parent not in {g["uuid"] for g in gpus}
    assert [m["mig"]["gpu_instance_id"] for m in migs] == [1, 2]
    assert migs[0]["util_gpu_pct"] is None and migs[0]["missing"]["util_gpu_pct"] == "not_supported"
    assert migs[0]["mem_used_bytes"] is not None


def test_visibility_by_index_and_uuid(fake_nvml):
    all_ids = [g["uuid"] for g in _gpus(_probe(fake_nvml["default"], "--count", "1", FAKE_NVML_GPUS="4"))]
    recs = _probe(fake_nvml["default"], "--count", "1", FAKE_NVML_GPUS="4", CUDA_VISIBLE_DEVICES="2,0")
    assert [g["uuid"] for g in _gpus(recs)] == [all_ids[2], all_ids[0]]
    assert [g["index"] for g in _gpus(recs)] == [0, 1]
    recs = _probe(fake_nvml["default"], "--count", "1", FAKE_NVML_GPUS="4", CUDA_VISIBLE_DEVICES=all_ids[3])
    assert [g["uuid"] for g in _gpus(recs)] == [all_ids[3]]


def _one_line_error(res):
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gputui: error: ") and "Traceback" not in res.stderr
    assert res.stdout == ""
    return lines[0]


def test_no_library_names_what_was_looked_for(tmp_path):
    line = _one_line_error(
        run_gputui("probe", "--backend", "nvidia", env=clean_env(LD_LIBRARY_PATH=str(tmp_path)))
    )
    assert "nvidia backend" in line and "libnvidia-ml.so.1" in line


def test_driver_not_loaded_and_permission_denied(fake_nvml):
    env = clean_env(LD_LIBRARY_PATH=fake_nvml["default"], FAKE_NVML_INIT="9")
    assert "kernel driver is not loaded" in _one_line_error(
        run_gputui("probe", "--backend", "nvidia", env=env)
    )
    env["FAKE_NVML_INIT"] = "4"
    assert "permission denied" in _one_line_error(run_gputui("probe", "--backend", "nvidia", env=env))


def test_no_gpus_visible(fake_nvml):
    env = clean_env(LD_LIBRARY_PATH=fake_nvml["default"], CUDA_VISIBLE_DEVICES="")
    assert "no GPUs visible" in _one_line_error(run_gputui("probe", "--backend", "nvidia", env=env))


def test_auto_picks_nvidia_when_the_library_loads(fake_nvml):
    res = run_gputui("probe", "--count", "1", env=clean_env(LD_LIBRARY_PATH=fake_nvml["default"]))
    assert res.returncode == 0, res.stderr
    assert parse_lines(res.stdout)[0]["backend"] == "nvidia"


def test_auto_without_any_driver_is_a_one_line_error():
    line = _one_line_error(run_gputui("probe", env=clean_env()))
    assert "no GPU driver found" in line and "--backend sim" in line
