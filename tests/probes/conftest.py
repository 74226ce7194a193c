"""Fixtures for the probe tests: the fake NVML library, a fake amdgpu sysfs tree, running ``gputui``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from ci_helpers import in_ci
from probe_helpers import FAKES


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slurm: needs the local Slurm cluster (ci/slurm-cluster up)")


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
    """``<tmp>/sys``: the fake sysfs tree; next to it ``<tmp>/dev/dri`` with every GCD's render node."""
    from amd_tree import build_amd_tree, build_dev_tree

    build_dev_tree(tmp_path / "dev")
    return build_amd_tree(tmp_path / "sys")
