"""Attach to a running job: one long-lived ``srun --overlap`` probe step on every node, one merged stream.

The step (never one per refresh)::

    srun --jobid=J --overlap --immediate=10 -N n -n n --ntasks-per-node=1 --kill-on-bad-exit=0 --quiet \\
         <this python> -m gputui probe --backend B --interval S

is deliberately **not** ``--unbuffered``: on 22.05.8, ``-u`` forwards each task's output in 1024-byte
chunks as they come, so a long record from node2 was observed cut in two by a record from node1 (and
``-u -l`` labels chunks, not lines, which cannot be reassembled reliably). Line-buffered mode delivers
whole lines, measured ~6 ms after the probe's ``write(2)``; the probe itself writes each record with one
unbuffered ``write(2)``, so nothing waits in a buffer. The step runs ``gputui probe`` with the
interpreter of the attaching side (clusters share home/project file systems) and its stdout is read as
the record stream of all nodes at once (records carry ``host``). Handled:

* job pending → a ``job_state`` event saying so, then wait (polling ``scontrol``) until it starts;
* job finished → a ``job_state`` event with what is known (state, exit code, nodes, output path), or from
  ``sacct``, or the one line "accounting is disabled";
* the step failing to start → :class:`AttachError` carrying srun's own message;
* a node's probe dying (``srun: error: node2: task 1: Killed``) or going silent → ``node_lost`` for that
  node; the others keep streaming;
* a node failing (``srun: error: Node failure on node2``: slurmctld marked it DOWN after ``SlurmdTimeout``)
  → ``node_lost`` naming the node's Slurm state and reason. The step runs with ``--no-kill``, so in a
  ``--no-kill`` job the other nodes keep streaming; otherwise Slurm ends (or requeues) the job;
* the job requeued (after a node failure, or ``scontrol requeue``) → a ``job_state`` event, then wait for it
  to run again and attach again;
* a ``probe_started`` from another gputui version → a ``warning`` event;
* the job ending → the step ends with it, a final ``job_state`` event;
* stopping the attach (``stop`` event, Ctrl-C, SIGTERM/SIGHUP: :mod:`gputui.hangup`), or an error while
  attached, terminates only the probe step (SIGTERM to srun, which forwards it to the step's tasks; killed
  after :data:`STOP_GRACE_S`), never the job.

The job's StdOut/StdErr files (resolved by ``scontrol``) are followed with the project's one file follower
and log parser (:class:`gputui.logs.follower.LogFollower`: polling, truncation, rotation, a file not
created yet); the training metrics it finds join the stream.
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
from gputui.slurm.commands import SlurmError, slurm_env, which
from gputui.slurm.jobs import AccountingDisabled, Job, JobNotFound, check_mine, format_duration
from gputui.slurm.sacct import finished_job
from gputui.slurm.scontrol import job_detail as _job_detail
from gputui.slurm.scontrol import node_state
from gputui.slurm.version import detect_version, overlap_problem, overlap_warning
from gputui.stream.io import parse_line
from gputui.stream.records import Record, RecordError, event

_TASK_ERROR = re.compile(r"srun: error: (\S+): tasks? ([\d,-]+): (.*)")
_NODE_FAILURE = re.compile(r"srun: error: Node failure on (\S+)")
# slurmstepd's "*** STEP 12.1 ON node1 CANCELLED AT 2026-11-21T06:06:47 DUE TO NODE FAILURE, ... ***":
# the whole step is being ended, so the task deaths srun reports next are not node losses.
_STEP_CANCELLED = re.compile(r"\*\*\* STEP \S+ ON \S+ CANCELLED AT \S+(?: DUE TO ([^,*]+))?")
#: A job in one of these states has not started (or was requeued): wait for it to run.
WAITING_STATES = ("PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SUSPENDED")
STOP_GRACE_S = 5.0
SETTLE_S = 10.0  # after the step ends, how long to wait for the job to leave COMPLETING
PROBE_IMMEDIATE_S = 10  # srun --immediate: seconds a probe step may wait to start
RUN_DIR_CHECK_S = 10.0  # how often to look for the job's lightning_logs/ until it appears


class AttachError(SlurmError):
    """Attaching failed; ``str()`` is one line (srun's own message where there is one)."""


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


class Attacher:
    """Streams the records of one job to ``emit`` until the job ends or ``stop`` is set."""

    # the dashboard's hooks for taught patterns (gputui.sources.attach sets them): a followed log's count
    # of unread lines (path, count), and "the logs are read again" said before a re-read's records
    on_unread: Callable[[str, tuple], None] | None = None
    on_forget: Callable[[], None] | None = None
    _relearn = False  # set by relearn(): the attach loop reads the output files again at its next poll

    def __init__(
        self,
        job_id: str,
        emit: Callable[[Record], None],
        options: AttachOptions | None = None,
        *,
        env: dict[str, str] | None = None,
        on_text: Callable[[str, bytes], None] | None = None,
        on_reset: Callable[[str, str], None] | None = None,
        on_job: Callable[[Job], None] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.job_id = job_id
        self.on_text, self.on_reset, self.on_job = on_text, on_reset, on_job  # the dashboard's hooks
        self.on_progress = on_progress  # (bytes read, size) while a large output file is caught up
        self.emit = emit
        self.options = options or AttachOptions()
        self.env = env
        self.stop = threading.Event()
        self.proc: subprocess.Popen[bytes] | None = None
        self.job: Job | None = None
        self.last_seen: dict[str, float] = {}
        self.lost: dict[str, str] = {}  # node → cause of its node_lost event
        self.first_record: dict[str, float] = {}
        self.malformed = 0  # stdout lines of the step that were not records
        self.bad_lines: list[bytes] = []
        self.started_at = time.monotonic()
        self.step_ending: str | None = None  # set once slurmstepd reports the whole step cancelled
        self._followers: list[tuple[str, object]] = []
        self._metric_files_found, self._next_dir_check, self._job_started = False, 0.0, time.time()

    # ------------------------------------------------------------------ job state

    def _detail(self) -> Job:
        return _job_detail(self.job_id, env=self.env)

    def _say(self, event_type: str, message: str, **detail: object) -> None:
        self.emit(event(event_type, message=message, job=self.job_id, **detail))

    def _finished_summary(self, job: Job) -> None:
        where = f" on {job.nodelist}" if job.nodelist else ""
        ran = f", ran {format_duration(job.time_used_s)}" if job.time_used_s is not None else ""
        code = f" (exit {job.exit_code})" if job.exit_code else ""
        out = f"; output: {job.stdout}" if job.stdout else ""
        self._say(
            "job_state", f"job {job.job_id} has ended: {job.state}{code}{ran}{where}{out}", state=job.state
        )

    def resolve(self) -> Job | None:
        """The job if it is running (after waiting while pending); None if it has ended (reported)."""
        try:
            job = self._detail()
        except JobNotFound:
            try:
                old = finished_job(self.job_id, env=self.env)
            except AccountingDisabled as exc:
                raise AttachError(f"job {self.job_id} is not known to Slurm any more; {exc}") from None
            except JobNotFound:
                raise AttachError(f"job {self.job_id} is not known to Slurm") from None
            if self.on_job is not None:
                self.on_job(old)
            self._finished_summary(old)
            return None
        check_mine(job)
        if self.on_job is not None:
            self.on_job(job)
        announced = False
        while job.state in WAITING_STATES:
            if not self.options.wait_pending:
                self._say("job_state", f"job {job.job_id} is {job.state} ({job.reason or 'no reason given'})")
                return None
            if not announced:
                why = job.reason or "no reason given"
                self._say(
                    "job_state",
                    f"job {job.job_id} is {job.state} ({why}): waiting for it to start",
                    state=job.state,
                )
                announced = True
            if self.stop.wait(self.options.pending_poll_s):
                return None
            try:
                job = self._detail()
            except JobNotFound:
                raise AttachError(f"job {self.job_id} disappeared while pending") from None
        if job.state != "RUNNING":
            self._finished_summary(job)
            return None
        return job

    # ------------------------------------------------------------------ the probe step

    def _start(self, job: Job) -> None:
        argv = probe_argv(job, self.options)
        env = slurm_env(self.env)
        argv[0] = which("srun", env)
        self.proc = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a Ctrl-C in the terminal reaches us, not srun (we stop it ourselves)
        )

    def _pump(self, stream, tag: str, out: queue.Queue) -> None:
        for line in iter(stream.readline, b""):
            out.put((tag, line))
        out.put((tag, None))

    def _stop_step(self) -> None:
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)  # srun forwards it to the step's tasks; the job is untouched
        try:
            proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(STOP_GRACE_S)

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
        known = node_state(node, env=self.env)
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

    # ------------------------------------------------------------------ logs

    def _open_followers(self, job: Job) -> None:
        if not self.options.follow_logs:
            return
        try:
            from gputui.logs.follower import LogFollower  # the project's one follower
        except ImportError:
            return
        self._metric_files_found, self._next_dir_check = False, 0.0
        self._job_started = time.time() - (job.time_used_s or 0)  # Slurm's run time, at attach
        self._open_metric_files(job)
        for path in dict.fromkeys(p for p in (job.stdout, job.stderr) if p):
            on_data = (lambda data, p=path: self.on_text(p, data)) if self.on_text else None
            on_reset = (lambda why, p=path: self.on_reset(p, why)) if self.on_reset else None
            on_unread = (lambda count, p=path: self.on_unread(p, count)) if self.on_unread else None
            follower = LogFollower(
                path,
                job=job.job_id,
                on_data=on_data,
                on_reset=on_reset,
                on_progress=self.on_progress,
                on_unread=on_unread,
            )
            self._followers.append((path, follower))

    def _open_metric_files(self, job: Job) -> None:
        """Lightning's metric files of the job (its working directory's ``lightning_logs/``,
        :func:`gputui.logs.metric_files.run_dir_files`), looked for every :data:`RUN_DIR_CHECK_S` until
        they appear: a training writes them only once it has started."""
        now = time.monotonic()
        if self._metric_files_found or not job.work_dir or now < self._next_dir_check:
            return
        self._next_dir_check = now + RUN_DIR_CHECK_S
        from gputui.logs.metric_files import MetricFileFollower, run_dir_files

        since = self._job_started - 60  # a run directory of this job, not an older run's
        files = run_dir_files(job.work_dir, job_id=job.job_id, since=since)
        for path in files:
            self._followers.append((path, MetricFileFollower(path, job=job.job_id)))
        if files:
            self._metric_files_found = True
            self._say("job_state", f"following {', '.join(files)}", state=job.state)

    def relearn(self) -> None:
        """Ask the attach loop to read the job's output files again from the start (any thread)."""
        self._relearn = True

    def _reread_logs(self) -> None:
        """The output files parsed again from the start (the patterns in effect now), their text not
        shown again; metric files are read again from the start at the next poll."""
        self._relearn = False
        if self.on_forget is not None:
            self.on_forget()
        from gputui.logs.metric_files import MetricFileFollower

        for index, (path, follower) in enumerate(self._followers):
            if isinstance(follower, MetricFileFollower):
                follower.file.close()
                job = self.job.job_id if self.job is not None else None
                self._followers[index] = (path, MetricFileFollower(path, job=job))
                continue
            try:
                records = follower.reread()  # type: ignore[attr-defined]
            except OSError:
                continue
            for rec in records:
                self.emit(rec)

    def _poll_logs(self, final: bool = False) -> None:
        if self._relearn:
            self._reread_logs()
        for _path, follower in self._followers:
            try:
                records = follower.finish() if final else follower.poll()  # type: ignore[attr-defined]
            except OSError:
                continue
            for rec in records:
                self.emit(rec)

    # ------------------------------------------------------------------ main loop

    def run(self) -> int:
        """Attach until the job ends or :attr:`stop` is set, again after each requeue. Returns 0, or 1 when
        the probe step ended while the job still runs; raises :class:`AttachError`."""
        version = detect_version(self.env)
        problem = overlap_problem(version)
        if problem:
            raise AttachError(problem)
        warning = overlap_warning(version)
        while True:
            job = self.resolve()
            if job is None:
                return 0
            if warning:
                self._say("warning", warning)
                warning = None
            if self.stop.is_set():  # stopped while resolving (a signal, q): start no step
                return 0
            try:
                code = self._attach(job)
            finally:  # whatever went wrong in between, the step never outlives the attach
                self._stop_step()
                self._close()
            if code is not None:
                return code

    def _attach(self, job: Job) -> int | None:
        """One probe step on the running ``job``; None when the job was requeued (attach again)."""
        self.job, self.last_seen, self.lost, self.first_record = job, {}, {}, {}
        self.step_ending = None
        if self.on_job is not None:
            self.on_job(job)
        gpus = sum(len(v) for v in job.gpus.values())
        self._say(
            "job_state",
            f"attached to job {job.job_id} ({job.name}): {job.state} on {job.nodelist}, {gpus} GPUs; "
            f"output {job.stdout or 'unknown'}",
            state=job.state,
            nodes=job.nodes,
            stdout=job.stdout or None,
        )
        self.started_at = time.monotonic()
        self._start(job)
        self._open_followers(job)
        lines: queue.Queue = queue.Queue()
        assert self.proc is not None and self.proc.stdout is not None and self.proc.stderr is not None
        for stream, tag in ((self.proc.stdout, "out"), (self.proc.stderr, "err")):
            threading.Thread(target=self._pump, args=(stream, tag, lines), daemon=True).start()
        open_streams, stderr_tail, next_log = 2, [], 0.0
        try:
            while open_streams and not self.stop.is_set():
                try:
                    tag, raw = lines.get(timeout=0.2)
                except queue.Empty:
                    tag, raw = None, None
                if tag is not None and raw is None:
                    open_streams -= 1
                elif tag == "out":
                    self._handle_stdout(raw)
                elif tag == "err":
                    self._handle_stderr(raw, stderr_tail)
                self._check_silence()
                if self.options.follow_logs:
                    self._open_metric_files(job)
                if self._followers and time.monotonic() >= next_log:
                    self._poll_logs()
                    next_log = time.monotonic() + self.options.log_poll_s
        finally:
            self._stop_step()
        if self.stop.is_set():
            self._close()
            self._say("job_state", f"detached from job {job.job_id} (the job keeps running)")
            return 0
        code = self.proc.wait()
        if self._followers:
            self._poll_logs(final=True)
        self._close()
        return self._after_step(job, code, stderr_tail)

    def _close(self) -> None:
        """Close the step's pipes (after the reader threads saw EOF, or with the step stopped)."""
        if self.proc is not None:
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        for _path, follower in self._followers:
            follower.file.close()  # type: ignore[attr-defined]
        self._followers = []

    def _settled(self) -> Job | None:
        """The job once it has left COMPLETING (waiting at most SETTLE_S); None if Slurm forgot it."""
        deadline = time.monotonic() + SETTLE_S
        while True:
            try:
                now = self._detail()
            except JobNotFound:
                return None
            if now.state != "COMPLETING" or time.monotonic() >= deadline or self.stop.wait(0.25):
                return now

    def _after_step(self, job: Job, code: int, stderr_tail: list[str]) -> int | None:
        now = self._settled()
        if now is not None and now.state in WAITING_STATES and now.state != "SUSPENDED":
            self._say(
                "job_state",
                f"job {job.job_id} was requeued ({now.state}, {now.reason or 'no reason given'}); "
                "its probe step ended with it",
                state=now.state,
            )
            return None
        if now is not None and now.active and now.state != "COMPLETING":
            if not self.first_record:
                fallback = (stderr_tail or [f"srun exited {code}"])[-1]
                msg = next((ln for ln in reversed(stderr_tail) if "error" in ln.lower()), fallback)
                raise AttachError(f"the probe step did not start: {msg}")
            self._say(
                "job_state",
                f"the probe step ended (srun exit {code}) but job {job.job_id} is still {now.state}",
            )
            return 1
        if now is None:
            self._say("job_state", f"job {job.job_id} has ended", state="UNKNOWN")
        else:
            self._finished_summary(now)
        return 0
