"""Fake Slurm commands on PATH for the unit tests (``tests/fakes/slurm``), and an attach run in a thread.

:class:`FakeSlurm` puts the fakes first on PATH and writes the scenario they replay: per command, the
outputs of its calls, built from the Slurm 22.05 captures in ``tests/slurm/data``; :func:`slow` and
:func:`garbage` answer late or with something that is not Slurm's output. ``SLURM_CONF`` points
nowhere, so a real Slurm command reached by mistake fails instead of asking the shared cluster. The call
log gives each command's argv. No test using this needs the local cluster.
"""

from __future__ import annotations

import json
import os
import pwd
import sys
from pathlib import Path
from typing import Any

import pytest
from attach_helpers import Collector
from slurm_helpers import wait_for

from gputui.slurm import version
from gputui.stream.records import Record

FAKES = Path(__file__).resolve().parents[1] / "fakes" / "slurm"
DATA = Path(__file__).parent / "data"
JOB_ID = "3"  # the job of the scontrol capture: 2 nodes (node[1-2]), 2 GPUs each
RUNNING_LINE = (DATA / "scontrol-22.05-job-gres.txt").read_text().strip()
NODE_LINE = (DATA / "scontrol-22.05-node.txt").read_text().strip()
VERSION_TEXT = (DATA / "srun-22.05-version.txt").read_text()
NODES = [{"name": "node1"}, {"name": "node2"}]


def replaced(text: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in text, f"{old!r} is not in the capture"
        text = text.replace(old, new)
    return text


def mine(line: str) -> str:
    """A captured line (submitted by root) as a job of the user running the tests."""
    uid = os.getuid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:  # a container user without a passwd entry
        user = str(uid)
    return replaced(line, ("UserId=root(0)", f"UserId={user}({uid})"))


def job_line(state: str = "RUNNING", reason: str = "None", stdout: str | None = None) -> str:
    """The captured ``scontrol show job -o -d`` line of job 3 in ``state`` (mine); a pending job has no
    nodes."""
    line = replaced(RUNNING_LINE, ("JobState=RUNNING Reason=None", f"JobState={state} Reason={reason}"))
    line = mine(line)
    if state in ("PENDING", "REQUEUED", "REQUEUE_HOLD"):
        line = replaced(
            line,
            ("NodeList=node[1-2]", "NodeList=(null)"),
            ("Nodes=node[1-2] CPU_IDs=2 Mem=0 GRES=gpu:2(IDX:0-1) ", ""),
            ("BatchHost=node1", "BatchHost=(null)"),
        )
    if stdout is not None:
        old = "/tmp/s5/out-my job|x-3.out"
        line = replaced(line, (f"StdErr={old}", f"StdErr={stdout}"), (f"StdOut={old}", f"StdOut={stdout}"))
    return line + "\n"


def response(stdout: str = "", stderr: str = "", exit: int = 0, **extra: Any) -> dict[str, Any]:
    return {"stdout": stdout, "stderr": stderr, "exit": exit, **extra}


def slow(seconds: float, answer: dict[str, Any] | None = None) -> dict[str, Any]:
    """A command that answers only after ``seconds`` (``answer``, default nothing): a slow or hung
    slurmctld. The fake sleeps in its own process, so a caller's timeout or kill ends it."""
    return {**(answer or response()), "sleep": seconds}


#: Outputs that are not Slurm's answer (exit status 0): what a broken wrapper, a proxy or a full disk
#: might print. ``partial-json`` is a ``squeue --json`` document cut short.
GARBAGE = {
    "html": "<html><body>502 Bad Gateway</body></html>\n",
    "header": "JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)\n",
    "random": "\x00\x7f\x1b[31m garbage\n\u00e9\u00e8 more garbage; no fields at all\n",
    "partial-json": '{"meta": {"plugin": {"type": "openapi/v0.0.38"}}, "errors": [], "jobs": [{"account": ',
}


def garbage(kind: str = "html") -> dict[str, Any]:
    """A response printing :data:`GARBAGE` ``[kind]`` with exit status 0."""
    return response(GARBAGE[kind])


def job(state: str = "RUNNING", reason: str = "None", **kw: Any) -> dict[str, Any]:
    """A ``scontrol show job`` response; state ``GONE``: Slurm has forgotten the job (captured)."""
    if state == "GONE":
        return response(stderr=(DATA / "scontrol-22.05-invalid-job.txt").read_text(), exit=1)
    return response(stdout=job_line(state, reason, **kw))


def node_down(node: str = "node2") -> dict[str, Any]:
    """``scontrol show node -o`` for a node slurmctld marked DOWN (the captured line, state changed)."""
    line = replaced(NODE_LINE, ("node2", node), ("State=IDLE", "State=DOWN+NOT_RESPONDING"))
    return response(stdout=f"{line} Reason=Not responding [slurm@2026-11-21T06:06:40]\n")


class FakeSlurm:
    """The scenario of one test; ``set(key, *responses)`` before the code under test runs."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.dir = tmp_path / "fake-slurm"
        self.dir.mkdir()
        self.path, self.log, self.state = (
            self.dir / n for n in ("scenario.json", "calls.jsonl", "state.json")
        )
        self.responses: dict[str, list[Any]] = {"srun --version": [response(VERSION_TEXT)]}
        path = os.pathsep.join([str(FAKES), str(Path(sys.executable).parent), os.environ.get("PATH", "")])
        monkeypatch.setenv("PATH", path)  # the venv's python3 runs the fakes (#!/usr/bin/env python3)
        monkeypatch.setenv("GPUTUI_FAKE_SLURM", str(self.path))
        monkeypatch.setenv("SLURM_CONF", str(self.dir / "no-such-slurm.conf"))
        monkeypatch.setattr(version, "_CACHE", {})  # every test asks `srun --version` itself
        self.runs: list[AttachRun] = []
        self.rate_limit: dict[str, int] | None = None  # slurmctld's rate limiter (see replay.py)
        self.write()

    def attach(self, job_id: str = JOB_ID, **options: Any) -> AttachRun:
        """An :class:`AttachRun` that :meth:`close` stops if the test did not."""
        self.runs.append(AttachRun(job_id, **options))
        return self.runs[-1]

    def close(self) -> None:
        """Stop what a failed test left attached (its fake srun and probes end with it)."""
        for run in self.runs:
            run.attacher.stop.set()
            run.thread.join(15)

    def limit_rpcs(self, tokens: int) -> FakeSlurm:
        """slurmctld's rate limiter lets ``tokens`` more calls through, then answers "Rate limit exceeded"."""
        self.rate_limit = {"tokens": tokens}
        return self.write()

    def set(self, key: str, *responses: Any) -> FakeSlurm:
        self.responses[key] = list(responses)
        return self.write()

    def write(self) -> FakeSlurm:
        scenario = {
            "log": str(self.log),
            "state": str(self.state),
            "jobid": JOB_ID,
            "responses": self.responses,
        }
        if self.rate_limit:
            scenario["rate_limit"] = self.rate_limit
        self.path.write_text(json.dumps(scenario, indent=1))
        self.state.unlink(missing_ok=True)  # the queues start again from the scenario
        Path(f"{self.state}.tokens").unlink(missing_ok=True)
        return self

    def entries(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def calls(self, key: str) -> list[list[str]]:
        """The argv (without the command) of every call with this key, in order."""
        return [e["argv"] for e in self.entries() if e.get("key") == key and "argv" in e]

    def step_events(self) -> list[str]:
        """How each srun step ended: ``sigterm`` (stopped), ``end`` (the scenario's end), ``ended``."""
        return [e["event"] for e in self.entries() if e.get("cmd") == "srun" and "event" in e]


class AttachRun(Collector):
    """:meth:`Attacher.run` in a thread with short intervals; keeps every record it emits."""

    def __init__(self, job_id: str = JOB_ID, **options: Any) -> None:
        defaults: dict[str, Any] = dict(backend="sim", interval=0.2, pending_poll_s=0.1, follow_logs=False)
        super().__init__(job_id, None, **{**defaults, **options})

    def hosts(self, after: Record | None = None) -> set[str]:
        """Hosts of the gpu records emitted (after ``after``, if given)."""
        records = self.snapshot()
        start = next(i for i, r in enumerate(records) if r is after) + 1 if after is not None else 0
        return {r["host"] for r in records[start:] if r.kind == "gpu"}

    def wait(self, predicate: Any, what: str, timeout: float = 10.0) -> Any:
        return wait_for(predicate, timeout, interval=0.05, what=what)

    def wait_event(self, name: str, what: str, timeout: float = 10.0, **match: Any) -> Record:
        def found() -> Record | None:
            return next((e for e in self.events(name) if all(e.get(k) == v for k, v in match.items())), None)

        return self.wait(found, what, timeout)

    def finish(self, timeout: float = 15.0) -> object:
        """Wait for ``run`` to return (the job ended); its return value or exception."""
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "Attacher.run did not return"
        return self.result

    def stop(self, timeout: float = 15.0) -> object:
        self.attacher.stop.set()
        return self.finish(timeout)
