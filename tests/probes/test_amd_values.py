"""Every value the amd backends write, against the fake sysfs tree's and fake amdsmi's known values.

The fake tree (tests/fakes/amd_tree.py) holds sysfs units: m°C, µW, µJ, bytes; gpu_metrics holds the
current gfx, SoC and memory clocks (1700/800, 900, 1600 MHz) and its own temperatures and power, which
differ from hwmon's. The expected records restate them converted by hand, so a unit slip (energy µJ / 1e3),
a swapped clock (the SoC clock as the memory clock) or a value from the wrong source fails here. Sampling
reads only the descriptors kept open at start (a file a card lacks is not looked for again), and an amdsmi
getter a device refuses is asked once (the fake counts calls).
"""

from __future__ import annotations

import builtins
import glob
import os
import sys
from collections import Counter
from typing import Any

import pytest
from amd_tree import GCDS
from ci_helpers import require_module
from fake_amdsmi import AMDSMI_STATUS_NO_PERM, AMDSMI_STATUS_NOT_SUPPORTED, make_fake_amdsmi
from probe_helpers import dev_root

from gputui.probes.amd.rocm import AmdRocmBackend
from gputui.probes.amd.sysfs import AmdSysfsBackend

GIB = 2**30
HOST = "nid005123"
ENV = {"SLURMD_NODENAME": HOST, "SLURM_JOB_ID": "777"}
C1, C2, C3 = "0000:c1:00.0", "0000:c6:00.0", "0000:d1:00.0"

# The sysfs values of each card, converted from the tree's units.
SYSFS: dict[str, dict[str, Any]] = {
    C1: {  # MI250X primary die: the package's power
        "gpu_id": "GPU-5f1e4a2b3c4d5e01",
        "uuid": "GPU-5f1e4a2b3c4d5e01",
        "index": 0,
        "name": "AMD Instinct MI250X/MI250",
        "util_gpu_pct": 91,
        "util_mem_bw_pct": 40,
        "mem_used_bytes": 30 * GIB,
        "mem_total_bytes": 64 * GIB,
        "temp_c": 45.0,  # edge 45000 m°C (not junction 52000, not gpu_metrics' 34)
        "temp_mem_c": 48.0,  # hwmon mem 48000 m°C (not gpu_metrics' 38)
        "power_w": 412.0,  # power1_average 412000000 µW
        "power_limit_w": 560.0,  # power1_cap 560000000 µW
        "energy_j": 5000.0,  # energy1_input 5000000000 µJ
        "clock_sm_mhz": 1700,  # gpu_metrics current gfxclk
        "clock_mem_mhz": 1600,  # gpu_metrics current uclk (not socclk 900)
        "package_id": f"{HOST}:{C1}",
        "power_scope": "package",
    },
    C2: {  # MI250X secondary die: no power of its own
        "gpu_id": "GPU-5f1e4a2b3c4d5e02",
        "uuid": "GPU-5f1e4a2b3c4d5e02",
        "index": 1,
        "name": "AMD Instinct MI250X/MI250",
        "util_gpu_pct": 87,
        "util_mem_bw_pct": 35,
        "mem_used_bytes": 29 * GIB,
        "mem_total_bytes": 64 * GIB,
        "temp_c": 44.0,
        "temp_mem_c": 47.0,
        "power_w": None,
        "power_limit_w": None,
        "energy_j": None,
        "clock_sm_mhz": 1700,
        "clock_mem_mhz": 1600,
        "package_id": f"{HOST}:{C1}",
        "missing": {
            "power_w": "secondary_die",
            "power_limit_w": "secondary_die",
            "energy_j": "secondary_die",
        },
    },
    C3: {  # MI210: no unique_id, no mem_busy_percent, no energy counter, no hwmon memory temperature
        "gpu_id": C3,
        "uuid": None,
        "index": 2,
        "name": "AMD Instinct MI210",
        "util_gpu_pct": 12,
        "util_mem_bw_pct": 21,  # gpu_metrics umc activity
        "mem_used_bytes": 2 * GIB,
        "mem_total_bytes": 64 * GIB,
        "temp_c": 33.0,  # hwmon edge (gpu_metrics has none: 0xFFFF)
        "temp_mem_c": 38,  # gpu_metrics mem temperature, °C
        "power_w": 95.0,  # hwmon 95000000 µW, not gpu_metrics' 301
        "power_limit_w": 560.0,
        "energy_j": None,
        "clock_sm_mhz": 800,
        "clock_mem_mhz": 1600,
        "package_id": f"{HOST}:{C3}",
        "power_scope": "package",
        "missing": {"energy_j": "not_supported"},
    },
}
# The fake amdsmi's values of device n (n = 0, 1, 2 for C1, C2, C3).
AMDSMI = {
    slot: {
        "util_gpu_pct": 60 + n,
        "util_mem_bw_pct": 30 + n,
        "mem_used_bytes": (10 + n) * GIB,
        "mem_total_bytes": 64 * GIB,
        "power_w": 400 + n,
        "temp_c": 50 + n,
    }
    for n, slot in enumerate((C1, C2, C3))
}
VALUE_FIELDS = (
    "util_gpu_pct",
    "util_mem_bw_pct",
    "mem_used_bytes",
    "mem_total_bytes",
    "temp_c",
    "temp_mem_c",
    "power_w",
    "power_limit_w",
    "energy_j",
    "clock_sm_mhz",
    "clock_mem_mhz",
)
LIB_FIELDS = ("util_gpu_pct", "util_mem_bw_pct", "mem_used_bytes", "mem_total_bytes", "power_w", "temp_c")
AMDSMI_GETTERS = (
    "amdsmi_get_gpu_activity",
    "amdsmi_get_power_info",
    "amdsmi_get_gpu_memory_usage",
    "amdsmi_get_gpu_memory_total",
    "amdsmi_get_temp_metric",
)


def expected(slot: str, *, source: str = "sysfs", processes: bool, **changes: Any) -> dict[str, Any]:
    """The whole record of the card at ``slot`` (less ``time``), sysfs values with ``changes``."""
    values = {k: v for k, v in SYSFS[slot].items() if k != "missing"}
    missing = dict(SYSFS[slot].get("missing", {}))
    rec: dict[str, Any] = {
        "v": 1,
        "kind": "gpu",
        "host": HOST,
        "vendor": "amd",
        "source": source,
        "simulated": False,
        "pci_bus_id": slot,
        "visible_id": None,
        "job": "777",
        **values,
        "processes": [] if processes else None,
        **changes,
    }
    if not processes:
        missing["processes"] = "not_sampled"
    for field in changes:
        missing.pop(field, None)
    if missing:
        rec["missing"] = missing
    return rec


def sources(slot: str, library: str, from_library: tuple[str, ...], processes: bool) -> dict[str, str]:
    """The ``sources`` map: each field with a value, from ``library`` where listed, else sysfs."""
    out = {k: "sysfs" for k in VALUE_FIELDS if SYSFS[slot][k] is not None}
    out.update(dict.fromkeys(from_library, library))
    if processes:
        out["processes"] = "sysfs"  # KFD, for both libraries
    return out


def sample_ticks(backend: AmdSysfsBackend, processes: list[bool]) -> list[dict[str, dict]]:
    """One dict per tick: records (as written, less ``time``) by PCI bus id; events under ``"events"``."""
    backend.open()
    out = []
    try:
        for tick, procs in enumerate(processes):
            recs = backend.sample(processes=procs, now=100.0 + tick)
            assert {r.time for r in recs} == {100.0 + tick}
            tick_out: dict[str, Any] = {
                r["pci_bus_id"]: {k: v for k, v in r.to_json_dict().items() if k != "time"} for r in recs
            }
            tick_out["events"] = [e.to_json_dict() for e in getattr(backend, "take_events", list)()]
            out.append(tick_out)
    finally:
        backend.close()
    return out


@pytest.fixture
def amdsmi_module(monkeypatch: pytest.MonkeyPatch):
    """Install a fake ``amdsmi`` (factory: ``refuse`` as :func:`make_fake_amdsmi` takes it)."""

    def install(refuse: dict[tuple[str, int], int] | None = None):
        mod = make_fake_amdsmi([g["slot"] for g in GCDS], refuse=refuse)
        monkeypatch.setitem(sys.modules, "amdsmi", mod)
        return mod

    return install


def test_sysfs_every_field(amd_tree):
    backend = AmdSysfsBackend(ENV, root=str(amd_tree), dev_root=dev_root(amd_tree))
    ticks = sample_ticks(backend, [True, False])
    for tick, procs in zip(ticks, (True, False), strict=True):
        assert tick == {"events": [], **{slot: expected(slot, processes=procs) for slot in SYSFS}}


def test_sysfs_sampling_reads_only_the_descriptors_kept_open(amd_tree, monkeypatch):
    """Each tick preads the same files; what a card lacks (energy, mem busy, power) is not looked for."""
    backend = AmdSysfsBackend(ENV, root=str(amd_tree), dev_root=dev_root(amd_tree))
    backend.open()
    reads: list[str] = []
    lookups: list[str] = []
    real_pread = os.pread
    root = f"{amd_tree}/class/drm/"

    def pread(fd: int, size: int, offset: int) -> bytes:
        reads.append(os.readlink(f"/proc/self/fd/{fd}").removeprefix(root))
        return real_pread(fd, size, offset)

    def looked_up(real):
        return lambda path, *a, **k: lookups.append(str(path)) or real(path, *a, **k)

    monkeypatch.setattr(os, "pread", pread)
    for mod, name in ((os, "open"), (os, "stat"), (os, "listdir"), (builtins, "open"), (glob, "glob")):
        monkeypatch.setattr(mod, name, looked_up(getattr(mod, name)))
    per_tick = []
    for tick in range(3):
        backend.sample(processes=False, now=float(tick))
        per_tick.append(Counter(reads))
        reads.clear()
    monkeypatch.undo()
    backend.close()
    kept = {  # per card: the files it has, in its device directory
        1: "gpu_metrics gpu_busy_percent mem_busy_percent mem_info_vram_used hwmon/hwmon4/temp1_input "
        "hwmon/hwmon4/temp3_input hwmon/hwmon4/power1_average hwmon/hwmon4/energy1_input",
        2: "gpu_metrics gpu_busy_percent mem_busy_percent mem_info_vram_used hwmon/hwmon5/temp1_input "
        "hwmon/hwmon5/temp3_input",  # the secondary die has no power or energy files
        3: "gpu_metrics gpu_busy_percent mem_info_vram_used hwmon/hwmon6/temp1_input "
        "hwmon/hwmon6/power1_average",  # no mem_busy_percent, no energy counter
    }
    want = Counter(f"card{card}/device/{name}" for card, names in kept.items() for name in names.split())
    assert per_tick == [want] * 3
    assert lookups == []


def test_pyrsmi_every_field(amd_tree, amdsmi_module):
    require_module("pyrsmi", "pip install 'gputui[amd]'")
    amdsmi_module()
    backend = AmdRocmBackend(ENV, root=str(amd_tree), dev_root=dev_root(amd_tree), library="pyrsmi")
    ticks = sample_ticks(backend, [True, False])
    # pyrsmi gives utilisation and memory; no temperature getter; its power is -1 here ("N/A" current)
    lib = ("util_gpu_pct", "util_mem_bw_pct", "mem_used_bytes", "mem_total_bytes")
    for tick, procs in zip(ticks, (True, False), strict=True):
        assert tick["events"] == []
        for slot in SYSFS:
            from_lib = {k: AMDSMI[slot][k] for k in lib}
            want = expected(slot, source="pyrsmi", processes=procs, **from_lib)
            want["sources"] = sources(slot, "pyrsmi", lib, procs)
            assert tick[slot] == want


def test_amdsmi_every_field_and_one_call_per_getter_per_tick(amd_tree, amdsmi_module):
    mod = amdsmi_module()
    backend = AmdRocmBackend(ENV, root=str(amd_tree), dev_root=dev_root(amd_tree), library="amdsmi")
    ticks = sample_ticks(backend, [True, False, False])
    for tick, procs in zip(ticks, (True, False, False), strict=True):
        assert tick["events"] == []
        for slot in SYSFS:
            lib = LIB_FIELDS if slot != C2 else tuple(f for f in LIB_FIELDS if f != "power_w")
            want = expected(slot, source="amdsmi", processes=procs, **{k: AMDSMI[slot][k] for k in lib})
            want["sources"] = sources(slot, "amdsmi", lib, procs)
            assert tick[slot] == want
    calls = mod.state["calls_by"]
    assert {k: v for k, v in calls.items() if k[0] in AMDSMI_GETTERS} == {
        (name, n): 3 for name in AMDSMI_GETTERS for n in range(3)
    }


def test_amdsmi_getter_a_device_refuses_is_asked_once(amd_tree, amdsmi_module):
    """A refused getter: its field from sysfs, the device's other library values kept, no warnings."""
    mod = amdsmi_module(
        refuse={
            ("amdsmi_get_temp_metric", 2): AMDSMI_STATUS_NOT_SUPPORTED,
            ("amdsmi_get_power_info", 0): AMDSMI_STATUS_NO_PERM,
        }
    )
    backend = AmdRocmBackend(ENV, root=str(amd_tree), dev_root=dev_root(amd_tree), library="amdsmi")
    ticks = sample_ticks(backend, [False] * 4)
    lib_of = {
        C1: tuple(f for f in LIB_FIELDS if f != "power_w"),  # power from hwmon: 412.0
        C2: tuple(f for f in LIB_FIELDS if f != "power_w"),
        C3: tuple(f for f in LIB_FIELDS if f != "temp_c"),  # temperature from hwmon: 33.0
    }
    for tick in ticks:
        assert tick["events"] == []
        for slot, lib in lib_of.items():
            want = expected(slot, source="amdsmi", processes=False, **{k: AMDSMI[slot][k] for k in lib})
            want["sources"] = sources(slot, "amdsmi", lib, False)
            assert tick[slot] == want
    calls = mod.state["calls_by"]
    got = {k: v for k, v in calls.items() if k[0] in AMDSMI_GETTERS}
    want_calls = {(name, n): 4 for name in AMDSMI_GETTERS for n in range(3)}
    want_calls.update({("amdsmi_get_temp_metric", 2): 1, ("amdsmi_get_power_info", 0): 1})
    assert got == want_calls
