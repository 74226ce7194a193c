"""Fixtures for the probe tests: the fake NVML library, a fake amdgpu sysfs tree, running ``gputui``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ci_helpers import in_ci

FAKES = Path(__file__).resolve().parents[1] / "fakes"
if str(FAKES) not in sys.path:
    sys.path.insert(0, str(FAKES))

# Variables that would leak the caller's job/step or GPUs into a test.
_SCRUB = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slurm: needs the local Slurm cluster (ci/slurm-cluster up)")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "FAKE_NVML", "GPUTUI_"))}
    for key in _SCRUB:
        env.pop(key, None)
    env["LD_LIBRARY_PATH"] = ""
    env["GPUTUI_SYSFS_ROOT"] = "/nonexistent-sysfs"
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def fake_nvml(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Directories holding a compiled fake ``libnvidia-ml.so.1``: ``default`` and ``old`` (no _v3/_v2 mem)."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        if in_ci():
            pytest.fail("CI needs gcc to build the fake NVML library", pytrace=False)
        pytest.skip("no C compiler to build the fake NVML library")
    out = {}
    for variant, flags in {"default": [], "old": ["-DNO_V3", "-DNO_MEM_V2"]}.items():
        d = tmp_path_factory.mktemp(f"nvml-{variant}")
        subprocess.run(
            [
                gcc,
                "-shared",
                "-fPIC",
                "-O2",
                *flags,
                "-o",
                str(d / "libnvidia-ml.so.1"),
                str(FAKES / "fake_nvml.c"),
            ],
            check=True,
        )
        out[variant] = str(d)
    return out


@pytest.fixture
def amd_tree(tmp_path: Path) -> Path:
    from amd_tree import build_amd_tree

    return build_amd_tree(tmp_path / "sys")


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
