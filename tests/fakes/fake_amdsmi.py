"""A fake ``amdsmi`` Python module for pyrsmi's tests: put it in ``sys.modules`` before pyrsmi runs.

pyrsmi (``from pyrsmi import rocml``) tries ``import amdsmi`` first; with this module there, pyrsmi's own
code runs (its ``smi_*`` wrappers over amdsmi) without ROCm. Values differ from the fake sysfs tree's so
tests can tell which source a value came from. Slots follow tests/fakes/amd_tree.GCDS by PCI bus id.

Values of device n (its position in ``slots``): activity gfx 60 + n %, umc 30 + n %; VRAM used (10 + n) GiB
of 64 GiB; average socket power 400 + n W (0 on n = 1, an MI250X secondary die; current power "N/A");
edge temperature 50 + n C. ``mod.state["calls_by"]`` counts each per-device ``amdsmi_get_*`` call per
``(function, n)``; ``refuse={(function, n): status}`` makes that call raise ``AmdSmiLibraryException``
with that amdsmi status (2 not supported, 10 no permission), as the real library does.
"""

from __future__ import annotations

import collections
import enum
import functools
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

AMDSMI_STATUS_NOT_SUPPORTED = 2
AMDSMI_STATUS_NO_PERM = 10


class AmdSmiMemoryType(enum.IntEnum):
    VRAM = 0
    VIS_VRAM = 1
    GTT = 2


class AmdSmiTemperatureType(enum.IntEnum):
    EDGE = 0
    HOTSPOT = 1
    VRAM = 2


class AmdSmiTemperatureMetric(enum.IntEnum):
    CURRENT = 0


class AmdSmiException(Exception):
    pass


class AmdSmiLibraryException(AmdSmiException):
    """A failed library call; ``err_code`` is the amdsmi status (as in amdsmi_exception.py)."""

    def __init__(self, err_code: int) -> None:
        super().__init__(f"Error code:\n\t{err_code} | amdsmi call failed")
        self.err_code = err_code

    def get_error_code(self) -> int:
        return self.err_code


def _counted(
    fn: Callable[..., Any], state: dict, refuse: Mapping[tuple[str, int], int]
) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(h: Any, *args: Any) -> Any:
        state["calls_by"][(fn.__name__, h.n)] += 1
        status = refuse.get((fn.__name__, h.n))
        if status:
            raise AmdSmiLibraryException(status)
        return fn(h, *args)

    return wrapper


def make_fake_amdsmi(
    slots: Sequence[str] = ("0000:c1:00.0", "0000:c6:00.0", "0000:d1:00.0"),
    refuse: Mapping[tuple[str, int], int] | None = None,
) -> types.ModuleType:
    mod = types.ModuleType("amdsmi")
    state: dict[str, Any] = {"init": 0, "shutdown": 0, "calls": 0, "calls_by": collections.Counter()}
    refuse = dict(refuse or {})
    handles = [types.SimpleNamespace(slot=s, n=i) for i, s in enumerate(slots)]

    def amdsmi_init(flags=0):
        state["init"] += 1

    def amdsmi_shut_down():
        state["shutdown"] += 1

    def amdsmi_get_processor_handles():
        return list(handles)

    def amdsmi_get_gpu_device_bdf(h):
        return h.slot

    def amdsmi_get_gpu_device_uuid(h):
        return f"5f1e4a2b-3c4d-5e0{h.n + 1}"

    def amdsmi_get_gpu_activity(h):
        state["calls"] += 1
        return {"gfx_activity": 60 + h.n, "umc_activity": 30 + h.n, "mm_activity": "N/A"}

    def amdsmi_get_gpu_memory_usage(h, kind):
        return (10 + h.n) * 2**30

    def amdsmi_get_gpu_memory_total(h, kind):
        return 64 * 2**30

    def amdsmi_get_power_info(h):
        # the secondary GCD of an MI250X has no power of its own
        watts = 0 if h.n == 1 else 400 + h.n
        return {"current_socket_power": "N/A", "average_socket_power": watts, "power_limit": 560}

    def amdsmi_get_temp_metric(h, kind, metric):
        return 50 + h.n

    for name, value in list(locals().items()):
        if name.startswith("amdsmi_get_") and name != "amdsmi_get_processor_handles":
            setattr(mod, name, _counted(value, state, refuse))
        elif name.startswith("amdsmi_"):
            setattr(mod, name, value)
    mod.AmdSmiMemoryType = AmdSmiMemoryType
    mod.AmdSmiTemperatureType = AmdSmiTemperatureType
    mod.AmdSmiTemperatureMetric = AmdSmiTemperatureMetric
    mod.AmdSmiException = AmdSmiException
    mod.AmdSmiLibraryException = AmdSmiLibraryException
    mod.state = state
    return mod
