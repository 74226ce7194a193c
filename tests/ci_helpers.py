"""Helpers for tests whose real dependencies may be absent on a developer machine but never in CI."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def require_module(name: str, install_hint: str) -> ModuleType:
    """Import ``name``; outside CI skip the calling module when it is missing, under CI=true fail."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        if in_ci():
            pytest.fail(f"{name} is required in CI ({install_hint}): {exc}", pytrace=False)
        pytest.skip(f"{name} not installed ({install_hint})", allow_module_level=True)
