"""Helpers shared by the cluster tests of ``tests/slurm``: run the gputui CLI, submit with ``gputui run``,
and an :class:`Attacher` running in a thread that keeps what it emits (waits poll with deadlines)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from gputui.slurm.attach import Attacher, AttachOptions
from gputui.stream.records import Record

VENV_BIN = str(Path(sys.executable).parent)


def job_env(cluster_env: Mapping[str, str], state_dir: Path) -> dict[str, str]:
    """The cluster's environment with gputui's state dir in ``state_dir`` and the venv first on PATH."""
    return {
        **cluster_env,
        "GPUTUI_STATE_DIR": str(state_dir),
        "PATH": VENV_BIN + os.pathsep + os.environ["PATH"],
    }


def gputui(
    args: list[str], env: Mapping[str, str], cwd: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gputui", *args],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def submit_with_run(args: list[str], env: Mapping[str, str], cwd: Path) -> tuple[str, Path]:
    """``gputui run --no-attach ARGS`` from ``cwd``: (job id, batch script path)."""
    res = gputui(["run", "--no-attach", *args], env, cwd)
    assert res.returncode == 0, res.stderr
    job = re.search(r"submitted job (\d+)", res.stdout).group(1)
    script = Path(re.search(r"batch script: (.+)", res.stdout).group(1).strip())
    return job, script


class Collector:
    """Runs an Attacher in a thread and keeps every record it emits."""

    def __init__(self, job: str, env: Mapping[str, str] | None, **options) -> None:
        """``env`` None: this process's environment; ``options``: AttachOptions over sim at 0.5 s."""
        self.records: list[Record] = []
        self.lock = threading.Lock()
        opts = AttachOptions(**{"backend": "sim", "interval": 0.5, **options})
        self.attacher = Attacher(job, self._emit, opts, env=None if env is None else dict(env))
        self.result: object = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _emit(self, record: Record) -> None:
        with self.lock:
            self.records.append(record)

    def _run(self) -> None:
        try:
            self.result = self.attacher.run()
        except Exception as exc:
            self.result = exc

    def snapshot(self) -> list[Record]:
        with self.lock:
            return list(self.records)

    def events(self, name: str) -> list[Record]:
        return [r for r in self.snapshot() if r.kind == "event" and r.get("event") == name]

    def gpu_hosts(self, since: float = 0.0) -> set[str]:
        return {r["host"] for r in self.snapshot() if r.kind == "gpu" and r.time >= since}

    def stop(self) -> object:
        self.attacher.stop.set()
        self.thread.join(20)
        assert not self.thread.is_alive()
        return self.result
