"""Helpers for the probe tests (imported by name: ``from probe_helpers import ...``).

They live here, not in conftest.py: with ``pytest tests/probes tests/trainers`` both directories'
conftest.py files are loaded up front as the module ``conftest``, so ``from conftest import`` in a test
would get the wrong one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

FAKES = Path(__file__).resolve().parents[1] / "fakes"
if str(FAKES) not in sys.path:
    sys.path.insert(0, str(FAKES))

# Variables that would leak the caller's job/step or GPUs into a test.
_SCRUB = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "FAKE_NVML", "GPUTUI_"))}
    for key in _SCRUB:
        env.pop(key, None)
    env["LD_LIBRARY_PATH"] = ""
    env["GPUTUI_SYSFS_ROOT"] = "/nonexistent-sysfs"
    env["GPUTUI_DEV_ROOT"] = "/nonexistent-dev"  # no dri/: the host's render nodes never filter fake cards
    env.update(extra)
    return env


def dev_root(tree: Path) -> str:
    """The fake device root that goes with an ``amd_tree``."""
    return str(tree.parent / "dev")


def gputui_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "gputui", *args]


def run_gputui(
    *args: str, env: dict[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess:
    return subprocess.run(
        gputui_cmd(*args), env=env or clean_env(), capture_output=True, text=True, timeout=timeout
    )


def parse_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def wait_for(predicate, timeout: float = 10.0, what: str = "condition"):
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def count_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0
