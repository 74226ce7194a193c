"""A fake ``amdsmi`` Python module for pyrsmi's tests: put it in ``sys.modules`` before pyrsmi runs.

pyrsmi (``from pyrsmi import rocml``) tries ``import amdsmi`` first; with this module there, pyrsmi's own
code runs (its ``smi_*`` wrappers over amdsmi) without ROCm. Values differ from the fake sysfs tree's so
tests can tell which source a value came from. Slots follow tests/fakes/amd_tree.GCDS by PCI bus id.
"""

from __future__ import annotations

import enum
import types


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


def make_fake_amdsmi(slots=("0000:c1:00.0", "0000:c6:00.0", "0000:d1:00.0")) -> types.ModuleType:
    mod = types.ModuleType("amdsmi")
    state = {"init": 0, "shutdown": 0, "calls": 0}
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
        if name.startswith("amdsmi_"):
            setattr(mod, name, value)
    mod.AmdSmiMemoryType = AmdSmiMemoryType
    mod.AmdSmiTemperatureType = AmdSmiTemperatureType
    mod.AmdSmiTemperatureMetric = AmdSmiTemperatureMetric
    mod.AmdSmiException = AmdSmiException
    mod.state = state
    return mod
