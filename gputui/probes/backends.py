"""Backend selection: the ``--backend`` choices and the backend each one opens.

Kept apart from :mod:`gputui.probes.base` (the interface every backend imports) so that no import cycle
runs through it; backends are imported lazily here, only for the one chosen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gputui.probes.base import Backend, ProbeError

BACKENDS = ("auto", "nvidia", "amd", "sim", "none")


def make_backend(name: str, env: Mapping[str, str] | None = None, **options: Any) -> Backend:
    """The backend called ``name``; ``auto`` tries NVIDIA, then AMD, and never falls back to ``sim``."""
    if name not in BACKENDS:
        raise ProbeError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    if name == "sim":
        from gputui.probes.sim import SimBackend

        return SimBackend(env)
    if name == "none":
        return Backend(env)
    if name == "nvidia":
        from gputui.probes.nvidia import NvidiaBackend

        return NvidiaBackend(env)
    if name == "amd":
        from gputui.probes.amd.rocm import make_amd_backend

        return make_amd_backend(env, **options)
    return _auto(env, **options)


def _auto(env: Mapping[str, str] | None, **options: Any) -> Backend:
    from gputui.probes.amd.topology import sysfs_root
    from gputui.probes.nvidia import NvidiaBackend, nvml_available

    tried = []
    ok, why = nvml_available()
    if ok:
        return NvidiaBackend(env)
    tried.append(f"nvidia: {why}")
    from gputui.probes.amd.topology import find_amd_cards

    root = options.get("sysfs_root") or sysfs_root(env)
    if find_amd_cards(root):
        from gputui.probes.amd.rocm import make_amd_backend

        return make_amd_backend(env, **options)
    tried.append(f"amd: no amdgpu device (vendor 0x1002) under {root}/class/drm")
    raise ProbeError(
        "no GPU driver found (" + "; ".join(tried) + "); use --backend sim for simulated GPUs "
        "or --backend none for host samples only"
    )
