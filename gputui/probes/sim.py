"""Simulated GPUs: deterministic training-like traces, always labelled ``simulated``.

Configuration by environment (the probe runs as a Slurm step, so this travels with the step):
``GPUTUI_SIM_GPUS`` (GPUs per node, default 4), ``GPUTUI_SIM_VENDOR`` (``nvidia``/``amd``) and
``GPUTUI_SIM_MODEL``. Each node gets its own UUIDs (seeded by the node name, ``SLURMD_NODENAME`` when set),
and the step's GPUs are picked from ``CUDA_VISIBLE_DEVICES``/``ROCR_VISIBLE_DEVICES``/``SLURM_STEP_GPUS``
like a real backend. Values depend only on (node, GPU, sample number), so runs are reproducible.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping

from gputui.probes.base import Backend, Device, ProbeError, select_visible, visibility_list
from gputui.stream.records import Record, gpu_sample

_MODELS = {
    "nvidia": ("NVIDIA A100-SXM4-40GB", 40 * 1024**3, 400.0, 1410, 1215),
    "amd": ("AMD Instinct MI250X", 64 * 1024**3, 560.0, 1700, 1600),
}


def _unit(*parts: object) -> float:
    """A deterministic number in [0, 1) from ``parts``."""
    digest = hashlib.blake2b("/".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


class SimBackend(Backend):
    name = "sim"
    source = "sim"
    simulated = True

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        super().__init__(env)
        try:
            self.count = int(self.env.get("GPUTUI_SIM_GPUS", "4"))
        except ValueError:
            raise ProbeError("sim backend: GPUTUI_SIM_GPUS must be a whole number") from None
        self.vendor = self.env.get("GPUTUI_SIM_VENDOR", "nvidia")
        if self.vendor not in _MODELS:
            raise ProbeError("sim backend: GPUTUI_SIM_VENDOR must be nvidia or amd")
        model, self.mem_total, self.power_limit, self.clock_sm, self.clock_mem = _MODELS[self.vendor]
        self.model = self.env.get("GPUTUI_SIM_MODEL", model)
        self.interval = 1.0
        self._tick = 0
        self._energy: dict[str, float] = {}

    def _open(self) -> list[Device]:
        devices = []
        for i in range(self.count):
            h = hashlib.blake2b(f"{self.host}/{i}".encode(), digest_size=16).hexdigest()
            uuid = f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
            bus = f"00000000:{0x10 + 0x10 * i:02X}:00.0"
            devices.append(Device(index=i, uuid=uuid, pci_bus_id=bus, name=self.model))
        entries, source = visibility_list(self.vendor, self.env)
        chosen = select_visible(devices, entries, source)
        if not chosen:
            raise ProbeError(f"sim backend: no GPUs visible to this step ({source}={self.env.get(source)!r})")
        return chosen

    def _trace(self, dev: Device, t: float) -> tuple[float, float]:
        """Utilisation % and memory fraction at virtual time ``t`` seconds."""
        seed = f"{self.host}/{dev.index}"
        period = 20 + 20 * _unit(seed, "period")  # data-loader dip every 20-40 s
        phase = (t + period * _unit(seed, "phase")) % period
        if t < 8:  # start-up: model load, little compute
            util = 5 + 4 * t
        elif phase < 2.0:  # data-loader dip
            util = 15 + 20 * _unit(seed, "dip", int(t))
        elif (t % 300) < 10 and t > 60:  # periodic evaluation
            util = 55 + 10 * _unit(seed, "eval", int(t))
        else:  # busy plateau
            util = 88 + 10 * _unit(seed, "busy", int(t))
        mem = min(0.82, 0.05 + 0.77 * (1 - math.exp(-t / 12))) + 0.02 * _unit(seed, "mem")
        return min(util, 100.0), mem

    def sample(self, *, processes: bool, now: float) -> list[Record]:
        t = self._tick * self.interval
        self._tick += 1
        out = []
        for pos, dev in enumerate(self.devices):
            util, mem = self._trace(dev, t)
            used = int(self.mem_total * mem)
            values = self.common(dev, pos)
            missing = {}
            if processes:
                node = int(self.env.get("SLURM_NODEID", "0") or 0)
                values["processes"] = [
                    {
                        "pid": 40000 + 100 * node + pos,
                        "used_mem_bytes": used - 300 * 1024**2,
                        "rank": node * len(self.devices) + pos,
                        "name": "python",
                    }
                ]
            else:
                values["processes"] = None
                missing["processes"] = "not_sampled"
            out.append(self.record(dev, now, util, used, self.mem_total, missing=missing, **values))
        return out

    def record(self, dev: Device, now: float, util: float, used: int, total: int, **values: object) -> Record:
        """One simulated ``gpu`` record: power, energy, temperature and clocks follow ``util``."""
        power = 60 + (self.power_limit - 60) * util / 100 * 0.9
        energy = self._energy.get(dev.gpu_id, 1000.0 * (1 + dev.index)) + power * self.interval
        self._energy[dev.gpu_id] = energy
        return gpu_sample(
            host=self.host,
            gpu_id=dev.gpu_id,
            vendor=self.vendor,
            source="sim",
            time=now,
            util_gpu_pct=round(util, 1),
            util_mem_bw_pct=round(util * 0.45, 1),
            mem_used_bytes=used,
            mem_total_bytes=total,
            temp_c=round(32 + 45 * util / 100, 1),
            power_w=round(power, 1),
            power_limit_w=self.power_limit,
            energy_j=round(energy, 1),
            clock_sm_mhz=self.clock_sm if util > 20 else 210,
            clock_mem_mhz=self.clock_mem,
            **values,
        )
