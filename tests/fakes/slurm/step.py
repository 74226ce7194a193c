"""The fake ``srun`` running a step: the real command once per node, one merged line-buffered stdout.

A STEP of the scenario (all keys optional)::

    {"stderr": "srun: error: ...\\n", "exit": 1,     # printed first; without "nodes" srun exits with it
     "nodes": [{"name": "node1"},
               {"name": "node2", "silent_after": 0.5,  # 0.5 s after its first line, nothing more reaches srun
                "die_after": 0.5,                      # its task is SIGKILLed: "task 1: Killed"
                "version": "0.0.1"}],                  # its probe_started says this gputui version
     "stderr_after": [[0.5, "srun: error: Node failure on node2\\n"]],
     "stderr_flood": 262144, "stdout_noise": ["not a record"],  # before the first record
     "end_after": 1.0, "end_stderr": "...", "end_exit": 0,      # the job ends (or is requeued)
     "busy": true}                                  # the step cannot start, even with --overlap

Like Slurm 22.05: the step needs ``--overlap`` inside a running job (without it srun waits, "Requested
nodes are busy"), ``--jobid`` must name the scenario's job, each task gets ``SLURMD_NODENAME``, a task
that dies is reported as ``srun: error: NODE: task I: Killed``, and SIGTERM ends the tasks and srun.
A step that cannot start (no ``--overlap``, or ``busy``) waits; with ``--immediate``/``-I`` srun gives up
instead with 22.05's line ``srun: error: Unable to create step for job J: Requested nodes are busy``
(at once here; the real srun after the ``--immediate`` seconds).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from replay import log

#: Options of srun that take a separate value (the fake must find where the command starts).
VALUE_OPTIONS = {"-N", "-n", "-w", "-J", "-c", "-p", "-t", "--jobid", "--nodelist", "--ntasks"}
MAX_S = 120.0  # a step nobody stops ends here (a test that died must not leave it behind)
_OUT = threading.Lock()
_ERR = threading.Lock()
_SIGNALS = {signal.SIGKILL: "Killed", signal.SIGTERM: "Terminated", signal.SIGABRT: "Aborted"}


def split_argv(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """srun's options (``{"--jobid": "3", "-N": "2", "--overlap": ""}``) and the command."""
    opts: dict[str, str] = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        name, eq, value = argv[i].partition("=")
        if not eq and name in VALUE_OPTIONS and i + 1 < len(argv):
            value, i = argv[i + 1], i + 1
        opts[name] = value
        i += 1
    return opts, argv[i:]


def write(stream: Any, lock: threading.Lock, data: bytes) -> None:
    with lock:
        try:
            stream.write(data)
            stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass  # the attaching side went away


def err(text: str) -> None:
    write(sys.stderr.buffer, _ERR, text.encode())


def task_status(code: int) -> str:
    if code < 0:
        return _SIGNALS.get(-code, f"Killed by signal {-code}")
    return f"Exited with exit code {code}"


class Task:
    """One node's task: the step's command with that node's Slurm variables, its output forwarded."""

    def __init__(self, index: int, node: dict[str, Any], command: list[str], jobid: str, t0: float):
        self.index, self.name, self.node, self.t0 = index, node["name"], node, t0
        env = {**os.environ, "SLURMD_NODENAME": self.name, "SLURM_NODEID": str(index)}
        env.update(SLURM_PROCID=str(index), SLURM_JOB_ID=jobid, SLURM_STEP_ID="0")
        self.proc = subprocess.Popen(
            command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.reported = False
        self.threads = [
            threading.Thread(target=self._forward_out, daemon=True),
            threading.Thread(target=self._forward_err, daemon=True),
        ]
        for thread in self.threads:
            thread.start()
        if node.get("die_after") is not None:
            timer = threading.Timer(node["die_after"], self._kill)
            timer.daemon = True
            timer.start()

    def _kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()

    def _forward_out(self) -> None:
        silent_after, first = self.node.get("silent_after"), None
        for line in iter(self.proc.stdout.readline, b""):
            first = time.monotonic() if first is None else first
            if silent_after is not None and time.monotonic() - first >= silent_after:
                continue  # the node fell silent: nothing of it reaches srun any more
            if self.node.get("version") and b'"probe_started"' in line:
                record = json.loads(line)
                record["version"] = self.node["version"]
                line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
            write(sys.stdout.buffer, _OUT, line)

    def _forward_err(self) -> None:
        for line in iter(self.proc.stderr.readline, b""):
            write(sys.stderr.buffer, _ERR, line)

    def check_ended(self) -> None:
        """Once the task has ended and its output is forwarded: report it as srun does."""
        if self.reported or self.proc.poll() is None:
            return
        for thread in self.threads:
            thread.join(2)
        self.reported = True
        if self.proc.returncode != 0:
            err(f"srun: error: {self.name}: task {self.index}: {task_status(self.proc.returncode)}\n")

    def end(self) -> None:
        """End the task quietly (srun ending the step)."""
        self.reported = True
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def run_step(scenario: dict[str, Any], spec: dict[str, Any], argv: list[str]) -> int:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    t0 = time.monotonic()
    opts, command = split_argv(argv)
    jobid = opts.get("--jobid", "")
    if scenario.get("jobid") and jobid != scenario["jobid"]:
        err(f"srun: error: Unable to confirm allocation for job {jobid}: Invalid job id specified\n")
        err(f"srun: Check SLURM_JOB_ID environment variable. Expired or invalid job {jobid}\n")
        return 1
    err(spec.get("stderr", ""))
    if "nodes" not in spec:
        return int(spec.get("exit", 0))
    if "--overlap" not in opts or spec.get("busy"):  # every CPU of the job is taken: wait for one
        if "--immediate" in opts or "-I" in opts:
            log(scenario, cmd="srun", key="srun", event="immediate")
            err(f"srun: error: Unable to create step for job {jobid}: Requested nodes are busy\n")
            return 1
        err(f"srun: Job {jobid} step creation temporarily disabled, retrying (Requested nodes are busy)\n")
        stop.wait(spec.get("end_after", MAX_S))
        return 1
    if spec.get("stderr_flood"):
        for _ in range(spec["stderr_flood"] // 100):
            err("srun: " + "x" * 93 + "\n")
    for noise in spec.get("stdout_noise", []):
        write(sys.stdout.buffer, _OUT, noise.encode() + b"\n")
    tasks = [Task(i, node, command, jobid, t0) for i, node in enumerate(spec["nodes"])]
    pending = sorted((float(t), text) for t, text in spec.get("stderr_after", []))
    end_after = spec.get("end_after", MAX_S)
    why = "ended"
    while True:
        elapsed = time.monotonic() - t0
        while pending and pending[0][0] <= elapsed:
            err(pending.pop(0)[1])
        for task in tasks:
            task.check_ended()
        if stop.is_set():
            why = "sigterm"
            break
        if elapsed >= end_after:
            why = "end"
            break
        if all(task.reported for task in tasks):
            break
        stop.wait(0.02)
    log(scenario, cmd="srun", key="srun", event=why)
    if why == "end":
        err(spec.get("end_stderr", ""))
    for task in tasks:
        task.end()
    if why == "sigterm":
        return 128 + signal.SIGTERM
    if why == "end":
        return int(spec.get("end_exit", 0))
    return max((abs(t.proc.returncode or 0) for t in tasks), default=0)
