"""Polling Slurm for the home screen: my jobs, ended jobs, GPU placement and the cluster's free GPUs.

Per refresh exactly one ``squeue`` call (``-O`` text, or ``--json`` when configured; both JSON shapes, 22.05
and ≥ 23.02, are read). Less often: ``sacct`` for jobs that ended in the last day (stopped for good once
Slurm says accounting is disabled), ``sinfo`` for the partitions. A job that starts running is asked about
once with ``scontrol -d show job`` for which GPU indices sit on which node (also where TRES does not count
GPUs). Every failure becomes one line in :attr:`JobsSnapshot.errors` and the last good answer is kept, so
a slow or broken Slurm never blanks the list. All calls are argv lists with timeouts (no shell).
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gputui.slurm import sacct
from gputui.slurm.cluster import PartitionGpus, parse_snapshot, sinfo_argv
from gputui.slurm.commands import SlurmError, SlurmNotFound, last_line, run_slurm
from gputui.slurm.jobs import AccountingDisabled, Job, jobs_from_json, parse_squeue, squeue_argv
from gputui.slurm.scontrol import parse_scontrol_job

Runner = Callable[[list[str], float], subprocess.CompletedProcess]
SQUEUE_TIMEOUT_S = 10.0
ENDED_EVERY_S = 60.0
CLUSTER_EVERY_S = 60.0
DETAILS_PER_POLL = 8  # more newly started jobs than this: one scontrol call for all jobs instead


def default_runner(argv: list[str], timeout: float) -> subprocess.CompletedProcess:
    return run_slurm(argv, timeout=timeout, check=False)


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
        self.run = run or default_runner
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
        self.cluster_name = ""
        self.version = ""
        self._asked_config = False
        self._next_ended = 0.0
        self._next_cluster = 0.0

    # ------------------------------------------------------------------ one refresh

    def poll(self, *, force: bool = False, quick: bool = False) -> JobsSnapshot:
        """One refresh. ``quick``: squeue only (the first screen shows the list sooner; the next poll
        asks the rest)."""
        started = time.monotonic()
        errors: list[str] = []
        try:
            if quick:
                errors += self._squeue()
                return JobsSnapshot(
                    jobs=self._merged(),
                    taken_at=self.taken_at,
                    errors=errors,
                    poll_s=time.monotonic() - started,
                )
            self._config()
            errors += self._squeue()
            now = self.clock()
            if self.accounting is not False and self.ended_hours > 0 and (force or now >= self._next_ended):
                self._next_ended = now + ENDED_EVERY_S
                errors += self._sacct()
            if force or now >= self._next_cluster:
                self._next_cluster = now + CLUSTER_EVERY_S
                errors += self._sinfo()
            errors += self._gpu_details()
        except SlurmNotFound as exc:
            return JobsSnapshot(errors=[str(exc)], slurm_found=False, poll_s=time.monotonic() - started)
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

    def _call(self, argv: list[str], timeout: float = SQUEUE_TIMEOUT_S) -> subprocess.CompletedProcess:
        """One Slurm command; SlurmError (timeouts, cannot run) passes up, SlurmNotFound too."""
        return self.run(argv, timeout)

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

    def _squeue(self) -> list[str]:
        argv = ["squeue", "--json"] if self.use_json else squeue_argv(all_states=True)
        try:
            res = self._call(argv)
        except SlurmNotFound:
            raise
        except SlurmError as exc:
            return [str(exc)]
        if res.returncode != 0:
            return [f"squeue: {last_line(res.stderr) or f'exit status {res.returncode}'}"]
        try:
            jobs = self._parse_json(res.stdout) if self.use_json else parse_squeue(res.stdout)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            why = f"{type(exc).__name__}: {str(exc)[:80]}"
            return [f"squeue output unreadable ({why}); showing the last good list"]
        if not jobs and res.stdout.strip() and not self.use_json:
            return ["squeue output unreadable (no line had the expected fields); showing the last good list"]
        self.active = jobs
        self.taken_at = time.time()
        return []

    def _parse_json(self, text: str) -> list[Job]:
        doc = json.loads(text)
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        jobs = jobs_from_json(doc, user=self.user or None)
        for job in jobs:
            if job.gpus:
                self.details[job.job_id] = job.gpus
        return jobs

    def _sacct(self) -> list[str]:
        argv = sacct.recent_argv(self.user, f"now-{int(self.ended_hours * 3600)}seconds")
        try:
            res = self._call(argv)
            self.ended = sacct.parse_recent(res.stdout, res.stderr, res.returncode)
        except AccountingDisabled:
            self.accounting = False
            self.ended = []
            return []
        except SlurmNotFound:
            self.accounting = False
            return []
        except SlurmError as exc:
            return [str(exc)]
        self.accounting = True
        return []

    def _sinfo(self) -> list[str]:
        try:
            res = self._call(sinfo_argv())
        except SlurmNotFound:
            return []
        except SlurmError as exc:
            return [str(exc)]
        if res.returncode != 0:
            return [f"sinfo: {last_line(res.stderr) or f'exit status {res.returncode}'}"]
        snapshot = parse_snapshot(res.stdout)
        if snapshot.partitions or not res.stdout.strip():
            self.partitions = snapshot.partitions
        if snapshot.skipped:
            return [f"sinfo: {snapshot.skipped} line(s) unreadable"]
        return []

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
        """squeue's jobs, then sacct's ended jobs that squeue no longer shows (one row per job id)."""
        seen = {j.job_id for j in self.active}
        jobs = []
        for job in self.active:
            if not job.gpus and self.details.get(job.job_id):
                job.gpus = self.details[job.job_id]
            jobs.append(job)
        jobs += [j for j in self.ended if j.job_id not in seen]
        live = {j.job_id for j in self.active}
        self.details = {k: v for k, v in self.details.items() if k in live}
        return jobs
