"""A fake amdgpu sysfs tree (``<root>/class/drm/cardN/device/...``) for the amd backend's tests.

``build_amd_tree(root)`` lays out one MI250X package (two GCDs: the primary with package power, the
secondary without a power reading, as rocm_smi_lib sees it), a single-GCD MI210 with ``gpu_metrics``
only for clocks, and an ASPEED BMC card (not AMD) plus connector and render nodes that must be skipped.

It also lays out the KFD tree as amdgpu's ``kfd_topology.c``/``kfd_process.c`` do:
``<root>/class/kfd/kfd/topology/nodes/<n>/{gpu_id,name,properties}`` (node 0 the CPU with gpu_id 0; GPU
nodes name their card only through ``domain`` + ``location_id`` = bus << 8 | device << 3 | function, and
``drm_render_minor``), and ``<root>/class/kfd/kfd/proc/<pid>/`` per compute process (``add_kfd_process``):
``pasid``, ``vram_<gpu_id>`` (bytes), ``sdma_<gpu_id>``, ``stats_<gpu_id>/cu_occupancy``.
``build_dev_tree(dev_root)`` makes ``<dev_root>/dri/renderD<minor>`` stand-ins for the render nodes.
"""

from __future__ import annotations

import shutil
import struct
from collections.abc import Iterable, Sequence
from pathlib import Path

GPU_METRICS_V1_3 = struct.Struct("<HBB6H3HHQQ7H3H")


def gpu_metrics_blob(*, edge=34, hotspot=41, mem=38, gfx=77, umc=21, power=301, gfxclk=1700, uclk=1600):
    """A gpu_metrics v1.3 prefix with the given values (0xFFFF = not supported)."""
    body = GPU_METRICS_V1_3.pack(
        GPU_METRICS_V1_3.size + 40,
        1,
        3,
        edge,
        hotspot,
        mem,
        0xFFFF,
        0xFFFF,
        0xFFFF,
        gfx,
        umc,
        0xFFFF,
        power,
        123456789,
        987654321,
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        gfxclk,
        900,
        uclk,
    )
    return body + b"\0" * 40


GCDS = [
    # card, device id, PCI slot, unique id, busy %, vram used, temps (m°C), power µW (None: secondary)
    dict(
        card=1,
        gpu_id=52110,
        minor=128,
        dev="0x740c",
        slot="0000:c1:00.0",
        uid="0x5f1e4a2b3c4d5e01",
        busy=91,
        mem_busy=40,
        used=30 * 2**30,
        temps={"edge": 45000, "junction": 52000, "mem": 48000},
        power=412_000_000,
        energy=5_000_000_000,
        metrics=gpu_metrics_blob(gfx=88, power=412),
    ),
    dict(
        card=2,
        gpu_id=26386,
        minor=129,
        dev="0x740c",
        slot="0000:c6:00.0",
        uid="0x5f1e4a2b3c4d5e02",
        busy=87,
        mem_busy=35,
        used=29 * 2**30,
        temps={"edge": 44000, "junction": 50000, "mem": 47000},
        power=None,
        energy=None,
        metrics=gpu_metrics_blob(gfx=85, power=0xFFFF),
    ),
    dict(
        card=3,
        gpu_id=7104,
        minor=130,
        dev="0x740f",
        slot="0000:d1:00.0",
        uid=None,
        busy=12,
        mem_busy=None,
        used=2 * 2**30,
        temps={"edge": 33000},
        power=95_000_000,
        energy=None,
        metrics=gpu_metrics_blob(edge=0xFFFF, gfxclk=800, uclk=1600),
    ),
]


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text + "\n")


def build_amd_tree(
    root: Path, gcds: list[dict] | None = None, *, kfd: bool = True, kfd_order: Sequence[int] | None = None
) -> Path:
    """The sysfs tree; ``kfd_order`` lists cards in KFD topology order (default: card order)."""
    drm = root / "class" / "drm"
    gcds = gcds if gcds is not None else GCDS
    for g in gcds:
        dev = drm / f"card{g['card']}" / "device"
        _write(dev / "vendor", "0x1002")
        _write(dev / "device", g["dev"])
        _write(dev / "uevent", f"DRIVER=amdgpu\nPCI_CLASS=38000\nPCI_SLOT_NAME={g['slot']}")
        if g.get("uid"):
            _write(dev / "unique_id", g["uid"][2:])
        _write(dev / "gpu_busy_percent", str(g["busy"]))
        if g.get("mem_busy") is not None:
            _write(dev / "mem_busy_percent", str(g["mem_busy"]))
        _write(dev / "mem_info_vram_used", str(g["used"]))
        _write(dev / "mem_info_vram_total", str(64 * 2**30))
        _write(dev / "pcie_bw", "0 0 0")  # must never be read
        _write(dev / "gpu_metrics", g["metrics"])
        hw = dev / "hwmon" / f"hwmon{g['card'] + 3}"
        for i, (label, value) in enumerate(g["temps"].items(), start=1):
            _write(hw / f"temp{i}_label", label)
            _write(hw / f"temp{i}_input", str(value))
        if g.get("power") is not None:
            _write(hw / "power1_average", str(g["power"]))
            _write(hw / "power1_cap", str(560_000_000))
        if g.get("energy") is not None:
            _write(hw / "energy1_input", str(g["energy"]))
        (drm / f"card{g['card']}-DP-1").mkdir(parents=True, exist_ok=True)
        for sub in (f"card{g['card']}", f"renderD{g['minor']}"):
            (dev / "drm" / sub).mkdir(parents=True, exist_ok=True)
    if kfd:
        by_card = {g["card"]: g for g in gcds}
        _build_kfd_topology(root, [by_card[c] for c in (kfd_order or list(by_card))])
    aspeed = drm / "card0" / "device"
    _write(aspeed / "vendor", "0x1a03")
    _write(aspeed / "device", "0x2000")
    (drm / "renderD128").mkdir(parents=True, exist_ok=True)
    return root


def set_value(root: Path, card: int, name: str, value: int) -> None:
    """Change a value in place (the backend's kept-open descriptor must see it)."""
    path = root / "class" / "drm" / f"card{card}" / "device" / name
    with open(path, "r+") as fh:
        fh.write(f"{value}\n")
        fh.truncate()


def location_id(slot: str) -> tuple[int, int]:
    """KFD's ``(domain, location_id)`` of a PCI slot ``dddd:bb:dd.f``."""
    domain, bus, rest = slot.split(":")
    device, function = rest.split(".")
    return int(domain, 16), int(bus, 16) << 8 | int(device, 16) << 3 | int(function)


_CPU_PROPERTIES = {
    "cpu_cores_count": 64,
    "simd_count": 0,
    "mem_banks_count": 1,
    "location_id": 0,
    "domain": 0,
}


def _gpu_properties(g: dict) -> dict[str, int]:
    domain, location = location_id(g["slot"])
    return {
        "cpu_cores_count": 0,
        "simd_count": 440 if g["dev"] == "0x740c" else 416,
        "mem_banks_count": 1,
        "io_links_count": 1,
        "p2p_links_count": 7,
        "max_waves_per_simd": 8,
        "wave_front_size": 64,
        "gfx_target_version": 90010,
        "vendor_id": 4098,
        "device_id": int(g["dev"], 16),
        "location_id": location,
        "domain": domain,
        "drm_render_minor": g["minor"],
        "hive_id": 0,
        "num_sdma_engines": 2,
        "local_mem_size": 0,
        "fw_version": 79,
        "unique_id": int(g["uid"], 16) if g.get("uid") else 0,
        "num_xcc": 1,
    }


def _build_kfd_topology(root: Path, ordered: list[dict]) -> None:
    kfd = root / "class" / "kfd" / "kfd"
    nodes = kfd / "topology" / "nodes"
    shutil.rmtree(nodes, ignore_errors=True)
    entries = [(0, "", _CPU_PROPERTIES)] + [(g["gpu_id"], "gfx90a", _gpu_properties(g)) for g in ordered]
    for n, (gpu_id, name, props) in enumerate(entries):
        _write(nodes / str(n) / "gpu_id", str(gpu_id))
        _write(nodes / str(n) / "name", name)
        _write(nodes / str(n) / "properties", "\n".join(f"{k} {v}" for k, v in props.items()))
    (kfd / "proc").mkdir(parents=True, exist_ok=True)


def kfd_gpu_id(card: int, gcds: Iterable[dict] = GCDS) -> int:
    return next(g["gpu_id"] for g in gcds if g["card"] == card)


def add_kfd_process(root: Path, pid: int, vram: dict[int, int], gcds: Iterable[dict] = GCDS) -> Path:
    """A KFD process entry using the GPUs of ``vram`` (card → bytes of VRAM)."""
    proc = root / "class" / "kfd" / "kfd" / "proc" / str(pid)
    _write(proc / "pasid", str(32768 + pid % 1000))
    for card, used in vram.items():
        gid = kfd_gpu_id(card, gcds)
        _write(proc / f"vram_{gid}", str(used))
        _write(proc / f"sdma_{gid}", "0")
        _write(proc / f"stats_{gid}" / "cu_occupancy", "0")
        _write(proc / f"stats_{gid}" / "evicted_ms", "0")
    return proc


def build_dev_tree(dev_root: Path, minors: Iterable[int] | None = None) -> Path:
    """``<dev_root>/dri/renderD<minor>`` for each minor (default: every GCD's): the nodes a step may open."""
    dri = dev_root / "dri"
    dri.mkdir(parents=True, exist_ok=True)
    for minor in minors if minors is not None else [g["minor"] for g in GCDS]:
        (dri / f"renderD{minor}").touch()
    return dev_root
