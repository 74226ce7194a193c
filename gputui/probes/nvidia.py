"""NVIDIA GPUs through NVML (the ``pynvml`` module of nvidia-ml-py, imported only when this backend opens).

``nvmlInit`` once; handles cached by UUID; one pass of getters per GPU per tick. Name, UUID, PCI bus id,
total memory and the power limit are read once. A field that raises NotSupported / NoPermission is
remembered per (GPU, field) and not asked again; a missing C symbol (FunctionNotFound) disables that getter
for the process; memory info falls back from v2 to v1 (for the process without the v2 symbol, for one GPU
where it refuses v2) and process lists from ``_v3`` to ``_v2`` (the unversioned wrapper raises
``NVMLLibraryMismatchError``, which is not an ``NVMLError``). A GPU that falls off the bus (GpuIsLost /
Unknown) is reported once as an ``error`` event and then written with every value missing and
``lost: true`` while the probe keeps sampling the others. MIG instances are listed as GPUs of their own
with a ``mig`` object; utilisation is NotSupported on them, as NVML documents.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any

from gputui.probes.base import Backend, Device, ProbeError, ProcessCache, select_visible, visibility_list
from gputui.stream.records import Record, event, gpu_sample

LIBRARY = "libnvidia-ml.so.1"
_FIELDS = (
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


def _import_pynvml() -> Any:
    try:
        import pynvml
    except ImportError:
        raise ProbeError(
            "nvidia backend: the Python module pynvml (package nvidia-ml-py) is not installed; "
            "install gputui[nvidia]"
        ) from None
    return pynvml


def nvml_available() -> tuple[bool, str]:
    """Whether NVML loads here, without initialising it (for ``--backend auto``)."""
    try:
        _import_pynvml()
    except ProbeError as exc:
        return False, str(exc)
    import ctypes

    try:
        ctypes.CDLL(LIBRARY)
    except OSError:
        return False, f"{LIBRARY} not found (no NVIDIA driver on this node)"
    return True, ""


class NvidiaBackend(Backend):
    name = "nvidia"
    vendor = "nvidia"
    source = "nvml"

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        super().__init__(env)
        self.nv: Any = None
        self._refused: dict[tuple[str, str], str] = {}  # (gpu_id, field) -> reason, never retried
        self._function_missing: set[str] = set()
        self._mem_v2 = True
        self._procs_v3 = True
        self._lost: set[str] = set()
        self._events: list[Record] = []
        self._slow: dict[str, dict[str, Any]] = {}
        self._procs = ProcessCache()
        self._transient: set[str] = set()
        self.driver_version: str | None = None

    # ------------------------------------------------------------------ open / close
    def _open(self) -> list[Device]:
        nv = self.nv = _import_pynvml()
        try:
            nv.nvmlInit()
        except nv.NVMLError as exc:
            raise ProbeError(self._init_message(exc)) from None
        try:
            return self._enumerate()
        except nv.NVMLError as exc:
            raise ProbeError(f"nvidia backend: enumerating GPUs failed: {exc}") from None

    def _init_message(self, exc: Exception) -> str:
        nv = self.nv
        if isinstance(exc, nv.NVMLError_LibraryNotFound):
            return f"nvidia backend: NVIDIA driver library {LIBRARY} not found (looked in the linker path)"
        if isinstance(exc, nv.NVMLError_DriverNotLoaded):
            return f"nvidia backend: {LIBRARY} found but the NVIDIA kernel driver is not loaded"
        if isinstance(exc, nv.NVMLError_NoPermission):
            return "nvidia backend: permission denied opening the NVIDIA devices (/dev/nvidia*)"
        if isinstance(exc, nv.NVMLError_LibRmVersionMismatch):
            return "nvidia backend: driver/library version mismatch (driver upgraded without reload?)"
        return f"nvidia backend: NVML initialisation failed: {exc}"

    def _enumerate(self) -> list[Device]:
        nv = self.nv
        try:
            self.driver_version = nv.nvmlSystemGetDriverVersion()
        except nv.NVMLError:
            self.driver_version = None
        devices: list[Device] = []
        for i in range(nv.nvmlDeviceGetCount()):
            handle = nv.nvmlDeviceGetHandleByIndex(i)
            dev = self._describe(handle, i)
            migs = self._mig_devices(handle, dev)
            devices.extend(migs or [dev])
        entries, source = visibility_list("nvidia", self.env)
        chosen = select_visible(devices, entries, source)
        if not chosen:
            raise ProbeError(
                f"nvidia backend: no GPUs visible to this step (NVML lists {len(devices)}"
                + (f"; {source}={self.env.get(source)!r})" if source else ")")
            )
        for dev in chosen:
            self._read_slow(dev)
        return chosen

    def _describe(self, handle: Any, index: int, mig: dict[str, Any] | None = None) -> Device:
        nv = self.nv
        uuid = self._try(nv.nvmlDeviceGetUUID, handle)
        bus = None
        pci = self._try(nv.nvmlDeviceGetPciInfo, handle)
        if pci is not None:
            bus = pci.busId.decode() if isinstance(pci.busId, bytes) else str(pci.busId)
        name = self._try(nv.nvmlDeviceGetName, handle)
        extra = {"mig": mig} if mig else {}
        return Device(index=index, uuid=uuid, pci_bus_id=bus, name=name, extra=extra, handle=handle)

    def _mig_devices(self, handle: Any, parent: Device) -> list[Device]:
        nv = self.nv
        try:
            current, _pending = nv.nvmlDeviceGetMigMode(handle)
        except nv.NVMLError:
            return []
        if not current:
            return []
        out = []
        for j in range(self._try(nv.nvmlDeviceGetMaxMigDeviceCount, handle) or 0):
            try:
                mh = nv.nvmlDeviceGetMigDeviceHandleByIndex(handle, j)
            except nv.NVMLError:
                continue
            mig = {
                "parent_uuid": parent.uuid,
                "gpu_instance_id": self._try(nv.nvmlDeviceGetGpuInstanceId, mh),
                "compute_instance_id": self._try(nv.nvmlDeviceGetComputeInstanceId, mh),
            }
            dev = self._describe(mh, parent.index, mig)
            dev.pci_bus_id = dev.pci_bus_id or parent.pci_bus_id
            dev.name = dev.name or parent.name
            out.append(dev)
        return out

    def _try(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except self.nv.NVMLError:
            return None

    def _read_slow(self, dev: Device) -> None:
        slow: dict[str, Any] = {}
        limit = self._get(dev, "power_limit_w", self.nv.nvmlDeviceGetEnforcedPowerLimit, dev.handle)
        slow["power_limit_w"] = limit / 1000 if limit is not None else None
        self._slow[dev.gpu_id] = slow

    def close(self) -> None:
        if self.nv is not None and self._opened:
            with contextlib.suppress(Exception):
                self.nv.nvmlShutdown()
        self.nv = None

    def take_events(self) -> list[Record]:
        out, self._events = self._events, []
        return out

    # ------------------------------------------------------------------ sampling
    def _get(self, dev: Device, field: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Call one getter; on failure remember why (per GPU and field) and return None."""
        nv = self.nv
        if (dev.gpu_id, field) in self._refused or fn.__name__ in self._function_missing:
            return None
        try:
            return fn(*args)
        except nv.NVMLError_NotSupported:
            self._refused[(dev.gpu_id, field)] = "not_supported"
        except nv.NVMLError_NoPermission:
            self._refused[(dev.gpu_id, field)] = "no_permission"
        except nv.NVMLError_FunctionNotFound:
            self._function_missing.add(fn.__name__)
        except (nv.NVMLError_GpuIsLost, nv.NVMLError_Unknown) as exc:
            self._mark_lost(dev, exc)
        except nv.NVMLError:
            self._transient.add(field)
        return None

    def _reason(self, dev: Device, field: str, fn_name: str | None = None) -> str:
        if (dev.gpu_id, field) in self._refused:
            return self._refused[(dev.gpu_id, field)]
        if fn_name in self._function_missing:
            return "function_missing"
        return "error"

    def _mark_lost(self, dev: Device, exc: Exception) -> None:
        if dev.gpu_id not in self._lost:
            self._lost.add(dev.gpu_id)
            self._events.append(
                event(
                    "error",
                    message=f"GPU {dev.gpu_id} on {self.host} lost: {exc}; still sampling the others",
                    backend=self.name,
                    host=self.host,
                    gpu_id=dev.gpu_id,
                )
            )

    def _memory(self, dev: Device) -> Any:
        nv = self.nv
        if self._mem_v2 and (dev.gpu_id, "mem_v2") not in self._refused:
            try:
                return nv.nvmlDeviceGetMemoryInfo(dev.handle, version=nv.nvmlMemory_v2)
            except (nv.NVMLError_FunctionNotFound, AttributeError):
                self._mem_v2 = False
            except nv.NVMLError_NotSupported:
                self._refused[(dev.gpu_id, "mem_v2")] = "not_supported"  # this GPU only: v1 from now on
            except nv.NVMLError_NoPermission:
                self._refused[(dev.gpu_id, "mem_v2")] = "no_permission"
            except nv.NVMLError:
                pass
        return self._get(dev, "mem_used_bytes", nv.nvmlDeviceGetMemoryInfo, dev.handle)

    def _processes(self, dev: Device) -> list[Any] | None:
        nv = self.nv
        if (dev.gpu_id, "processes") in self._refused:
            return None
        if self._procs_v3:
            try:
                return nv.nvmlDeviceGetComputeRunningProcesses(dev.handle)
            except (nv.NVMLLibraryMismatchError, nv.NVMLError_FunctionNotFound):
                self._procs_v3 = False
            except nv.NVMLError:
                pass
        return self._get(dev, "processes", nv.nvmlDeviceGetComputeRunningProcesses_v2, dev.handle)

    def sample(self, *, processes: bool, now: float) -> list[Record]:
        out = []
        for pos, dev in enumerate(self.devices):
            if dev.gpu_id in self._lost:
                out.append(self._lost_record(dev, pos, now))
                continue
            self._transient = set()
            rec = self._sample_one(dev, pos, processes, now)
            out.append(rec if dev.gpu_id not in self._lost else self._lost_record(dev, pos, now))
        self._procs.end_pass()
        return out

    def _sample_one(self, dev: Device, pos: int, processes: bool, now: float) -> Record:
        nv, h = self.nv, dev.handle
        values: dict[str, Any] = dict.fromkeys(_FIELDS)
        missing: dict[str, str] = {}
        util = self._get(dev, "util_gpu_pct", nv.nvmlDeviceGetUtilizationRates, h)
        if util is not None:
            values["util_gpu_pct"], values["util_mem_bw_pct"] = util.gpu, util.memory
        elif dev.gpu_id not in self._lost:
            reason = self._reason(dev, "util_gpu_pct", "nvmlDeviceGetUtilizationRates")
            missing["util_gpu_pct"] = missing["util_mem_bw_pct"] = reason
        if dev.gpu_id in self._lost:
            return self._lost_record(dev, pos, now)
        mem = self._memory(dev)
        if mem is not None:
            values["mem_used_bytes"], values["mem_total_bytes"] = int(mem.used), int(mem.total)
        else:
            missing["mem_used_bytes"] = missing["mem_total_bytes"] = self._reason(
                dev, "mem_used_bytes", "nvmlDeviceGetMemoryInfo"
            )
        simple: tuple[tuple[str, Callable[..., Any], tuple[Any, ...], float], ...] = (
            ("temp_c", nv.nvmlDeviceGetTemperature, (h, nv.NVML_TEMPERATURE_GPU), 1),
            ("power_w", nv.nvmlDeviceGetPowerUsage, (h,), 1000),
            ("energy_j", nv.nvmlDeviceGetTotalEnergyConsumption, (h,), 1000),
            ("clock_sm_mhz", nv.nvmlDeviceGetClockInfo, (h, nv.NVML_CLOCK_SM), 1),
            ("clock_mem_mhz", nv.nvmlDeviceGetClockInfo, (h, nv.NVML_CLOCK_MEM), 1),
        )
        for field, fn, args, scale in simple:
            raw = self._get(dev, field, fn, *args)
            if raw is not None:
                values[field] = raw / scale if scale != 1 else raw
            else:
                missing[field] = self._reason(dev, field, fn.__name__)
        values["power_limit_w"] = self._slow[dev.gpu_id].get("power_limit_w")
        if values["power_limit_w"] is None:
            missing["power_limit_w"] = self._reason(dev, "power_limit_w", "nvmlDeviceGetEnforcedPowerLimit")
        if processes:
            procs = self._processes(dev)
            if procs is None:
                values["processes"] = None
                missing["processes"] = self._reason(
                    dev, "processes", "nvmlDeviceGetComputeRunningProcesses_v2"
                )
            else:
                values["processes"] = [self._procs.entry(int(p.pid), p.usedGpuMemory) for p in procs]
        else:
            values["processes"] = None
            missing["processes"] = "not_sampled"
        if dev.gpu_id in self._lost:
            return self._lost_record(dev, pos, now)
        return gpu_sample(
            host=self.host,
            gpu_id=dev.gpu_id,
            vendor="nvidia",
            source="nvml",
            time=now,
            missing=missing,
            **values,
            **self.common(dev, pos),
        )

    def _lost_record(self, dev: Device, pos: int, now: float) -> Record:
        missing = dict.fromkeys((*_FIELDS, "processes"), "error")
        return gpu_sample(
            host=self.host,
            gpu_id=dev.gpu_id,
            vendor="nvidia",
            source="nvml",
            time=now,
            missing=missing,
            lost=True,
            **self.common(dev, pos),
        )
