"""AMD: which cards exist (amdgpu sysfs), which are the step's, and which processes use them (KFD).

ROCm compute processes talk to ``/dev/kfd``, so they never show up in DRM fdinfo; amdgpu lists them in
sysfs instead (``kfd_process.c``; the source of rocm_smi_lib's ``rsmi_compute_process_info_get``)::

    <sysfs>/class/kfd/kfd/topology/nodes/<n>/gpu_id       KFD's id of node n (0: a CPU node)
    <sysfs>/class/kfd/kfd/topology/nodes/<n>/properties   "name value" lines; GPU nodes carry domain,
                                                          location_id (bus << 8 | device << 3 | function)
                                                          and drm_render_minor
    <sysfs>/class/kfd/kfd/proc/<pid>/vram_<gpu_id>        VRAM (bytes) process pid holds on that GPU

A card is matched to its KFD node by PCI address (domain + location id), as rocm_smi_lib does; the same
node gives its render node (``/dev/dri/renderD<minor>``). ROCm's thunk (libhsakmt
``topology_sysfs_check_node_supported``) skips a GPU whose render node it cannot open (ENOENT, EPERM: a
device cgroup), so ROCr, ``ROCR_VISIBLE_DEVICES`` and HIP number only the GPUs a step may open, in KFD
node order. :func:`may_open` makes the same check without opening the node (see its docstring).
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gputui.probes.base import Device, ProbeError, ProcessCache, select_visible, visibility_list

AMD_VENDOR = "0x1002"
_NAMES = {
    "0x7408": "AMD Instinct MI250X",
    "0x740c": "AMD Instinct MI250X/MI250",
    "0x740f": "AMD Instinct MI210",
    "0x738c": "AMD Instinct MI100",
    "0x74a1": "AMD Instinct MI300X",
}


def sysfs_root(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    return env.get("GPUTUI_SYSFS_ROOT", "/sys").rstrip("/") or "/"


def read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("ascii", "replace").strip()
    except OSError:
        return None


def find_amd_cards(root: str) -> list[str]:
    """``<root>/class/drm/cardN/device`` directories of AMD GPUs, in card order."""
    found = []
    for card in glob.glob(f"{root}/class/drm/card*"):
        name = os.path.basename(card)
        if not re.fullmatch(r"card\d+", name):
            continue
        if (read_text(f"{card}/device/vendor") or "").lower() == AMD_VENDOR:
            found.append((int(name[4:]), f"{card}/device"))
    return [path for _, path in sorted(found)]


def _uevent_slot(device_dir: str) -> str | None:
    text = read_text(f"{device_dir}/uevent") or ""
    for line in text.splitlines():
        if line.startswith("PCI_SLOT_NAME="):
            return line.split("=", 1)[1].strip()
    real = os.path.basename(os.path.realpath(device_dir))
    return real if re.fullmatch(r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d", real) else None


@dataclass(frozen=True, slots=True)
class KfdNode:
    node: int  # the topology node number (ROCr's enumeration order)
    gpu_id: int
    render_minor: int | None


def _properties(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        with contextlib.suppress(ValueError):
            out[name] = int(value)
    return out


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("ascii", "replace")
    except OSError:
        return None


def read_topology(root: str) -> dict[str, KfdNode]:
    """KFD's GPU nodes keyed by PCI bus id ``dddd:bb:dd.f``; {} without KFD."""
    out: dict[str, KfdNode] = {}
    for path in glob.glob(f"{root}/class/kfd/kfd/topology/nodes/*"):
        name = os.path.basename(path)
        gpu_id = (_read(f"{path}/gpu_id") or "").strip()
        if not name.isdigit() or not gpu_id.isdigit() or int(gpu_id) == 0:
            continue  # CPU node, or unreadable
        props = _properties(_read(f"{path}/properties") or "")
        if "location_id" not in props:
            continue
        loc, domain = props["location_id"], props.get("domain", 0)
        bdf = f"{domain:04x}:{loc >> 8 & 0xFF:02x}:{loc >> 3 & 0x1F:02x}.{loc & 0x7}"
        out[bdf] = KfdNode(int(name), int(gpu_id), props.get("drm_render_minor"))
    return out


def enumerate_cards(root: str) -> list[Device]:
    """Every amdgpu card as a Device (private ``extra``: ``_dir``, ``_dev_id``, ``_kfd``, ``_render``).

    In KFD topology order where every card has a KFD node (the order ROCr numbers them in), else in
    card order.
    """
    cards = find_amd_cards(root)
    if not cards:
        raise ProbeError(
            f"amd backend: no amdgpu device (vendor {AMD_VENDOR}) under {root}/class/drm "
            "(is the amdgpu driver loaded?)"
        )
    topology = read_topology(root)
    devices = []
    for device_dir in cards:
        unique = read_text(f"{device_dir}/unique_id")
        uuid = f"GPU-{unique.lower().removeprefix('0x')}" if unique else None
        dev_id = (read_text(f"{device_dir}/device") or "").lower()
        name = read_text(f"{device_dir}/product_name") or _NAMES.get(dev_id, f"AMD GPU {dev_id}")
        dev = Device(index=0, uuid=uuid, pci_bus_id=_uevent_slot(device_dir), name=name)
        kfd = topology.get((dev.pci_bus_id or "").lower())
        dev.extra.update(_dir=device_dir, _dev_id=dev_id, _kfd=kfd, _render=render_node(device_dir, kfd))
        devices.append(dev)
    if all(d.extra["_kfd"] for d in devices):
        devices.sort(key=lambda d: d.extra["_kfd"].node)
    for i, dev in enumerate(devices):
        dev.index = i
    return devices


def render_node(device_dir: str, kfd: KfdNode | None) -> str | None:
    """The card's render node name (``renderD128``): KFD's ``drm_render_minor``, else ``device/drm/``."""
    if kfd is not None and kfd.render_minor:
        return f"renderD{kfd.render_minor}"
    found = sorted(glob.glob(f"{device_dir}/drm/renderD*"))
    return os.path.basename(found[0]) if found else None


def may_open(render: str | None, dev_root: str) -> bool | None:
    """Whether this process may open ``<dev_root>/dri/<render>``; None when that cannot be told.

    ``access(2)`` applies the same checks as ``open(2)`` -- file mode, and for device files the device
    cgroup (``devcgroup_inode_permission`` in the kernel's ``inode_permission``, v1 lists and v2 BPF
    programs alike) -- without opening the node: opening an amdgpu render node creates a GPU VM for the
    caller. A missing node counts as not openable, unless ``<dev_root>/dri`` itself is missing (a
    container without /dev/dri, a test): then nothing is known and nothing is filtered.
    """
    if render is None or not os.path.isdir(f"{dev_root}/dri"):
        return None
    return os.access(f"{dev_root}/dri/{render}", os.R_OK | os.W_OK)


def step_devices(devices: list[Device], env: Mapping[str, str], dev_root: str) -> list[Device]:
    """The cards this step uses, in ``ROCR_VISIBLE_DEVICES``/``HIP_VISIBLE_DEVICES`` order.

    ``devices`` carry ``extra["_render"]`` (their render node name). First the cards whose render node
    this process may not open are dropped (:func:`may_open`), as ROCm's thunk drops them; the rest are
    what ROCr numbers 0..n-1, and ``ROCR_VISIBLE_DEVICES`` indices (or UUIDs) select among them, then
    ``HIP_VISIBLE_DEVICES`` among what ROCr exposes. Slurm's ``SLURM_*_GPUS`` hold global ids: under a
    device cgroup the openable cards are the step's.
    """
    usable = [d for d in devices if may_open(d.extra.get("_render"), dev_root) is not False]
    denied = [d.extra.get("_render") or d.gpu_id for d in devices if d not in usable]
    entries, source = visibility_list("amd", env)
    if denied and source and source.startswith("SLURM_"):
        chosen = usable
    else:
        chosen = select_visible(usable, entries, source)
    hip = env.get("HIP_VISIBLE_DEVICES")
    if source == "ROCR_VISIBLE_DEVICES" and hip is not None:  # HIP numbers what ROCr exposes
        chosen = select_visible(chosen, [e for e in hip.split(",") if e.strip()], "HIP_VISIBLE_DEVICES")
    if not chosen:
        cgroup = (
            f", {len(denied)} of them not openable by this process ({dev_root}/dri/{', '.join(denied)}: "
            "device cgroup)"
            if denied
            else ""
        )
        raise ProbeError(
            f"amd backend: no GPUs visible to this step ({len(devices)} amdgpu devices{cgroup}; "
            f"{source}={env.get(source or '')!r})"
        )
    return chosen


def _read_int(path: str) -> int | None:
    text = _read(path)
    try:
        return int(text.split()[0]) if text else None
    except (ValueError, IndexError):
        return None


class KfdProcesses:
    """Reads ``<sysfs>/class/kfd/kfd/proc``: per KFD gpu_id, the processes holding it and their VRAM.

    Names and ranks (``RANK``, else ``SLURM_PROCID``) come from ``<proc_root>/<pid>/environ`` where the
    user may read it (rank ``None`` otherwise), cached per pid like the NVIDIA backend's.
    """

    def __init__(self, root: str, proc_root: str = "/proc") -> None:
        self.dir = f"{root}/class/kfd/kfd/proc"
        self.cache = ProcessCache(proc_root)

    def read(self, gpu_ids: list[int]) -> tuple[dict[int, list[dict[str, Any]]], str | None]:
        """(gpu_id → process entries sorted by pid, None) or ({}, missing reason)."""
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            return {}, "not_supported"  # no KFD (driver without compute support)
        except PermissionError:
            return {}, "no_permission"
        except OSError:
            return {}, "error"
        out: dict[int, list[dict[str, Any]]] = {gid: [] for gid in gpu_ids}
        denied = readable = 0
        for pid in sorted(int(n) for n in names if n.isdigit()):
            try:
                files = set(os.listdir(f"{self.dir}/{pid}"))
            except PermissionError:
                denied += 1
                continue
            except OSError:
                continue  # exited since the listing
            readable += 1
            for gid, rows in out.items():
                if f"vram_{gid}" in files:
                    rows.append(self.cache.entry(pid, _read_int(f"{self.dir}/{pid}/vram_{gid}")))
        self.cache.end_pass()
        if denied and not readable:
            return {}, "no_permission"
        return out, None
