"""The attach source: the project's :class:`~gputui.slurm.attach.Attacher` on a Slurm job, into a feed.

The probe step's records, the job's output (raw text for the log pane, parsed metrics for the charts) and
the job's Slurm details (name, state, time limit, nodes, GPUs) all go through the feed. Errors (job not
found, not yours, Slurm missing, the probe step failing) become one line in the UI. Stopping ends only the
probe step; the job keeps running.
"""

from __future__ import annotations

import time

from gputui.monitor.state import JobInfo
from gputui.slurm.attach import Attacher, AttachError, AttachOptions
from gputui.slurm.commands import SlurmError
from gputui.slurm.jobs import Job
from gputui.sources.base import Feed, RecordSource


def job_changes(job: Job) -> dict:
    """The header fields a Slurm job gives."""
    started = (
        time.time() - job.time_used_s if job.time_used_s is not None and job.state != "PENDING" else None
    )
    gpus = sum(len(v) for v in job.gpus.values()) or None
    return {
        "job_id": job.job_id,
        "name": job.name,
        "state": job.state,
        "started": started,
        "time_limit_s": job.time_limit_s,
        "nodes": list(job.nodes),
        "gpus_expected": gpus,
    }


class AttachSource(RecordSource):
    kind = "attach"

    def __init__(self, job_id: str, options: AttachOptions | None = None) -> None:
        super().__init__()
        self.job_id = job_id
        self.options = options or AttachOptions()
        self.attacher: Attacher | None = None
        self._relearn_note = ""  # said when the attacher starts reading the output files again

    def job_info(self) -> JobInfo:
        return JobInfo(kind="attach", title=f"job {self.job_id}", job_id=self.job_id, state="ATTACHING")

    def run(self, feed: Feed) -> None:
        attacher = self.attacher = Attacher(
            self.job_id,
            feed.record,
            self.options,
            on_text=feed.text,
            on_reset=feed.text_reset,
            on_job=lambda job: feed.job(**job_changes(job)),
            on_progress=feed.catch_up,
        )
        attacher.on_unread, attacher.on_forget = feed.unread, lambda: self._forget(feed)
        if self.stopping.is_set():
            return
        try:
            attacher.run()
        except (AttachError, SlurmError, OSError) as exc:
            feed.say("error", str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        except Exception as exc:  # never take the UI down: say it in one line
            feed.say("error", f"attach failed: {type(exc).__name__}: {exc}")

    def relearn(self, note: str = "") -> bool:
        if self.attacher is None or self.finished.is_set() or self.stopping.is_set():
            return False
        self._relearn_note = note
        self.attacher.relearn()
        return True

    def _forget(self, feed: Feed) -> None:
        """The attacher reads the output files again: the training shown goes, the note is said."""
        feed.forget_metrics()
        if self._relearn_note:
            feed.say("info", self._relearn_note)

    def stop(self) -> None:
        super().stop()
        if self.attacher is not None:
            self.attacher.stop.set()
