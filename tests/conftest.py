"""Shared pytest fixtures and hooks."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from slurm_helpers import CLUSTER_SCRIPT

# --------------------------------------------------------------------------- local Slurm cluster

SLURM_JOB_ENV_PREFIXES = ("SLURM_", "SRUN_", "SBATCH_", "SALLOC_")


@dataclass(frozen=True)
class SlurmCluster:
    env: dict[str, str]  # os.environ copy + SLURM_CONF, inherited Slurm job variables stripped
    conf: Path
    root: Path
    nodes: list[str]
    gpus_per_node: int
    uts_namespaces: bool  # True: `hostname` inside a task prints the node name


_SLURM_TESTS: set[str] = set()  # node ids of the collected tests that carry the slurm marker


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slurm: needs the local Slurm test cluster")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    _SLURM_TESTS.update(item.nodeid for item in items if item.get_closest_marker("slurm"))


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1].removeprefix("slurm-cluster: error: ") if lines else "(no output)"


@pytest.fixture(scope="session")
def slurm_cluster() -> SlurmCluster:
    """The local Slurm cluster of ``ci/slurm-cluster up`` (started here if not already up).

    Skips when the script exits 3 (not root / Slurm not installable) -- except under CI=true,
    where Slurm tests must run and this fails instead."""
    try:
        res = subprocess.run(
            [sys.executable, str(CLUSTER_SCRIPT), "up"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("ci/slurm-cluster up did not finish within 300 s", pytrace=False)
    if res.returncode == 3:
        reason = f"local Slurm cluster unavailable: {_last_line(res.stderr)}"
        if _in_ci():
            pytest.fail(f"{reason} (CI=true: Slurm tests must not be skipped)", pytrace=False)
        pytest.skip(reason)
    if res.returncode != 0:
        pytest.fail(
            f"ci/slurm-cluster up failed (exit {res.returncode}): {_last_line(res.stderr)}", pytrace=False
        )
    exports = [line for line in res.stdout.splitlines() if line.startswith("export SLURM_CONF=")]
    if not exports:
        pytest.fail(f"ci/slurm-cluster up printed no SLURM_CONF: {res.stdout!r}", pytrace=False)
    conf = Path(shlex.split(exports[-1].split("=", 1)[1])[0])
    root = conf.parent.parent
    info = json.loads((conf.parent / "cluster.json").read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith(SLURM_JOB_ENV_PREFIXES)}
    env["SLURM_CONF"] = str(conf)
    return SlurmCluster(
        env=env,
        conf=conf,
        root=root,
        nodes=list(info["node_names"]),
        gpus_per_node=int(info["gpus_per_node"]),
        uts_namespaces=bool(info["uts_namespaces"]),
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line with the outcome of the slurm-marked tests, so CI logs show they really ran."""
    outcome: dict[str, str] = {}
    categories = {"passed": "passed", "skipped": "skipped", "failed": "failed", "error": "failed"}
    for key, category in categories.items():
        for report in terminalreporter.stats.get(key, []):
            if report.nodeid not in _SLURM_TESTS:  # the marker, not a "slurm" in the test's path
                continue
            if outcome.get(report.nodeid) != "failed":  # a failure in any phase wins
                outcome[report.nodeid] = category
    counts = {c: sum(1 for v in outcome.values() if v == c) for c in ("passed", "skipped", "failed")}
    terminalreporter.write_line(
        f"slurm tests: {counts['passed']} passed, {counts['skipped']} skipped, {counts['failed']} failed"
    )
