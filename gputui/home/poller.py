"""Polling Slurm for the home screen: my jobs, ended jobs, GPU placement and the cluster's free GPUs.

Per refresh at most one ``squeue`` call (``-O`` text, or ``--json`` when configured: ``-t all``, the
data_parser pinned to the release's, every JSON shape read; :mod:`gputui.slurm.jsonshape`), within a
budget of 0.5 slurmctld RPCs per second and paused when slurmctld's rate limiter says so
(:mod:`gputui.home.budget`). Less often: ``sacct`` for jobs that ended in the last day (stopped for good once
Slurm says accounting is disabled), ``sinfo`` for the partitions. A job that starts running is asked about
once with ``scontrol -d show job`` for which GPU indices sit on which node (also where TRES does not count
GPUs). Every failure becomes one line in :attr:`JobsSnapshot.errors` and the last good answer is kept, so
a slow or broken Slurm never blanks the list: garbage output is a failure, not an empty list
(:mod:`gputui.slurm.answers`), and the line says since when squeue fails and from when the table is. All
calls are argv lists with timeouts (no shell); :meth:`SlurmPoller.stop` kills the one running (quitting
never waits for a hung Slurm).
"""

from __future__ import annotations

import os
import pwd
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gputui.home.budget import RATE_LIMITED, RpcBudget
from gputui.slurm import jsonshape, sacct
from gputui.slurm.answers import read_sacct, read_squeue
from gputui.slurm.cluster import PartitionGpus, parse_snapshot, sinfo_argv
from gputui.slurm.commands import CallGroup, SlurmError, SlurmNotFound, last_line, run_slurm
from gputui.slurm.jobs import AccountingDisabled, Job, squeue_argv
from gputui.slurm.scontrol import parse_scontrol_job

Runner = Callable[[list[str], float], subprocess.CompletedProcess]
SQUEUE_TIMEOUT_S = 10.0
ENDED_EVERY_S = 60.0
CLUSTER_EVERY_S = 60.0
DETAILS_PER_POLL = 8  # more newly started jobs than this: one scontrol call for all jobs instead


def default_runner(argv: list[str], timeout: float) -> subprocess.CompletedProcess:
    return run_slurm(argv, timeout=timeout, check=False)


def clock_time(stamp: float) -> str:
    """``12:03:10``: a wall-clock time of today, as the status line names it."""
    return time.strftime("%H:%M:%S", time.localtime(stamp))


@dataclass
class JobsSnapshot:
    """What the home screen shows; produced by :meth:`SlurmPoller.poll` in a worker thread."""

    jobs: list[Job] = field(default_factory=list)
    partitions: list[PartitionGpus] = field(default_factory=list)
    taken_at: float = 0.0  # time.time() of the squeue answer shown
    errors: list[str] = field(default_factory=list)
    slurm_found: bool = True
    accounting: bool | None = None  # None: not asked yet
    cluster_name: str = ""
    version: str = ""
    poll_s: float = 0.0  # how long this poll's Slurm calls took


def current_user() -> str:
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return os.environ.get("USER", "")


class SlurmPoller:
    """Keeps the last good answer of every call; :meth:`poll` returns a fresh :class:`JobsSnapshot`."""

    def __init__(
        self,
        run: Runner | None = None,
        *,
        user: str | None = None,
        ended_hours: float = 24.0,
        use_json: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.calls = CallGroup()
        self.run = run or self._run_slurm
        self.user = user if user is not None else current_user()
        self.ended_hours = ended_hours
        self.use_json = use_json
        self.clock = clock
        self.active: list[Job] = []
        self.ended: list[Job] = []
        self.partitions: list[PartitionGpus] = []
        self.details: dict[str, dict[str, list[int]]] = {}  # job id → node → GPU indices
        self.accounting: bool | None = None
        self.taken_at = 0.0
        self.failing_since = 0.0  # time.time() of squeue's first failure since its last answer
        self.partitions_at = 0.0
        self.cluster_name = ""
        self.version = ""
        self._asked_config = False
        self._next_ended = 0.0
        self._next_cluster = 0.0
        self.budget = RpcBudget(clock)
        self.json_pinned = True  # --json=vX; dropped if this Slurm refuses the data_parser

    # ------------------------------------------------------------------ one refresh

    def poll(self, *, force: bool = False, quick: bool = False) -> JobsSnapshot:
        """One refresh. ``quick``: squeue only (the first screen shows the list sooner; the next poll
        asks the rest)."""
        started = time.monotonic()
        errors: list[str] = []
        if self.budget.paused():
            return self._snapshot([self._paused_line()], started)
        try:
            if quick:
                if self.use_json:
                    self._config()  # the release names the data_parser to pin
                errors += self._squeue(force=True)
                return JobsSnapshot(
                    jobs=self._merged(),
                    taken_at=self.taken_at,
                    errors=errors,
                    poll_s=time.monotonic() - started,
                )
            self._config()
            errors += self._squeue(force=force)
            now = self.clock()
            if self.accounting is not False and self.ended_hours > 0 and (force or now >= self._next_ended):
                self._next_ended = now + ENDED_EVERY_S
                errors += self._sacct()
            if force or (now >= self._next_cluster and self.budget.affords(sinfo_argv())):
                self._next_cluster = now + CLUSTER_EVERY_S
                errors += self._sinfo()
            errors += self._gpu_details()
        except SlurmNotFound as exc:
            return JobsSnapshot(errors=[str(exc)], slurm_found=False, poll_s=time.monotonic() - started)
        return self._snapshot(errors, started)

    def _paused_line(self) -> str:
        return (
            f"slurmctld asked gputui to slow down ({RATE_LIMITED}): next call in {self.budget.paused():.0f} s"
        )

    def _snapshot(self, errors: list[str], started: float) -> JobsSnapshot:
        return JobsSnapshot(
            jobs=self._merged(),
            partitions=list(self.partitions),
            taken_at=self.taken_at,
            errors=errors,
            accounting=self.accounting,
            cluster_name=self.cluster_name,
            version=self.version,
            poll_s=time.monotonic() - started,
        )

    def stop(self) -> None:
        """No more Slurm calls: the one running is killed, later ones fail at once (the app is quitting)."""
        self.calls.stop()

    def _run_slurm(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        return run_slurm(argv, timeout=timeout, check=False, group=self.calls)

    def _call(self, argv: list[str], timeout: float = SQUEUE_TIMEOUT_S) -> subprocess.CompletedProcess:
        """One Slurm command, charged to the RPC budget; SlurmError (timeouts, cannot run, slurmctld's
        rate limiter: then every call pauses) passes up, SlurmNotFound too."""
        if self.calls.stopped:
            raise SlurmError(f"{argv[0]} not run: gputui is quitting")
        if self.budget.paused():
            raise SlurmError(f"{argv[0]} not run: {self._paused_line()}")
        self.budget.charge(argv)
        res = self.run(argv, timeout)
        if RATE_LIMITED in res.stderr or RATE_LIMITED in res.stdout:
            pause = self.budget.rate_limited()
            raise SlurmError(
                f"{argv[0]}: slurmctld asked gputui to slow down ({RATE_LIMITED}): next call in {pause:.0f} s"
            )
        return res

    def _config(self) -> None:
        """Cluster name and Slurm version, asked once (``scontrol show config``)."""
        if self._asked_config:
            return
        try:
            res = self._call(["scontrol", "show", "config"])
        except SlurmNotFound:
            raise  # asked again on the next poll: Slurm may appear (a module loaded, PATH fixed)
        except SlurmError:
            self._asked_config = True
            return
        self._asked_config = True
        for line in res.stdout.splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "ClusterName":
                self.cluster_name = value.strip()
            elif key.strip() == "SLURM_VERSION":
                self.version = value.strip()

    def _squeue_argv(self) -> list[str]:
        if not self.use_json:
            return squeue_argv(all_states=True)
        return jsonshape.squeue_argv(self.version if self.json_pinned else "")

    def _squeue(self, *, force: bool = False) -> list[str]:
        """One squeue call (none when the RPC budget is spent: the last list stays); on any failure the
        last good list stays and the line says since when."""
        argv = self._squeue_argv()
        if not force and not self.budget.affords(argv):
            return []
        try:
            answer = read_squeue(self._call(argv), use_json=self.use_json, user=self.user or None)
        except SlurmNotFound:
            raise
        except SlurmError as exc:
            if argv[1] != "--json" and argv[1].startswith("--json") and "data_parser" in str(exc):
                self.json_pinned = False  # this Slurm lacks the parser: plain --json from the next call
            return [self._squeue_failed(str(exc))]
        self.budget.answered()
        if self.use_json:
            self.details.update({job.job_id: job.gpus for job in answer.jobs if job.gpus})
        self.active = answer.jobs
        self.taken_at = time.time()
        self.failing_since = 0.0
        return [f"squeue: {answer.note}"] if answer.note else []

    def _squeue_failed(self, why: str) -> str:
        now = time.time()
        self.failing_since = self.failing_since or now
        since = f" (since {clock_time(self.failing_since)})" if self.failing_since < now else ""
        if not self.taken_at:
            return f"{why}{since}; no list of jobs yet"
        return f"{why}{since}; showing the table from {clock_time(self.taken_at)}"

    def _sacct(self) -> list[str]:
        """Jobs that ended recently; a failure keeps the last ended jobs."""
        argv = sacct.ended_argv(self.user, self.ended_hours)
        try:
            answer = read_sacct(self._call(argv))
        except AccountingDisabled:
            self.accounting = False
            self.ended = []
            return []
        except SlurmNotFound:
            self.accounting = False
            return []
        except SlurmError as exc:
            return [str(exc)]  # the ended jobs of the last answer stay
        self.ended = answer.jobs
        self.accounting = True
        return [f"sacct: {answer.note}"] if answer.note else []

    def _sinfo(self) -> list[str]:
        """The partitions' free GPUs; a failure keeps the last ones and says from when they are."""
        try:
            res = self._call(sinfo_argv())
        except SlurmNotFound:
            return []
        except SlurmError as exc:
            return [self._sinfo_failed(str(exc))]
        if res.returncode != 0:
            return [self._sinfo_failed(f"sinfo: {last_line(res.stderr) or f'exit status {res.returncode}'}")]
        snapshot = parse_snapshot(res.stdout)
        if not snapshot.partitions and res.stdout.strip():
            return [self._sinfo_failed(f"sinfo output unreadable ({snapshot.skipped} lines, none a node)")]
        self.partitions = snapshot.partitions
        self.partitions_at = time.time()
        if snapshot.skipped:
            return [f"sinfo: {snapshot.skipped} line(s) unreadable"]
        return []

    def _sinfo_failed(self, why: str) -> str:
        if not self.partitions_at:
            return why
        return f"{why}; free GPUs as of {clock_time(self.partitions_at)}"

    def _gpu_details(self) -> list[str]:
        """GPU indices per node of running jobs not asked about yet (one ``scontrol -d`` each, or one for
        all jobs when many started at once)."""
        if self.use_json:
            return []  # squeue --json gives gres_detail itself
        wanted = [j for j in self.active if j.state == "RUNNING" and j.job_id not in self.details]
        if len(wanted) > DETAILS_PER_POLL:
            return self._all_details(wanted)
        errors: list[str] = []
        for job in wanted:
            try:
                res = self._call(["scontrol", "show", "job", "-o", "-d", job.job_id])
            except SlurmError as exc:
                errors.append(str(exc))
                break
            line = next((ln for ln in res.stdout.splitlines() if ln.strip()), "")
            if res.returncode != 0 or not line:
                self.details[job.job_id] = {}
                continue
            try:
                self.details[job.job_id] = parse_scontrol_job(line).gpus
            except (ValueError, AttributeError) as exc:
                self.details[job.job_id] = {}
                errors.append(f"scontrol output for job {job.job_id} unreadable ({exc})")
        return errors

    def _all_details(self, wanted: list[Job]) -> list[str]:
        """Many jobs started at once (an array, a sweep): one ``scontrol -d show job`` of every job."""
        try:
            res = self._call(["scontrol", "show", "job", "-o", "-d"], timeout=2 * SQUEUE_TIMEOUT_S)
        except SlurmError as exc:
            return [str(exc)]
        found: dict[str, dict[str, list[int]]] = {}
        for line in res.stdout.splitlines():
            if line.strip():
                try:
                    job = parse_scontrol_job(line)
                except (ValueError, AttributeError):
                    continue
                found[job.job_id] = job.gpus
        for job in wanted:
            self.details[job.job_id] = found.get(job.job_id, {})
        return []

    def _merged(self) -> list[Job]:
        """squeue's jobs with their GPU placement, then sacct's ended jobs that squeue no longer shows
        (:func:`gputui.slurm.sacct.merge_ended`: one row per job id)."""
        for job in self.active:
            if not job.gpus and self.details.get(job.job_id):
                job.gpus = self.details[job.job_id]
        live = {j.job_id for j in self.active}
        self.details = {k: v for k, v in self.details.items() if k in live}
        return sacct.merge_ended(self.active, self.ended)
