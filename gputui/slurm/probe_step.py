"""The probe step of an attach: one long-lived ``srun --overlap`` step running ``gputui probe`` on every
node of a job (never one per refresh)::

    srun --jobid=J --overlap --immediate=10 -N n -n n --ntasks-per-node=1 --kill-on-bad-exit=0 --quiet \\
         --no-kill <this python> -m gputui probe --backend B --interval S

It is deliberately **not** ``--unbuffered``: on 22.05.8, ``-u`` forwards each task's output in 1024-byte
chunks as they come, so a long record from node2 was observed cut in two by a record from node1 (and
``-u -l`` labels chunks, not lines, which cannot be reassembled reliably). Line-buffered mode delivers
whole lines, measured ~6 ms after the probe's ``write(2)``; the probe itself writes each record with one
unbuffered ``write(2)``, so nothing waits in a buffer. The step runs ``gputui probe`` with the
interpreter of the attaching side (clusters share home/project file systems).

:class:`ProbeStep` starts the srun process, reads its stdout and stderr lines into one queue, and stops
only the step (SIGTERM to srun, which forwards it to the step's tasks; killed after
:data:`STOP_GRACE_S`), never the job. :class:`StepReader` reads its lines: records (each node's last
sign of life), srun's reports of a probe task dying or a node failing, a node gone silent.
"""

from __future__ import annotations

import contextlib
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from gputui import __version__
from gputui.slurm.commands import slurm_env, which
from gputui.slurm.jobs import Job
from gputui.stream.io import parse_line
from gputui.stream.records import Record, RecordError

STOP_GRACE_S = 5.0
PROBE_IMMEDIATE_S = 10  # srun --immediate: seconds a probe step may wait to start
_TASK_ERROR = re.compile(r"srun: error: (\S+): tasks? ([\d,-]+): (.*)")
_NODE_FAILURE = re.compile(r"srun: error: Node failure on (\S+)")
# slurmstepd's "*** STEP 12.1 ON node1 CANCELLED AT 2026-11-21T06:06:47 DUE TO NODE FAILURE, ... ***":
# the whole step is being ended, so the task deaths srun reports next are not node losses.
_STEP_CANCELLED = re.compile(r"\*\*\* STEP \S+ ON \S+ CANCELLED AT \S+(?: DUE TO ([^,*]+))?")


@dataclass
class AttachOptions:
    backend: str = "auto"
    interval: float = 1.0
    python: str = sys.executable
    pending_poll_s: float = 2.0
    silence_s: float | None = None  # node_lost after this long without a record (default 5×interval, ≥10 s)
    follow_logs: bool = True
    log_poll_s: float = 0.5
    wait_pending: bool = True


def probe_argv(job: Job, options: AttachOptions) -> list[str]:
    """The srun command line of the probe step (argv list).

    ``--immediate``: a step that cannot start (nodes busy, the job completing) fails after
    :data:`PROBE_IMMEDIATE_S` with srun's one-line reason, instead of srun retrying for minutes."""
    n = str(job.num_nodes or len(job.nodes) or 1)
    jobid = str(job.raw_job_id or job.job_id)
    srun = ["srun", f"--jobid={jobid}", "--overlap", f"--immediate={PROBE_IMMEDIATE_S}"]
    srun += ["-N", n, "-n", n, "--ntasks-per-node=1"]
    srun += ["--kill-on-bad-exit=0", "--quiet"]  # line-buffered on purpose: see the module docs
    srun += ["--no-kill"]  # a failed node ends only its own probe task (where the job survives it)
    probe = [options.python, "-m", "gputui", "probe", "--backend", options.backend]
    return [*srun, *probe, "--interval", f"{options.interval:g}"]


class ProbeStep:
    """One srun probe step: its output lines as ``("out"|"err", bytes)``, ``(tag, None)`` at each EOF."""

    def __init__(self, job: Job, options: AttachOptions, env: dict[str, str] | None = None) -> None:
        argv = probe_argv(job, options)
        env = slurm_env(env)
        argv[0] = which("srun", env)
        self.lines: queue.Queue = queue.Queue()
        self.proc = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a Ctrl-C in the terminal reaches us, not srun (we stop it ourselves)
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        for stream, tag in ((self.proc.stdout, "out"), (self.proc.stderr, "err")):
            threading.Thread(target=self._pump, args=(stream, tag), daemon=True).start()

    def _pump(self, stream, tag: str) -> None:
        for line in iter(stream.readline, b""):
            self.lines.put((tag, line))
        self.lines.put((tag, None))

    def next_line(self, timeout: float) -> tuple[str | None, bytes | None]:
        """The next line within ``timeout`` seconds, else ``(None, None)``."""
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None, None

    def stop(self) -> None:
        """End the step (never the job): SIGTERM to srun, killed after :data:`STOP_GRACE_S`."""
        proc = self.proc
        if proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)  # srun forwards it to the step's tasks; the job is untouched
        try:
            proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(STOP_GRACE_S)

    def close(self) -> None:
        """Close the step's pipes (after the reader threads saw EOF, or with the step stopped)."""
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


class StepReader:
    """What the probe step's lines say, for :class:`gputui.slurm.attach.Attacher` (which gives ``emit``,
    ``_say``, ``options``, ``job`` and ``_node_state``): records go to ``emit``; a probe task dying, a node
    failing or falling silent becomes one ``node_lost`` event per node."""

    emit: Callable[[Record], None]
    _say: Callable[..., None]
    _node_state: Callable[[str], tuple[str, str] | None]  # Slurm's state and reason of a node
    options: AttachOptions
    job: Job | None
    last_seen: dict[str, float]
    lost: dict[str, str]  # node → cause of its node_lost event
    first_record: dict[str, float]
    started_at: float
    malformed: int  # stdout lines of the step that were not records
    bad_lines: list[bytes]
    step_ending: str | None  # set once slurmstepd reports the whole step cancelled

    def new_step(self) -> None:
        """Forget what the previous step's lines said (each node's last record, its loss)."""
        self.last_seen, self.lost, self.first_record = {}, {}, {}
        self.started_at, self.step_ending = time.monotonic(), None

    def _handle_stdout(self, raw: bytes) -> None:
        if not raw.strip():
            return
        try:
            records = parse_line(raw.rstrip(b"\n"))
        except (ValueError, RecordError):
            self.malformed += 1
            self.bad_lines = [*self.bad_lines[-4:], raw[:300]]
            return
        now = time.monotonic()
        for rec in records:
            host = rec.get("host")
            if isinstance(host, str):
                self.last_seen[host] = now
                self.first_record.setdefault(host, now - self.started_at)
                self.lost.pop(host, None)
            if rec.kind == "event" and rec.get("event") == "probe_started":
                self._check_version(rec)
            self.emit(rec)

    def _check_version(self, rec: Record) -> None:
        theirs = rec.get("version")
        if theirs and theirs != __version__:
            self._say(
                "warning",
                f"node {rec.get('host')} runs gputui {theirs} but this side runs {__version__}: "
                "records may differ (is the same environment visible on the compute nodes?)",
                host=rec.get("host"),
            )

    def _handle_stderr(self, raw: bytes, stderr_tail: list[str]) -> None:
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            return
        stderr_tail.append(line)
        del stderr_tail[:-20]
        if self.job is None:
            return
        failed = _NODE_FAILURE.search(line)
        cancelled = _STEP_CANCELLED.search(line)
        task = _TASK_ERROR.match(line)
        if failed:
            self._node_failed(failed.group(1))
        elif cancelled:
            self.step_ending = (cancelled.group(1) or "cancelled").strip().lower()
        elif task and self.step_ending is None:
            self._lose(task.group(1), f"probe stopped ({task.group(3)})", "task_exit")

    def _node_failed(self, node: str) -> None:
        known = self._node_state(node)
        if known is None:
            why = "node failure reported by Slurm"
        else:
            state, reason = known
            why = f"node failure: Slurm marked it {state}" + (f" ({reason})" if reason else "")
        self._lose(node, why, "node_failure", state=known[0] if known else None)

    def _lose(self, node: str, why: str, cause: str, **detail: object) -> None:
        """One node_lost event per node; a node failure Slurm reports later is told too (on a real
        cluster, where a dead node's probe falls silent long before SlurmdTimeout, it comes second)."""
        previous = self.lost.get(node)
        if previous is not None and (cause != "node_failure" or previous == "node_failure"):
            return
        self.lost[node] = cause
        self._say(
            "node_lost", f"node {node}: {why}; other nodes keep streaming", host=node, cause=cause, **detail
        )

    def _check_silence(self) -> None:
        limit = self.options.silence_s or max(10.0, 5 * self.options.interval)
        now = time.monotonic()
        for host, seen in self.last_seen.items():
            if host not in self.lost and now - seen > limit:
                self._lose(host, f"probe silent (no record for {now - seen:.0f} s)", "silence")
