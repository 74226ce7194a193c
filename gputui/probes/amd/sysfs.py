"""AMD GPUs from the amdgpu sysfs files, read with ``os.pread`` on descriptors kept open.

Per GCD per tick: ``gpu_busy_percent``, ``mem_busy_percent``, ``mem_info_vram_used``, one read of
``gpu_metrics`` (decoded once, every field taken from that read) and the hwmon temperature/power/energy
files. ``pcie_bw`` is never read (the kernel sleeps one second on every read). MI250X GCDs are paired into
packages: the secondary die reports no power of its own (rocm_smi_lib's test: energy counter 0 / no power
file), so its ``power_w`` is missing with reason ``secondary_die`` and both carry the same ``package_id``;
the primary's ``power_w`` is the package's power (``power_scope: "package"``).

Which cards are the step's, and their compute processes, come from the KFD tree (:mod:`amd_kfd`): cards
whose render node the step may not open (device cgroup) are dropped before ``ROCR_VISIBLE_DEVICES``
applies, and processes (``/sys/class/kfd/kfd/proc``) are read only on the ticks the sampler asks for them.

The sysfs root is injectable (``GPUTUI_SYSFS_ROOT`` or the ``root`` argument) for tests, and so are the
device root (``GPUTUI_DEV_ROOT``, ``dev_root``; ``/dev``) and ``/proc`` (``proc_root``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import struct
from collections.abc import Mapping
from typing import Any

from gputui.probes.amd.topology import (
    KfdProcesses,
    enumerate_cards,
    read_text,
    step_devices,
    sysfs_root,
)
from gputui.probes.base import Backend, Device
from gputui.stream.records import Record, gpu_sample

MI250X_IDS = {"0x7408", "0x740c", "0x740f"}  # Aldebaran: MI250X, MI250, MI210
_NA16 = 0xFFFF
# gpu_metrics v1.1-v1.3 (struct gpu_metrics_v1_3 in the kernel's kgd_pp_interface.h): after the 4-byte
# header, 6 temperatures (u16), gfx/umc/mm activity (u16), average socket power (u16), energy accumulator
# (u64), system clock counter (u64), 7 average clocks (u16), then current gfx/soc/uclk (u16).
_V1 = struct.Struct("<HBB6H3HHQQ7H3H")


def decode_gpu_metrics(data: bytes) -> dict[str, Any]:
    """The fields gputui uses from a ``gpu_metrics`` blob (format 1, content 1-3); {} for other layouts."""
    if len(data) < _V1.size:
        return {}
    fields = _V1.unpack_from(data)
    size, fmt, content = fields[0], fields[1], fields[2]
    if fmt != 1 or not 1 <= content <= 3 or size < _V1.size:
        return {}
    t_edge, t_hot, t_mem = fields[3], fields[4], fields[5]
    gfx, umc, power = fields[9], fields[10], fields[12]
    cur_gfx, cur_uclk = fields[22], fields[24]

    def ok(v: int) -> int | None:
        return None if v == _NA16 else v

    return {
        "temp_edge_c": ok(t_edge),
        "temp_hotspot_c": ok(t_hot),
        "temp_mem_c": ok(t_mem),
        "gfx_activity_pct": ok(gfx),
        "umc_activity_pct": ok(umc),
        "socket_power_w": ok(power),
        "clock_sm_mhz": ok(cur_gfx),
        "clock_mem_mhz": ok(cur_uclk),
    }


class _Files:
    """Descriptors kept open for one GCD; ``read`` is one pread at offset 0."""

    def __init__(self) -> None:
        self.fds: dict[str, int] = {}

    def add(self, key: str, path: str) -> bool:
        try:
            self.fds[key] = os.open(path, os.O_RDONLY)
            return True
        except OSError:
            return False

    def raw(self, key: str, size: int = 64) -> bytes | None:
        fd = self.fds.get(key)
        if fd is None:
            return None
        try:
            return os.pread(fd, size, 0)
        except OSError:
            return None

    def int(self, key: str) -> int | None:
        data = self.raw(key)
        if not data:
            return None
        try:
            return int(data.split()[0])
        except (ValueError, IndexError):
            return None

    def close(self) -> None:
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()


def _open_files(device_dir: str) -> tuple[_Files, dict[str, Any]]:
    files = _Files()
    info: dict[str, Any] = {}
    for key in ("gpu_busy_percent", "mem_busy_percent", "mem_info_vram_used", "gpu_metrics"):
        files.add(key, f"{device_dir}/{key}")
    hwmons = sorted(glob.glob(f"{device_dir}/hwmon/hwmon*"))
    if hwmons:
        hw = hwmons[0]
        for label_path in sorted(glob.glob(f"{hw}/temp*_label")):
            label = (read_text(label_path) or "").lower()
            key = {"edge": "temp_edge", "junction": "temp_junction", "mem": "temp_mem"}.get(label)
            if key:
                files.add(key, label_path.replace("_label", "_input"))
        if not any(k.startswith("temp") for k in files.fds):
            files.add("temp_edge", f"{hw}/temp1_input")
        if not files.add("power", f"{hw}/power1_average"):
            files.add("power", f"{hw}/power1_input")
        files.add("energy", f"{hw}/energy1_input")
        cap = read_text(f"{hw}/power1_cap")
        info["power_cap_uw"] = int(cap) if cap and cap.isdigit() else None
    total = read_text(f"{device_dir}/mem_info_vram_total")
    info["vram_total"] = int(total) if total and total.isdigit() else None
    return files, info


class AmdSysfsBackend(Backend):
    name = "amd"
    vendor = "amd"
    source = "sysfs"

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        root: str | None = None,
        dev_root: str | None = None,
        proc_root: str = "/proc",
    ) -> None:
        super().__init__(env)
        self.root = root or sysfs_root(self.env)
        self.dev_root = (dev_root or self.env.get("GPUTUI_DEV_ROOT") or "/dev").rstrip("/")
        self.files: dict[str, _Files] = {}
        self.info: dict[str, dict[str, Any]] = {}
        self.kfd = KfdProcesses(self.root, proc_root)
        self._kfd_ids: dict[str, int] = {}  # gpu_id -> KFD gpu_id

    def _open(self) -> list[Device]:
        devices = enumerate_cards(self.root)
        chosen = step_devices(devices, self.env, self.dev_root)
        for dev in chosen:
            files, info = _open_files(dev.extra["_dir"])
            self.files[dev.gpu_id] = files
            self.info[dev.gpu_id] = info
            if dev.extra["_kfd"] is not None:
                self._kfd_ids[dev.gpu_id] = dev.extra["_kfd"].gpu_id
        self._pair_packages(devices)
        for dev in devices:
            for key in ("_dir", "_dev_id", "_kfd", "_render"):
                dev.extra.pop(key, None)
        return chosen

    def _pair_packages(self, devices: list[Device]) -> None:
        """MI250X: a GCD without its own power reading is the secondary die of the GCD before it."""
        primary: Device | None = None
        for dev in devices:
            if dev.extra.get("_dev_id") not in MI250X_IDS:
                primary = None
                continue
            found = glob.glob(f"{dev.extra['_dir']}/hwmon/hwmon*/power1_average")
            power = read_text(found[0]) if found else None
            secondary = power in (None, "", "0") and primary is not None
            if secondary and primary is not None:
                package = primary.extra["package_id"]
                dev.extra["package_id"] = package
                self.info.setdefault(dev.gpu_id, {})["secondary"] = True
                primary = None
            else:
                dev.extra["package_id"] = f"{self.host}:{dev.pci_bus_id or dev.gpu_id}"
                dev.extra["power_scope"] = "package"
                primary = dev

    def close(self) -> None:
        for files in self.files.values():
            files.close()
        self.files.clear()

    def read_values(self, dev: Device) -> tuple[dict[str, Any], dict[str, str]]:
        """The sysfs values of one GCD and the reasons for those it lacks."""
        f = self.files[dev.gpu_id]
        info = self.info[dev.gpu_id]
        metrics = decode_gpu_metrics(f.raw("gpu_metrics", 512) or b"")
        v: dict[str, Any] = {}
        v["util_gpu_pct"] = f.int("gpu_busy_percent")
        v["util_mem_bw_pct"] = f.int("mem_busy_percent")
        if v["util_mem_bw_pct"] is None:
            v["util_mem_bw_pct"] = metrics.get("umc_activity_pct")
        v["mem_used_bytes"] = f.int("mem_info_vram_used")
        v["mem_total_bytes"] = info.get("vram_total")
        temp = f.int("temp_edge")
        if temp is None:
            temp = f.int("temp_junction")
        v["temp_c"] = temp / 1000 if temp is not None else metrics.get("temp_edge_c")
        mem_temp = f.int("temp_mem")
        if mem_temp is not None or metrics.get("temp_mem_c") is not None:
            v["temp_mem_c"] = mem_temp / 1000 if mem_temp is not None else metrics.get("temp_mem_c")
        missing: dict[str, str] = {}
        if info.get("secondary"):
            v["power_w"] = v["power_limit_w"] = v["energy_j"] = None
            missing.update(power_w="secondary_die", power_limit_w="secondary_die", energy_j="secondary_die")
        else:
            power = f.int("power")
            v["power_w"] = power / 1e6 if power is not None else metrics.get("socket_power_w")
            cap = info.get("power_cap_uw")
            v["power_limit_w"] = cap / 1e6 if cap else None
            energy = f.int("energy")
            v["energy_j"] = energy / 1e6 if energy is not None else None
        v["clock_sm_mhz"] = metrics.get("clock_sm_mhz")
        v["clock_mem_mhz"] = metrics.get("clock_mem_mhz")
        for key, val in v.items():
            if val is None and key not in missing:
                missing[key] = "not_supported"
        return v, missing

    def read_processes(self, processes: bool) -> dict[str, tuple[list | None, str | None]]:
        """Per GPU: (its KFD processes, None), or (None, why not): one pass over the KFD tree for all."""
        if not processes:
            return {d.gpu_id: (None, "not_sampled") for d in self.devices}
        lists, reason = self.kfd.read(sorted(set(self._kfd_ids.values())))
        out: dict[str, tuple[list | None, str | None]] = {}
        for dev in self.devices:
            gid = self._kfd_ids.get(dev.gpu_id)
            if reason is None and gid is None:
                out[dev.gpu_id] = (None, "not_supported")  # card absent from the KFD topology
            else:
                out[dev.gpu_id] = (None, reason) if reason else (lists[gid], None)
        return out

    def sample(self, *, processes: bool, now: float) -> list[Record]:
        out = []
        procs = self.read_processes(processes)
        for pos, dev in enumerate(self.devices):
            values, missing = self.read_values(dev)
            values["processes"], reason = procs[dev.gpu_id]
            if reason:
                missing["processes"] = reason
            out.append(
                gpu_sample(
                    host=self.host,
                    gpu_id=dev.gpu_id,
                    vendor="amd",
                    source="sysfs",
                    time=now,
                    missing=missing,
                    **values,
                    **self.common(dev, pos),
                )
            )
        return out
