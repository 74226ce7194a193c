"""Collectors know nothing of the UI: the record code, probes, Slurm code, log parsers and the CLI's
help path import no Textual, torch, TensorFlow or GPU vendor library (checked in a fresh interpreter).

The layers are written down as import-linter contracts in pyproject.toml (run here and by ``make lint``);
no two modules import each other, lazy imports inside functions included; the compute-node contract
(distenv, hostlist, the reporter, the trainers) loads nothing of the Slurm, TUI or home code.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FORBIDDEN = ("textual", "torch", "tensorflow", "keras", "pynvml", "amdsmi", "pyrsmi", "lightning")

# Every module of these packages is imported (new modules are checked without editing this list).
HEADLESS_PACKAGES = (
    "gputui.stream",
    "gputui.analysis",
    "gputui.export",
    "gputui.probes",
    "gputui.slurm",
    "gputui.logs",
    "gputui.commands",
    "gputui.monitor",
    "gputui.sources",
    "gputui.home",
)
HEADLESS_MODULES = (
    "gputui",
    "gputui.stream.records",
    "gputui.stream.io",
    "gputui.stream.names",
    "gputui.distenv",
    "gputui.hostlist",
    "gputui.cli",
    "gputui.reporter",
    "gputui.reporter_callbacks",
    "gputui.trainers",
    "gputui.config",
)
# Commands that exist to start the UI or a trainer may import what they start, but only when run.
ALLOWED_HEAVY = ("gputui.commands.tui", "gputui.commands.demo", "gputui.commands.replay")

SCRIPT = """
import importlib, json, pkgutil, sys
mods, packages, allowed = json.loads(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
for name in packages:
    try:
        pkg = importlib.import_module(name)
    except ModuleNotFoundError:
        continue
    mods.append(name)
    mods += [m.name for m in pkgutil.walk_packages(pkg.__path__, name + ".") if m.name not in allowed]
loaded = []
for name in mods:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        continue
    loaded.append(name)
print(json.dumps({"checked": loaded, "modules": sorted(sys.modules)}))
"""


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in FORBIDDEN]


def test_headless_modules_import_no_ui_framework_or_gpu_library() -> None:
    args = [
        json.dumps(list(HEADLESS_MODULES)),
        json.dumps(list(HEADLESS_PACKAGES)),
        json.dumps(ALLOWED_HEAVY),
    ]
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, check=True, timeout=120
    )
    result = json.loads(out.stdout)
    assert "gputui.stream.records" in result["checked"] and "gputui.hostlist" in result["checked"]
    assert _heavy(result["modules"]) == []


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["run", "--help"], ["probe", "--help"]])
def test_help_and_version_paths_stay_light(argv: list[str]) -> None:
    code = (
        "import json, sys\nfrom gputui.cli import main\ntry:\n    main(sys.argv[1:])\n"
        "except SystemExit:\n    pass\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60)
    modules = json.loads(out.stderr.strip().splitlines()[-1])
    assert "gputui.cli" in modules
    assert _heavy(modules) == []


def test_the_check_itself_can_fail() -> None:
    """Guard against a hygiene check that cannot fail: a forbidden import is seen."""
    args = [json.dumps(["gputui.stream.records", "textual.app"]), json.dumps([]), json.dumps([])]
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, check=True, timeout=120
    )
    assert "textual" in _heavy(json.loads(out.stdout)["modules"])


# --- The compute-node contract -------------------------------------------------------------------------

COMPUTE_NODE = ("gputui.distenv", "gputui.hostlist", "gputui.reporter", "gputui.trainers.common")
DRIVING_SIDE = ("gputui.slurm", "gputui.tui", "gputui.home", "gputui.probes", "gputui.commands")


def test_the_compute_node_contract_loads_nothing_of_slurm_tui_or_home() -> None:
    """What runs inside a training job imports only itself and the record stream."""
    args = [json.dumps(list(COMPUTE_NODE)), json.dumps([]), json.dumps([])]
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, check=True, timeout=120
    )
    result = json.loads(out.stdout)
    assert result["checked"] == list(COMPUTE_NODE)
    driving = [m for m in result["modules"] if m.startswith(tuple(d + "." for d in DRIVING_SIDE))]
    assert driving == [] and [m for m in DRIVING_SIDE if m in result["modules"]] == []
    assert _heavy(result["modules"]) == []


# --- The layer contracts (import-linter) ---------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert exe, "lint-imports not found: pip install -e '.[test]' (import-linter)"
    env = {"PATH": str(Path(sys.executable).parent), "PYTHONPATH": str(cwd), "HOME": str(cwd)}
    return subprocess.run([exe, "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_import_layers_hold() -> None:
    """pyproject.toml's [tool.importlinter] contracts: layers, no cycles, Textual only in gputui.tui."""
    out = _lint_imports(ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " 0 broken" in out.stdout


def test_the_layer_contracts_can_fail(tmp_path: Path) -> None:
    """A copy of the package with two forbidden imports, both lazy, breaks the contracts that forbid them."""
    shutil.copytree(ROOT / "gputui", tmp_path / "gputui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with (tmp_path / "gputui" / "hostlist.py").open("a") as f:
        f.write("\n\ndef _injected() -> None:\n    from gputui.slurm import jobs  # noqa: F401\n")
    with (tmp_path / "gputui" / "stream" / "records.py").open("a") as f:
        f.write("\n\ndef _injected() -> None:\n    import textual  # noqa: F401\n")
    out = _lint_imports(tmp_path)
    assert out.returncode == 1, out.stdout[-3000:]
    assert "gputui.hostlist is not allowed to import gputui.slurm" in out.stdout
    assert "gputui.stream.records -> textual" in out.stdout


# --- No import cycle, lazy imports included ------------------------------------------------------------


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path, package: str = "gputui") -> dict[str, set[str]]:
    """Every module of ``package`` under ``root`` → the package's modules it imports anywhere in its body
    (top level, functions, ``if`` blocks); ``from a import b`` names module ``a.b`` where that exists."""
    files = {_module_name(p, root): p for p in (root / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        is_pkg = path.name == "__init__.py"
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name.split(".")[: len(name.split(".")) - node.level + is_pkg]
                    base = ".".join([*anchor, *([base] if base else [])])
                for alias in node.names:
                    targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else base)
        graph[name] = {t for t in targets if t in files and t != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while (w := stack.pop()) != v:
                group.append(w)
            if group:
                cycles.append(sorted([v, *group]))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_no_import_cycle_between_modules_lazy_imports_included() -> None:
    graph = import_graph(ROOT)
    assert len(graph) > 100 and "gputui.stream.records" in graph["gputui.stream.io"]
    assert import_cycles(graph) == []


def test_the_cycle_check_itself_sees_a_lazy_cycle(tmp_path: Path) -> None:
    """Guard against a cycle check that cannot fail: a cycle closed inside a function is found."""
    pkg = tmp_path / "gputui"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from gputui.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def later():\n    from .c import thing\n")
    (pkg / "sub" / "c.py").write_text("import os\n\n\ndef f():\n    import gputui.a\n")
    (pkg / "d.py").write_text("from gputui import a\n")
    assert import_cycles(import_graph(tmp_path)) == [["gputui.a", "gputui.sub.b", "gputui.sub.c"]]
