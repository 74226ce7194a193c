"""A fake amdgpu sysfs tree (``<root>/class/drm/cardN/device/...``) for the amd backend's tests.

``build_amd_tree(root)`` lays out one MI250X package (two GCDs: the primary with package power, the
secondary without a power reading, as rocm_smi_lib sees it), a single-GCD MI210 with ``gpu_metrics``
only for clocks, and an ASPEED BMC card (not AMD) plus connector and render nodes that must be skipped.
"""

from __future__ import annotations

import struct
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


def build_amd_tree(root: Path, gcds: list[dict] | None = None) -> Path:
    drm = root / "class" / "drm"
    for g in gcds if gcds is not None else GCDS:
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
