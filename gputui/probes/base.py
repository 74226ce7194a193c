"""The probe interface and which GPUs belong to this step (backend selection: :mod:`gputui.probes.backends`).

A backend opens once (library init, handles, kept-open files), then :meth:`Backend.sample` returns one
``gpu`` record per visible GPU per tick. Vendor libraries are imported lazily inside the backends, so
importing this package costs nothing beyond the standard library. Nothing here imports Textual, and this
module imports no backend (each backend imports it).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gputui.stream.records import Record


class ProbeError(Exception):
    """An expected failure (no driver, no permission, no GPUs, unknown backend): one line, no traceback."""


def host_name(env: Mapping[str, str] | None = None) -> str:
    """The node name: ``SLURMD_NODENAME`` inside a Slurm step, else the host name."""
    env = os.environ if env is None else env
    return env.get("SLURMD_NODENAME") or socket.gethostname()


def job_id(env: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    return env.get("SLURM_JOB_ID") or None


def _split(value: str | None) -> list[str] | None:
    """A visibility list: None when unset; ``[]`` when set but empty (no GPU visible)."""
    if value is None:
        return None
    value = value.strip()
    if value in ("", "NoDevFiles", "none"):
        return []
    return [part.strip() for part in value.split(",") if part.strip()]


def visibility_list(vendor: str, env: Mapping[str, str] | None = None) -> tuple[list[str] | None, str | None]:
    """The entries that select this step's GPUs and the variable they came from, for ``vendor``.

    NVIDIA: ``CUDA_VISIBLE_DEVICES``, else ``SLURM_STEP_GPUS``, else ``SLURM_JOB_GPUS``.
    AMD: ``ROCR_VISIBLE_DEVICES``, else ``HIP_VISIBLE_DEVICES``/``CUDA_VISIBLE_DEVICES``, else the Slurm ones.
    """
    env = os.environ if env is None else env
    if vendor == "amd":
        names = ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")
    else:
        names = ("CUDA_VISIBLE_DEVICES",)
    for name in (*names, "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"):
        entries = _split(env.get(name))
        if entries is not None:
            return entries, name
    return None, None


@dataclass(slots=True)
class Device:
    """One enumerated GPU (or MIG instance / GCD) with the fields that do not change while it runs."""

    index: int  # position in the backend's own enumeration (before visibility filtering)
    uuid: str | None
    pci_bus_id: str | None
    name: str | None
    extra: dict[str, Any] = field(default_factory=dict)  # mig, package_id, ...
    visible_id: str | None = None
    handle: Any = None

    @property
    def gpu_id(self) -> str:
        return self.uuid or self.pci_bus_id or f"index-{self.index}"


def _matches(entry: str, dev: Device) -> bool:
    low = entry.lower()
    uuid = (dev.uuid or "").lower()
    bus = (dev.pci_bus_id or "").lower()
    if uuid and (low == uuid or (len(low) >= 8 and uuid.startswith(low))):
        return True  # CUDA accepts unique UUID prefixes
    return bool(bus) and low.lstrip("0:") == bus.lstrip("0:")


def select_visible(devices: Sequence[Device], entries: list[str] | None, source: str | None) -> list[Device]:
    """The devices an entry list selects, in the list's order, each tagged with its ``visible_id``.

    Entries are indices into ``devices`` (as the step's enumeration numbers them), UUIDs (or unique
    prefixes) or PCI bus ids. Slurm's ``SLURM_*_GPUS`` hold global ids: when one is out of range the
    node renumbers the step's GPUs from 0 (device cgroups) and every enumerated device belongs to the step.
    """
    if entries is None:
        return list(devices)
    chosen: list[Device] = []
    for entry in entries:
        if entry.isdigit():
            pos = int(entry)
            if pos >= len(devices):
                if source and source.startswith("SLURM_"):
                    return list(devices)
                continue
            dev = devices[pos]
        else:
            dev = next((d for d in devices if _matches(entry, d)), None)
            if dev is None:
                continue
        if dev not in chosen:
            dev.visible_id = entry
            chosen.append(dev)
    return chosen


class Backend:
    """One GPU source. Subclasses set ``name``/``vendor``/``source``/``simulated``."""

    name = "base"
    vendor = "none"
    source = "none"
    simulated = False

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.env = dict(os.environ if env is None else env)
        self.host = host_name(self.env)
        self.job = job_id(self.env)
        self.devices: list[Device] = []
        self._opened = False

    def open(self) -> list[Device]:
        """Initialise, enumerate and filter to this step's GPUs (once). Raises :class:`ProbeError`."""
        if not self._opened:
            self.devices = self._open()
            self._opened = True
        return self.devices

    def _open(self) -> list[Device]:
        return []

    def sample(self, *, processes: bool, now: float) -> list[Record]:
        """One ``gpu`` record per visible device; ``processes`` says whether to read process lists now."""
        return []

    def close(self) -> None:
        """Release libraries and files."""

    def common(self, dev: Device, position: int) -> dict[str, Any]:
        """The identity fields every record of ``dev`` carries."""
        out: dict[str, Any] = {
            "uuid": dev.uuid,
            "pci_bus_id": dev.pci_bus_id,
            "index": position,
            "visible_id": dev.visible_id,
            "name": dev.name,
            "simulated": self.simulated,
        }
        out.update(dev.extra)
        if self.job:
            out["job"] = self.job
        return out


def read_process_info(pid: int, proc_root: str = "/proc") -> tuple[str | None, int | None]:
    """A process's short name and training rank (``RANK``, else ``SLURM_PROCID``) where readable."""
    name = rank = None
    try:
        with open(f"{proc_root}/{pid}/comm", "rb") as fh:
            name = fh.read().decode("utf-8", "replace").strip() or None
    except OSError:
        pass
    try:
        with open(f"{proc_root}/{pid}/environ", "rb") as fh:
            environ = fh.read()
    except OSError:
        return name, None
    found: dict[bytes, bytes] = {}
    for item in environ.split(b"\0"):
        key, _, value = item.partition(b"=")
        if key in (b"RANK", b"SLURM_PROCID"):
            found[key] = value
    for key in (b"RANK", b"SLURM_PROCID"):
        if found.get(key, b"").isdigit():
            rank = int(found[key])
            break
    return name, rank


class ProcessCache:
    """Caches name/rank per pid (reading /proc costs ~20 µs a file); forgets pids no longer seen."""

    def __init__(self, proc_root: str = "/proc") -> None:
        self.proc_root = proc_root
        self._cache: dict[int, tuple[str | None, int | None]] = {}
        self._seen: set[int] = set()

    def entry(self, pid: int, used_mem_bytes: int | None) -> dict[str, Any]:
        info = self._cache.get(pid)
        if info is None:
            info = self._cache[pid] = read_process_info(pid, self.proc_root)
        self._seen.add(pid)
        return {"pid": pid, "used_mem_bytes": used_mem_bytes, "rank": info[1], "name": info[0]}

    def end_pass(self) -> None:
        for pid in set(self._cache) - self._seen:
            del self._cache[pid]
        self._seen.clear()
