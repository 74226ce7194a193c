"""Collectors know nothing of the UI: the record code, probes, Slurm code, log parsers and the CLI's
help path import no Textual, torch, TensorFlow or GPU vendor library (checked in a fresh interpreter)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FORBIDDEN = ("textual", "torch", "tensorflow", "keras", "pynvml", "amdsmi", "pyrsmi", "lightning")

# Every module of these packages is imported (new modules are checked without editing this list).
HEADLESS_PACKAGES = (
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
