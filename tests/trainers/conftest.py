"""Markers and fixtures for the reference-trainer tests (helpers live in trainer_helpers.py)."""

from __future__ import annotations

import pytest
from trainer_helpers import QUIET


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: a real training run of several seconds (still runs in CI)")
    config.addinivalue_line("markers", "slurm: needs the local Slurm test cluster")


@pytest.fixture
def cluster_env(slurm_cluster) -> dict[str, str]:
    """The Slurm cluster's client environment plus one thread per rank and unbuffered output."""
    return {**slurm_cluster.env, **QUIET}
