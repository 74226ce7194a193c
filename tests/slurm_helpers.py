"""Helpers for tests on the local Slurm test cluster (``ci/slurm-cluster``, ``ci/slurm-version-cluster``).

Everything polls with a deadline (never sleep-and-hope) and runs commands as argv lists.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

REPO = Path(__file__).resolve().parent.parent
CLUSTER_SCRIPT = REPO / "ci" / "slurm-cluster"  # the host's Slurm 22.05
VERSION_CLUSTER_SCRIPT = (
    REPO / "ci" / "slurm_version_cluster.py"
)  # 24.11 and 26.05 (ci/slurm-version-cluster)

T = TypeVar("T")
_script_counter = itertools.count(1)


def wait_for(predicate: Callable[[], T], timeout: float, interval: float = 0.1, what: str = "condition") -> T:
    """Call ``predicate`` until it returns something truthy and return that; TimeoutError after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def run(
    argv: Sequence[str],
    env: Mapping[str, str],
    timeout: float = 30,
    check: bool = True,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command with captured text output; ``check`` raises AssertionError showing stderr."""
    res = subprocess.run(
        list(argv),
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and res.returncode != 0:
        raise AssertionError(
            f"{' '.join(argv)} exited {res.returncode}\nstdout: {res.stdout}\nstderr: {res.stderr}"
        )
    return res


def job_state(jobid: str, env: Mapping[str, str]) -> str | None:
    """The job's state (RUNNING, COMPLETED, ...) or None if Slurm does not know the job.

    ``squeue`` first; finished jobs may no longer be listed there, so fall back to
    ``scontrol show job -o`` (JobState=), which keeps them for MinJobAge."""
    res = run(["squeue", "-h", "-j", jobid, "-o", "%T"], env, check=False)
    lines = res.stdout.split() if res.returncode == 0 else []
    if lines:
        return lines[0]
    res = run(["scontrol", "show", "job", "-o", jobid], env, check=False)
    match = re.search(r"\bJobState=(\S+)", res.stdout) if res.returncode == 0 else None
    return match.group(1) if match else None


def wait_job_state(jobid: str, states: Collection[str], timeout: float, env: Mapping[str, str]) -> str:
    """Wait until the job reaches one of ``states``; return that state."""
    seen: list[str | None] = [None]

    def reached() -> str | None:
        seen[0] = job_state(jobid, env)
        return seen[0] if seen[0] in states else None

    try:
        return wait_for(reached, timeout, interval=0.1, what=f"job {jobid} to reach {sorted(states)}")
    except TimeoutError as exc:
        raise TimeoutError(f"{exc} (last state: {seen[0]})") from None


def sbatch(
    script_text: str,
    env: Mapping[str, str],
    tmp_path: Path,
    extra_args: Sequence[str] = (),
) -> str:
    """Submit ``script_text`` (a ``#!/bin/bash`` line is added if missing) from ``tmp_path``;
    return the job id."""
    if not script_text.startswith("#!"):
        script_text = "#!/bin/bash\n" + script_text
    script = tmp_path / f"job-{next(_script_counter)}.sh"
    script.write_text(script_text)
    res = run(["sbatch", "--parsable", *extra_args, str(script)], env, cwd=tmp_path)
    jobid = res.stdout.strip().split(";")[0]
    assert jobid.isdigit(), f"unexpected sbatch output: {res.stdout!r}"
    return jobid


def step_ids(jobid: str, env: Mapping[str, str]) -> list[str]:
    """Ids of the job's running steps (``12.0``, ``12.batch`` ...)."""
    res = run(["squeue", "-h", "-s", "-j", jobid, "-o", "%i"], env, check=False)
    return res.stdout.split() if res.returncode == 0 else []


def scancel(jobid: str, env: Mapping[str, str]) -> None:
    run(["scancel", jobid], env, check=False)
