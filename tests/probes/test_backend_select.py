"""Backend selection lives in gputui.probes.backends; the interface module base imports no backend."""

from __future__ import annotations

import ast
from pathlib import Path

import gputui.probes.base as base
from gputui.probes.backends import BACKENDS, make_backend
from gputui.probes.base import Backend

PACKAGE = ("gputui", "probes")


def _imported_modules(path: Path) -> set[str]:
    """Every module an ``import``/``from ... import`` anywhere in the file names (relative ones resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative to gputui.probes: `from . import sim`, `from .sim import X`
                package = ".".join(PACKAGE[: len(PACKAGE) - node.level + 1])
                module = f"{package}.{node.module}" if node.module else package
                found.update(f"{module}.{alias.name}" for alias in node.names)  # may name submodules
            else:
                module = node.module or ""
            found.add(module)
    return found


def test_base_imports_no_other_probe_module() -> None:
    imported = _imported_modules(Path(base.__file__))
    probes = sorted(m for m in imported if m == "gputui.probes" or m.startswith("gputui.probes."))
    assert probes == [], f"gputui/probes/base.py imports {probes}: keep it a leaf"
    assert not hasattr(base, "make_backend") and not hasattr(base, "BACKENDS")


def test_the_import_scan_sees_probe_imports() -> None:
    """Guard against a scan that cannot fail: imports inside functions and relative ones are seen."""
    import gputui.probes.backends as backends

    assert "gputui.probes.sim" in _imported_modules(Path(backends.__file__))


def test_select_names_every_backend() -> None:
    assert BACKENDS == ("auto", "nvidia", "amd", "sim", "none")
    backend = make_backend("none", {})
    assert type(backend) is Backend
    assert make_backend("sim", {}).simulated
