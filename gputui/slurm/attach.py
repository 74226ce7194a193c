"""Attach to a running job: one long-lived probe step on every node (:mod:`gputui.slurm.probe_step`), one
merged stream; the job's output files followed beside it (:mod:`gputui.slurm.job_output`).

The step's stdout is read as the record stream of all nodes at once (records carry ``host``). Handled:

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
  attached, ends only the probe step, never the job; the training metrics of the job's files join the stream.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from gputui.slurm.commands import SlurmError
from gputui.slurm.job_output import RUN_DIR_CHECK_S, JobOutput
from gputui.slurm.jobs import AccountingDisabled, Job, JobNotFound, check_mine, format_duration
from gputui.slurm.probe_step import (  # noqa: F401
    PROBE_IMMEDIATE_S,
    AttachOptions,
    ProbeStep,
    StepReader,
    probe_argv,
)
from gputui.slurm.sacct import finished_job
from gputui.slurm.scontrol import job_detail as _job_detail
from gputui.slurm.scontrol import node_state
from gputui.slurm.version import detect_version, overlap_problem, overlap_warning
from gputui.stream.records import Record, event

#: A job in one of these states has not started (or was requeued): wait for it to run.
WAITING_STATES = ("PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SUSPENDED")
SETTLE_S = 10.0  # after the step ends, how long to wait for the job to leave COMPLETING


class AttachError(SlurmError):
    """Attaching failed; ``str()`` is one line (srun's own message where there is one)."""


class Attacher(StepReader):
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
        self.step: ProbeStep | None = None
        self.output: JobOutput | None = None
        self.job: Job | None = None
        self.malformed, self.bad_lines = 0, []  # stdout lines of the step that were not records
        self.new_step()

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

    @property
    def proc(self):
        """The srun process of the current probe step (None before the first)."""
        return self.step.proc if self.step is not None else None

    def _node_state(self, node: str) -> tuple[str, str] | None:
        return node_state(node, env=self.env)

    def _open_output(self, job: Job) -> None:
        self.output = JobOutput(
            job,
            self.emit,
            on_text=self.on_text,
            on_reset=self.on_reset,
            on_progress=self.on_progress,
            on_unread=self.on_unread,
            on_found=lambda files: self._say("job_state", f"following {', '.join(files)}", state=job.state),
            check_every=RUN_DIR_CHECK_S,
        )
        if self.options.follow_logs:
            self.output.open()

    def relearn(self) -> None:
        """Ask the attach loop to read the job's output files again from the start (any thread)."""
        self._relearn = True

    def _poll_logs(self, final: bool = False) -> None:
        if self._relearn:
            self._relearn = False
            if self.on_forget is not None:
                self.on_forget()
            self.output.reread()
        self.output.poll(final)

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
        self.job = job
        self.new_step()
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
        self.started_at = time.monotonic()  # the new step's start
        step = self.step = ProbeStep(job, self.options, self.env)
        self._open_output(job)
        open_streams, stderr_tail, next_log = 2, [], 0.0
        try:
            while open_streams and not self.stop.is_set():
                tag, raw = step.next_line(0.2)
                if tag is not None and raw is None:
                    open_streams -= 1
                elif tag == "out":
                    self._handle_stdout(raw)
                elif tag == "err":
                    self._handle_stderr(raw, stderr_tail)
                self._check_silence()
                if self.options.follow_logs:
                    self.output.look_for_metric_files()
                if self.output.followers and time.monotonic() >= next_log:
                    self._poll_logs()
                    next_log = time.monotonic() + self.options.log_poll_s
        finally:
            self._stop_step()
        if self.stop.is_set():
            self._close()
            self._say("job_state", f"detached from job {job.job_id} (the job keeps running)")
            return 0
        code = step.proc.wait()
        if self.output.followers:
            self._poll_logs(final=True)
        self._close()
        return self._after_step(job, code, stderr_tail)

    def _stop_step(self) -> None:
        if self.step is not None:
            self.step.stop()

    def _close(self) -> None:
        """Close the step's pipes and the followed files."""
        if self.step is not None:
            self.step.close()
        if self.output is not None:
            self.output.close()

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
