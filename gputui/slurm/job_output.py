"""Following a Slurm job's output while attached: its StdOut/StdErr files (resolved by ``scontrol``) with
the project's one file follower and log parser (:class:`gputui.logs.follower.LogFollower`: polling,
truncation, rotation, a file not created yet), and the metric files of its run directory
(:func:`gputui.logs.files.metric_files.run_dir_files`, looked for until they appear, then now and then
for more). The training metrics
they hold go to ``emit``, as records of the same stream as the probe step's (:mod:`gputui.slurm.attach`)."""

from __future__ import annotations

import time
from collections.abc import Callable

from gputui.slurm.jobs import Job
from gputui.stream.records import Record

RUN_DIR_CHECK_S = 10.0  # how often to look for the job's lightning_logs/ until it appears
RECHECK_FACTOR = 6  # then for files that appear later, this many times less often (one minute)


class JobOutput:
    """The followed files of one attached job; :meth:`poll` emits what they gained since the last poll."""

    def __init__(
        self,
        job: Job,
        emit: Callable[[Record], None],
        *,
        on_text: Callable[[str, bytes], None] | None = None,
        on_reset: Callable[[str, str], None] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        on_unread: Callable[[str, tuple], None] | None = None,
        on_found: Callable[[list[str]], None] | None = None,
        check_every: float = RUN_DIR_CHECK_S,
    ) -> None:
        self.job, self.emit = job, emit
        self.on_text, self.on_reset, self.on_progress, self.on_unread = (
            on_text,
            on_reset,
            on_progress,
            on_unread,
        )
        self.on_found = on_found  # the metric files of the run directory, once found
        self.check_every = check_every
        self.followers: list[tuple[str, object]] = []
        self._metric_files_found, self._next_dir_check = False, 0.0
        self._job_started = time.time() - (job.time_used_s or 0)  # Slurm's run time, at attach

    def open(self) -> None:
        """Start following the job's output files (and its metric files, if there already)."""
        try:
            from gputui.logs.follower import LogFollower  # the project's one follower
        except ImportError:
            return
        self.look_for_metric_files()
        for path in dict.fromkeys(p for p in (self.job.stdout, self.job.stderr) if p):
            on_data = (lambda data, p=path: self.on_text(p, data)) if self.on_text else None
            on_reset = (lambda why, p=path: self.on_reset(p, why)) if self.on_reset else None
            on_unread = (lambda count, p=path: self.on_unread(p, count)) if self.on_unread else None
            follower = LogFollower(
                path,
                job=self.job.job_id,
                on_data=on_data,
                on_reset=on_reset,
                on_progress=self.on_progress,
                on_unread=on_unread,
            )
            self.followers.append((path, follower))

    def look_for_metric_files(self) -> None:
        """The metric files of the job's run directory (its working directory's ``lightning_logs/``, an
        ``nccl-inspector-<job>/`` folder, ...), looked for every ``check_every`` seconds until some appear
        (a training writes them only once it has started), then every ``RECHECK_FACTOR`` × that for files
        that appear later (each NCCL Inspector process writes its own file when its rank starts)."""
        now, job = time.monotonic(), self.job
        if not job.work_dir or now < self._next_dir_check:
            return
        every = self.check_every * (RECHECK_FACTOR if self._metric_files_found else 1)
        self._next_dir_check = now + every
        from gputui.logs.files.metric_files import MetricFileFollower, run_dir_files

        since = self._job_started - 60  # a run directory of this job, not an older run's
        known = {path for path, _follower in self.followers}
        new = [p for p in run_dir_files(job.work_dir, job_id=job.job_id, since=since) if p not in known]
        for path in new:
            self.followers.append((path, MetricFileFollower(path, job=job.job_id)))
        if new:
            self._metric_files_found = True
            if self.on_found is not None:
                self.on_found(new)

    def reread(self) -> None:
        """The output files parsed again from the start (the patterns in effect now), their text not
        shown again; metric files are read again from the start at the next poll."""
        from gputui.logs.files.metric_files import MetricFileFollower

        for index, (path, follower) in enumerate(self.followers):
            if isinstance(follower, MetricFileFollower):
                follower.file.close()
                self.followers[index] = (path, MetricFileFollower(path, job=self.job.job_id))
                continue
            try:
                records = follower.reread()  # type: ignore[attr-defined]
            except OSError:
                continue
            for rec in records:
                self.emit(rec)

    def poll(self, final: bool = False) -> None:
        """Emit what every followed file gained (``final``: the job has ended, read to the end)."""
        for _path, follower in self.followers:
            try:
                records = follower.finish() if final else follower.poll()  # type: ignore[attr-defined]
            except OSError:
                continue
            for rec in records:
                self.emit(rec)

    def close(self) -> None:
        for _path, follower in self.followers:
            follower.file.close()  # type: ignore[attr-defined]
        self.followers = []
