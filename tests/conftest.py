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
from slurm_helpers import CLUSTER_SCRIPT, VERSION_CLUSTER_SCRIPT

# --------------------------------------------------------------------------- local Slurm cluster

SLURM_JOB_ENV_PREFIXES = ("SLURM_", "SRUN_", "SBATCH_", "SALLOC_")
SLURM_TEST_ENV = "GPUTUI_TEST_SLURM"  # which test cluster: 22.05 (the host's, default), 24.11, 26.05
SLURM_ACCOUNTING_ENV = "GPUTUI_TEST_SLURM_ACCOUNTING"  # "1": start 24.11/26.05 with slurmdbd + MariaDB
HOST_SLURM = "22.05"


@dataclass(frozen=True)
class SlurmCluster:
    env: dict[
        str, str
    ]  # os.environ copy + SLURM_CONF (+ the client wrappers first on PATH), job vars stripped
    conf: Path
    root: Path
    nodes: list[str]
    gpus_per_node: int
    uts_namespaces: bool  # True: `hostname` inside a task prints the node name
    label: str = HOST_SLURM  # the test cluster chosen by GPUTUI_TEST_SLURM: "22.05", "24.11", "26.05"
    version: str = ""  # what Slurm says (`sinfo --version`), e.g. "24.11.5"
    name: str = ""  # slurm.conf ClusterName
    accounting: bool = False  # slurmdbd + MariaDB: sacct answers from a real database
    script: tuple[str, ...] = ()  # argv that runs this cluster's script (ci/slurm-cluster or the version one)

    @property
    def host(self) -> bool:
        """The host's own cluster of ci/slurm-cluster (not a debootstrap root of ci/slurm-version-cluster)."""
        return self.label == HOST_SLURM

    def script_argv(self, command: str, *args: str) -> list[str]:
        """``[python, <cluster script>, command, (version,) *args]`` for this cluster."""
        return [*self.script, command, *(() if self.host else (self.label,)), *args]


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


def _cluster_script(label: str) -> tuple[str, ...]:
    if label == HOST_SLURM:
        return (sys.executable, str(CLUSTER_SCRIPT))
    return (sys.executable, str(VERSION_CLUSTER_SCRIPT))


@pytest.fixture(scope="session")
def slurm_cluster() -> SlurmCluster:
    """The local Slurm cluster chosen by ``GPUTUI_TEST_SLURM`` (default 22.05: ``ci/slurm-cluster up``;
    24.11 or 26.05: ``ci/slurm-version-cluster up VERSION``), started here if not already up.

    For 24.11/26.05 the client wrappers are put first on this process's PATH too, so code that reads
    os.environ reaches the same cluster. Skips when the script exits 3 (not root / Slurm not installable)
    -- except under CI=true, where Slurm tests must run and this fails instead."""
    label = os.environ.get(SLURM_TEST_ENV, "").strip() or HOST_SLURM
    script = _cluster_script(label)
    argv = [*script, "up", *(() if label == HOST_SLURM else (label,))]
    if label != HOST_SLURM and os.environ.get(SLURM_ACCOUNTING_ENV) == "1":
        argv.append("--accounting")
    try:
        res = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{shlex.join(argv[1:])} did not finish within 900 s", pytrace=False)
    if res.returncode == 3:
        reason = f"local Slurm cluster unavailable: {_last_line(res.stderr)}"
        if _in_ci():
            pytest.fail(f"{reason} (CI=true: Slurm tests must not be skipped)", pytrace=False)
        pytest.skip(reason)
    if res.returncode != 0:
        pytest.fail(
            f"{shlex.join(argv[1:])} failed (exit {res.returncode}): {_last_line(res.stderr)}", pytrace=False
        )
    exports = [line for line in res.stdout.splitlines() if line.startswith("export SLURM_CONF=")]
    if not exports:
        pytest.fail(f"{shlex.join(argv[1:])} printed no SLURM_CONF: {res.stdout!r}", pytrace=False)
    conf = Path(shlex.split(exports[-1].split("=", 1)[1])[0])
    info = json.loads((conf.parent / "cluster.json").read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith(SLURM_JOB_ENV_PREFIXES)}
    env["SLURM_CONF"] = str(conf)
    if info.get("bin"):  # 24.11/26.05: their client wrappers come first
        wrappers = str(info["bin"])
        env["PATH"] = os.environ["PATH"] = f"{wrappers}{os.pathsep}{os.environ.get('PATH', '')}"
    sinfo = subprocess.run(["sinfo", "--version"], env=env, capture_output=True, text=True, timeout=30)
    names = [
        ln.split("=", 1)[1].strip() for ln in conf.read_text().splitlines() if ln.startswith("ClusterName=")
    ]
    return SlurmCluster(
        env=env,
        conf=conf,
        root=conf.parent.parent,
        nodes=list(info["node_names"]),
        gpus_per_node=int(info["gpus_per_node"]),
        uts_namespaces=bool(info["uts_namespaces"]),
        label=label,
        version=sinfo.stdout.split()[-1] if sinfo.stdout.split() else "",
        name=names[-1] if names else "",
        accounting=bool(info.get("accounting", False)),
        script=script,
    )


@pytest.fixture(scope="session")
def slurm_accounting_cluster(slurm_cluster: SlurmCluster) -> SlurmCluster:
    """``slurm_cluster`` when it keeps accounting in slurmdbd + MariaDB (in CI: the 26.05 run); else skips."""
    if not slurm_cluster.accounting:
        pytest.skip(
            f"needs a cluster with accounting (slurmdbd); this is {slurm_cluster.label} without: run with "
            f"{SLURM_TEST_ENV}=26.05 {SLURM_ACCOUNTING_ENV}=1"
        )
    return slurm_cluster


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
