"""Every value the nvidia backend writes, against the fake NVML's known values, and what it asks NVML.

The fake library's values are fixed functions of the GPU index ``i`` and its tick ``n`` (see the header
of tests/fakes/fake_nvml.c); the expected records below restate them with the units NVML uses (mW, mJ,
bytes, MHz), so a unit slip (energy in mJ written as J), a swapped getter (the SM clock shown as the
memory clock) or a value attributed to the wrong GPU fails here. The fake counts every value-getter call
(``FAKE_NVML_CALLS``): a field a GPU refuses is asked once, never again on later ticks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from probe_helpers import clean_env, parse_lines, run_gputui

GIB = 2**30
NAME = "NVIDIA A100-SXM4-40GB"
FIELDS = (
    "util_gpu_pct",
    "util_mem_bw_pct",
    "mem_used_bytes",
    "mem_total_bytes",
    "temp_c",
    "power_w",
    "power_limit_w",
    "energy_j",
    "clock_sm_mhz",
    "clock_mem_mhz",
)
GETTERS = (
    "nvmlDeviceGetUtilizationRates",
    "nvmlDeviceGetMemoryInfo_v2",
    "nvmlDeviceGetMemoryInfo",
    "nvmlDeviceGetTemperature",
    "nvmlDeviceGetPowerUsage",
    "nvmlDeviceGetEnforcedPowerLimit",
    "nvmlDeviceGetPowerManagementLimit",
    "nvmlDeviceGetTotalEnergyConsumption",
    "nvmlDeviceGetClockInfo/graphics",
    "nvmlDeviceGetClockInfo/sm",
    "nvmlDeviceGetClockInfo/mem",
    "nvmlDeviceGetClockInfo/video",
    "nvmlDeviceGetComputeRunningProcesses_v3",
    "nvmlDeviceGetComputeRunningProcesses_v2",
)

# Samples the backend in-process (NVML loads once per process, hence a subprocess per case):
# argv[1] is a JSON list, one ``processes`` flag per tick; prints each record as written.
_DRIVER = """
import json, sys
from gputui.probes.nvidia import NvidiaBackend
from gputui.stream.io import encode_record
backend = NvidiaBackend()
backend.open()
for tick, processes in enumerate(json.loads(sys.argv[1])):
    for record in backend.sample(processes=processes, now=1000.0 + tick) + backend.take_events():
        sys.stdout.write(encode_record(record).decode())
backend.close()
"""


def _fnv(text: str) -> int:
    h = 1469598103934665603
    for byte in text.encode():
        h = ((h ^ byte) * 1099511628211) % 2**64
    return h


def gpu_uuid(i: int, seed: str = "fake") -> str:
    """The fake's UUID of GPU ``i``."""
    h = _fnv(seed)
    return (
        f"GPU-{h & 0xFFFFFFFF:08x}-{(h >> 32) & 0xFFFF:04x}-4{i & 0xFFF:03x}-8{(h >> 48) & 0xFFF:03x}"
        f"-{(h * (i + 1)) & 0xFFFFFFFFFFFF:012x}"
    )


def mig_uuid(i: int, j: int, seed: str = "fake") -> str:
    """The fake's UUID of MIG instance ``j`` of GPU ``i``."""
    h = _fnv(seed)
    return f"MIG-{h & 0xFFFFFFFF:08x}-{j:04x}-4{i:03x}-8{j:03x}-{(h * (j + 7)) & 0xFFFFFFFFFFFF:012x}"


def values(i: int, n: int, total: int = 40 * GIB) -> dict[str, Any]:
    """GPU ``i``'s values at its tick ``n``, converted from NVML's units by hand."""
    util = (7 * i + 13 * n) % 101
    return {
        "util_gpu_pct": util,
        "util_mem_bw_pct": util // 2,
        "mem_used_bytes": (total // 100) * ((20 + 3 * i + n) % 90),  # v2: without the reserved 512 MiB
        "mem_total_bytes": total,
        "temp_c": 40 + (n + i) % 30,
        "power_w": (60_000 + ((13 * n + 7 * i) % 101) * 3000) / 1000,  # mW -> W
        "power_limit_w": 400.0,  # the enforced limit (400000 mW), not the management limit (450000 mW)
        "energy_j": (1_000_000 * (i + 1) + 250_000 * n) / 1000,  # mJ -> J
        "clock_sm_mhz": 1410,
        "clock_mem_mhz": 1215,
    }


def expected(
    i: int,
    n: int,
    *,
    index: int,
    processes: list[dict[str, Any]] | None,
    host: str,
    visible_id: str | None = None,
    job: str | None = None,
    missing: dict[str, str] | None = None,
    seed: str = "fake",
) -> dict[str, Any]:
    """The whole ``gpu`` record of GPU ``i`` at tick ``n`` (less ``time``)."""
    rec: dict[str, Any] = {
        "v": 1,
        "kind": "gpu",
        "host": host,
        "gpu_id": gpu_uuid(i, seed),
        "uuid": gpu_uuid(i, seed),
        "vendor": "nvidia",
        "source": "nvml",
        "simulated": False,
        "pci_bus_id": f"00000000:{0x07 + 0x10 * i:02X}:00.0",
        "index": index,
        "visible_id": visible_id,
        "name": NAME,
        **values(i, n),
        "processes": processes,
    }
    missing = dict(missing or {})
    if processes is None:
        missing.setdefault("processes", "not_sampled")
    for field in missing:
        rec[field] = None
    if missing:
        rec["missing"] = missing
    if job is not None:
        rec["job"] = job
    return rec


def _gpus(records: list[dict]) -> list[dict]:
    return [r for r in records if r["kind"] == "gpu"]


def _without_time(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "time"}


def read_calls(path: Path) -> dict[tuple[str, str], int]:
    """The fake's call counts: (function, device) -> calls."""
    out = {}
    for line in path.read_text().splitlines():
        name, device, calls = line.split()
        out[(name, device)] = int(calls)
    return out


def calls_of(calls: dict[tuple[str, str], int], device: str) -> dict[str, int]:
    """Every counted getter's calls on one device (0 where never called)."""
    return {name: calls.get((name, device), 0) for name in GETTERS}


def per_tick(ticks: int, *, procs_v3: int, **overrides: int) -> dict[str, int]:
    """The getter calls of a GPU that gives every value: one pass a tick, the power limit once."""
    out = dict.fromkeys(GETTERS, 0)
    for name in (
        "nvmlDeviceGetUtilizationRates",
        "nvmlDeviceGetMemoryInfo_v2",
        "nvmlDeviceGetTemperature",
        "nvmlDeviceGetPowerUsage",
        "nvmlDeviceGetTotalEnergyConsumption",
        "nvmlDeviceGetClockInfo/sm",
        "nvmlDeviceGetClockInfo/mem",
    ):
        out[name] = ticks
    out["nvmlDeviceGetEnforcedPowerLimit"] = 1  # read once, at open
    out["nvmlDeviceGetComputeRunningProcesses_v3"] = procs_v3
    out.update(overrides)
    return out


def drive(lib_dir: str, tmp_path: Path, processes: list[bool], **env: str) -> tuple[list[dict], dict]:
    """Sample in a subprocess, one tick per entry of ``processes``; (records, call counts)."""
    calls = tmp_path / "calls.txt"
    res = subprocess.run(
        [sys.executable, "-c", _DRIVER, json.dumps(processes)],
        env=clean_env(LD_LIBRARY_PATH=lib_dir, FAKE_NVML_CALLS=str(calls), **env),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    return parse_lines(res.stdout), read_calls(calls)


@pytest.fixture
def ranked_process():
    """A real process with ``RANK=5`` in its environment (its name: ``sleep``)."""
    proc = subprocess.Popen(["sleep", "120"], env={"PATH": os.environ["PATH"], "RANK": "5"})
    yield proc.pid
    proc.kill()
    proc.wait()


def test_every_value_of_a_probe_run_is_the_drivers(fake_nvml, tmp_path, ranked_process):
    """``gputui probe``: each field of each record, exactly, and one pass of getters per tick."""
    calls = tmp_path / "calls.txt"
    res = run_gputui(
        "probe",
        "--backend",
        "nvidia",
        "--interval",
        "0.05",
        "--count",
        "3",
        env=clean_env(
            LD_LIBRARY_PATH=fake_nvml["default"],
            FAKE_NVML_PROCS=f"0:{ranked_process}:123456789",
            FAKE_NVML_CALLS=str(calls),
            CUDA_VISIBLE_DEVICES="1,0",  # step order differs from NVML's
            SLURMD_NODENAME="gpu07",
            SLURM_JOB_ID="4242",
        ),
    )
    assert res.returncode == 0, res.stderr
    gpus = _gpus(parse_lines(res.stdout))
    assert len(gpus) == 6
    proc = {"pid": ranked_process, "used_mem_bytes": 123456789, "rank": 5, "name": "sleep"}
    common = {"host": "gpu07", "job": "4242", "seed": "gpu07"}  # the fake seeds UUIDs with the node name
    want = []
    for n in (1, 2, 3):  # processes on the first tick only (every 5 s)
        want.append(expected(1, n, index=0, visible_id="1", processes=[] if n == 1 else None, **common))
        want.append(expected(0, n, index=1, visible_id="0", processes=[proc] if n == 1 else None, **common))
    assert [_without_time(g) for g in gpus] == want
    times = [g["time"] for g in gpus]
    assert times[0] == times[1] < times[2] == times[3] < times[4] == times[5]
    got = read_calls(calls)
    # pynvml asks _v3 for the size first, then again for the list when there are processes
    assert calls_of(got, "0") == per_tick(3, procs_v3=2)
    assert calls_of(got, "1") == per_tick(3, procs_v3=1)


def test_refused_fields_are_asked_once_not_every_tick(fake_nvml, tmp_path):
    """GPU 1 refuses every field, GPU 2 some: same records each tick, one call per refused getter."""
    every = "util,mem,temp,power,limit,energy,clock,procs"
    records, calls = drive(
        fake_nvml["default"],
        tmp_path,
        [True] * 4,
        FAKE_NVML_GPUS="3",
        FAKE_NVML_UNSUPPORTED=",".join(f"1:{f}" for f in every.split(",")),
        FAKE_NVML_NO_PERMISSION="2:mem,2:temp,2:energy,2:procs",
    )
    gpus = _gpus(records)
    assert [g["time"] for g in gpus] == [1000.0] * 3 + [1001.0] * 3 + [1002.0] * 3 + [1003.0] * 3
    refused = dict.fromkeys((*FIELDS, "processes"), "not_supported")
    no_perm = dict.fromkeys(
        ("mem_used_bytes", "mem_total_bytes", "temp_c", "energy_j", "processes"), "no_permission"
    )
    for n in (1, 2, 3, 4):
        g0, g1, g2 = (_without_time(g) for g in gpus[3 * (n - 1) : 3 * n])
        assert g0 == expected(0, n, index=0, processes=[], host=g0["host"])
        assert g1 == expected(1, n, index=1, processes=None, host=g0["host"], missing=refused)
        assert g2 == expected(2, n, index=2, processes=None, host=g0["host"], missing=no_perm)
    once = dict.fromkeys(GETTERS, 1)
    once.update(
        {
            "nvmlDeviceGetPowerManagementLimit": 0,
            "nvmlDeviceGetClockInfo/graphics": 0,
            "nvmlDeviceGetClockInfo/video": 0,
        }
    )
    assert calls_of(calls, "1") == once  # memory: v2 refused, then v1 refused; processes: _v3, then _v2
    assert calls_of(calls, "2") == per_tick(
        4,
        procs_v3=1,
        nvmlDeviceGetComputeRunningProcesses_v2=1,
        nvmlDeviceGetMemoryInfo_v2=1,
        nvmlDeviceGetMemoryInfo=1,
        nvmlDeviceGetTemperature=1,
        nvmlDeviceGetTotalEnergyConsumption=1,
    )
    # GPU 1 refusing memory info v2 does not switch the others to v1 (whose "used" counts reserved memory)
    assert calls_of(calls, "0") == per_tick(4, procs_v3=4)


def test_mig_instances_values_and_calls(fake_nvml, tmp_path):
    """MIG instances: their own memory and identity; utilisation and power refused once each."""
    records, calls = drive(fake_nvml["default"], tmp_path, [True, False, False], FAKE_NVML_MIG="1:2")
    gpus = _gpus(records)
    assert len(gpus) == 9
    host = gpus[0]["host"]
    parent = gpu_uuid(1)
    refused = {
        "util_gpu_pct": "not_supported",
        "util_mem_bw_pct": "not_supported",
        "power_w": "not_supported",
    }
    for n in (1, 2, 3):
        g0, m0, m1 = (_without_time(g) for g in gpus[3 * (n - 1) : 3 * n])
        assert g0 == expected(0, n, index=0, processes=[] if n == 1 else None, host=host)
        for j, mig in enumerate((m0, m1)):
            # the parent GPU itself is never read, so its tick count n stays 0; 40 GiB split in two
            want = expected(1, 0, index=1 + j, processes=[] if n == 1 else None, host=host, missing=refused)
            want.update(
                gpu_id=mig_uuid(1, j),
                uuid=mig_uuid(1, j),
                name=f"{NAME} MIG 1g.5gb",
                mem_total_bytes=20 * GIB,
                mem_used_bytes=(20 * GIB // 100) * 23,
                mig={"parent_uuid": parent, "gpu_instance_id": j + 1, "compute_instance_id": 0},
            )
            assert mig == want
    for j in (0, 1):
        assert calls_of(calls, f"1/{j}") == per_tick(
            3, procs_v3=1, nvmlDeviceGetUtilizationRates=1, nvmlDeviceGetPowerUsage=1
        )
    assert calls_of(calls, "0") == per_tick(3, procs_v3=1)
    assert calls_of(calls, "1") == dict.fromkeys(GETTERS, 0)


def test_old_driver_memory_v1_and_processes_v2(fake_nvml, tmp_path):
    """Without ``_v2`` memory info and ``_v3`` process lists: v1 and ``_v2``, each asked once a tick."""
    records, calls = drive(fake_nvml["old"], tmp_path, [True, True], FAKE_NVML_GPUS="1")
    g = [_without_time(r) for r in _gpus(records)]
    assert g == [
        expected(0, 1, index=0, processes=[], host=g[0]["host"]),
        expected(0, 2, index=0, processes=[], host=g[0]["host"]),
    ]
    assert calls_of(calls, "0") == per_tick(
        2,
        procs_v3=0,
        nvmlDeviceGetMemoryInfo_v2=0,
        nvmlDeviceGetMemoryInfo=2,
        nvmlDeviceGetComputeRunningProcesses_v2=2,
    )
