"""AMD through ROCm's Python libraries (pyrsmi, amdsmi) on top of the sysfs reader.

Both libraries are optional and imported lazily with stdout redirected: ``import amdsmi`` without ROCm
prints two lines to stdout (which would corrupt a JSON-lines stream) and raises ``KeyError``; pyrsmi's
``smi_initialize()`` lets that KeyError escape. Any failure leaves the sysfs reader alone in charge.

Values come from the library where it has them and are filled from sysfs where it does not (pyrsmi has
no temperature getter and returns -1 instead of raising); each record's ``sources`` says which source
gave each value, and ``source`` names the library. Library devices are matched to sysfs cards by PCI bus
id, so ``ROCR_VISIBLE_DEVICES``/``HIP_VISIBLE_DEVICES`` filtering (done by the sysfs reader) holds.
Choose with ``GPUTUI_AMD_LIBRARY`` = ``auto`` (pyrsmi, then amdsmi, then none) | ``pyrsmi`` | ``amdsmi`` |
``sysfs``. An amdsmi getter a device refuses (not supported there, no permission) is remembered per
(GPU, getter) and not asked again; its value comes from sysfs and the device's other library values stay.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping
from typing import Any

from gputui.probes.amd.sysfs import AmdSysfsBackend
from gputui.probes.base import Device, ProbeError
from gputui.stream.records import Record, event, gpu_sample

LIBRARIES = ("auto", "pyrsmi", "amdsmi", "sysfs")
_LIB_FIELDS = ("util_gpu_pct", "util_mem_bw_pct", "mem_used_bytes", "mem_total_bytes", "power_w", "temp_c")
_REFUSED = {2, 3, 10}  # AMDSMI_STATUS_NOT_SUPPORTED, _NOT_YET_IMPLEMENTED, _NO_PERM


def quiet_import(what: str) -> tuple[Any, str | None]:
    """Import ``amdsmi`` or ``pyrsmi.rocml`` with stdout captured; (module or None, why not)."""
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            if what == "amdsmi":
                import amdsmi as module
            else:
                from pyrsmi import rocml as module
    except Exception as exc:  # KeyError without ROCm; ImportError/OSError/AttributeError elsewhere
        noise = buf.getvalue().strip().splitlines()
        why = f"{type(exc).__name__}: {exc}" + (f" ({noise[-1]})" if noise else "")
        return None, why
    return module, None


def _bdf_text(value: Any) -> str | None:
    """A PCI bus id ``dddd:bb:dd.f`` from pyrsmi's 64-bit BDF id or amdsmi's string/dict."""
    if isinstance(value, int):
        if value < 0:
            return None
        domain, bus, dev, fn = value >> 32, (value >> 8) & 0xFF, (value >> 3) & 0x1F, value & 0x7
        return f"{domain:04x}:{bus:02x}:{dev:02x}.{fn}"
    if isinstance(value, dict):
        try:
            return "{:04x}:{:02x}:{:02x}.{:x}".format(
                *(int(str(value[k]), 16) for k in ("domain", "bus", "device", "function"))
            )
        except (KeyError, ValueError):
            return None
    if isinstance(value, str) and value:
        return value.lower()
    return None


def _ok(value: Any) -> Any:
    """A library value, or None where it signals 'not available' (-1, "N/A", None)."""
    if value is None or value == "N/A" or (isinstance(value, int | float) and value < 0):
        return None
    return value


class AmdRocmBackend(AmdSysfsBackend):
    """sysfs plus one ROCm library; ``self.library`` is ``"pyrsmi"``, ``"amdsmi"`` or None."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        root: str | None = None,
        library: str | None = None,
        **paths: Any,  # dev_root, proc_root
    ) -> None:
        super().__init__(env, root=root, **paths)
        self.want = library or self.env.get("GPUTUI_AMD_LIBRARY", "auto")
        if self.want not in LIBRARIES:
            raise ProbeError(f"amd backend: GPUTUI_AMD_LIBRARY must be one of {', '.join(LIBRARIES)}")
        self.library: str | None = None
        self.lib: Any = None
        self._handles: dict[str, Any] = {}  # gpu_id -> pyrsmi index or amdsmi handle
        self._refused: set[tuple[str, str]] = set()  # (gpu_id, amdsmi getter), never asked again
        self._events: list[Record] = []

    def _open(self) -> list[Device]:
        devices = super()._open()
        order = {"auto": ("pyrsmi", "amdsmi"), "sysfs": ()}.get(self.want, (self.want,))
        why = []
        for name in order:
            err = self._try_library(name, devices)
            if err is None:
                self.library = self.source = name
                break
            why.append(f"{name}: {err}")
        if self.library is None and self.want not in ("auto", "sysfs"):
            raise ProbeError(f"amd backend: ROCm library {self.want} unusable ({'; '.join(why)})")
        return devices

    def _try_library(self, name: str, devices: list[Device]) -> str | None:
        module, err = quiet_import(name)
        if module is None:
            return err
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                if name == "pyrsmi":
                    module.smi_initialize()
                    ids = {
                        _bdf_text(module.smi_get_device_pci_id(i)): i
                        for i in range(module.smi_get_device_count())
                    }
                else:
                    module.amdsmi_init()
                    ids = {
                        _bdf_text(module.amdsmi_get_gpu_device_bdf(h)): h
                        for h in module.amdsmi_get_processor_handles()
                    }
        except Exception as exc:  # pyrsmi leaks amdsmi's KeyError; RuntimeError without a driver
            return f"{type(exc).__name__}: {exc}"
        self.lib = module
        for dev in devices:
            key = (dev.pci_bus_id or "").lower()
            if key in ids:
                self._handles[dev.gpu_id] = ids[key]
        if not self._handles:
            return "its devices match none of the amdgpu cards by PCI bus id"
        return None

    def close(self) -> None:
        if self.lib is not None:
            with contextlib.suppress(Exception), contextlib.redirect_stdout(io.StringIO()):
                if self.library == "pyrsmi":
                    self.lib.smi_shutdown()
                else:
                    self.lib.amdsmi_shut_down()
        self.lib = None
        super().close()

    def take_events(self) -> list[Record]:
        out, self._events = self._events, []
        return out

    def _library_values(self, dev: Device) -> dict[str, Any]:
        handle = self._handles.get(dev.gpu_id)
        if handle is None:
            return {}
        lib = self.lib
        try:
            if self.library == "pyrsmi":
                return {
                    "util_gpu_pct": _ok(lib.smi_get_device_utilization(handle)),
                    "util_mem_bw_pct": _ok(lib.smi_get_device_memory_busy(handle)),
                    "mem_used_bytes": _ok(lib.smi_get_device_memory_used(handle)),
                    "mem_total_bytes": _ok(lib.smi_get_device_memory_total(handle)),
                    "power_w": _ok(lib.smi_get_device_average_power(handle)),
                }
            activity = self._ask(dev, "amdsmi_get_gpu_activity", handle) or {}
            power = self._ask(dev, "amdsmi_get_power_info", handle) or {}
            vram = self._ask(dev, "amdsmi_get_gpu_memory_usage", handle, lib.AmdSmiMemoryType.VRAM)
            total = self._ask(dev, "amdsmi_get_gpu_memory_total", handle, lib.AmdSmiMemoryType.VRAM)
            temp = self._ask(
                dev,
                "amdsmi_get_temp_metric",
                handle,
                lib.AmdSmiTemperatureType.EDGE,
                lib.AmdSmiTemperatureMetric.CURRENT,
            )
            watts = _ok(power.get("current_socket_power")) or _ok(power.get("average_socket_power"))
            return {
                "util_gpu_pct": _ok(activity.get("gfx_activity")),
                "util_mem_bw_pct": _ok(activity.get("umc_activity")),
                "mem_used_bytes": _ok(vram),
                "mem_total_bytes": _ok(total),
                "power_w": watts,
                "temp_c": _ok(temp),
            }
        except Exception as exc:
            self._events.append(
                event("warning", message=f"{self.library} failed on {dev.gpu_id}: {exc}", backend=self.name)
            )
            return {}

    def _ask(self, dev: Device, name: str, *args: Any) -> Any:
        """One amdsmi getter; None, and never asked again for this GPU, where the device refuses it."""
        if (dev.gpu_id, name) in self._refused:
            return None
        try:
            return getattr(self.lib, name)(*args)
        except Exception as exc:
            if getattr(exc, "err_code", None) not in _REFUSED:
                raise
            self._refused.add((dev.gpu_id, name))
            return None

    def sample(self, *, processes: bool, now: float) -> list[Record]:
        if self.library is None:
            return super().sample(processes=processes, now=now)
        out = []
        procs = self.read_processes(processes)  # KFD for both libraries (they read the same tree)
        for pos, dev in enumerate(self.devices):
            values, missing = self.read_values(dev)
            sources = {k: "sysfs" for k, v in values.items() if v is not None}
            secondary = missing.get("power_w") == "secondary_die"
            for key, val in self._library_values(dev).items():
                if val is None or (secondary and key == "power_w"):
                    continue
                values[key] = val
                sources[key] = self.library
                missing.pop(key, None)
            values["processes"], reason = procs[dev.gpu_id]
            if reason:
                missing["processes"] = reason
            else:
                sources["processes"] = "sysfs"
            out.append(
                gpu_sample(
                    host=self.host,
                    gpu_id=dev.gpu_id,
                    vendor="amd",
                    source=self.library,
                    time=now,
                    missing=missing,
                    sources=sources,
                    **values,
                    **self.common(dev, pos),
                )
            )
        return out


def make_amd_backend(env: Mapping[str, str] | None = None, **options: Any) -> AmdSysfsBackend:
    paths = {k: options[k] for k in ("dev_root", "proc_root") if options.get(k)}
    return AmdRocmBackend(env, root=options.get("sysfs_root"), library=options.get("amd_library"), **paths)
