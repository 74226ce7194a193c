"""The jobs screen's keys that act on the selected job through Slurm: every entry of the job-action table
(:data:`gputui.home.actions.ACTIONS`: cancel, signal, hold, release) is checked, asked and run here, in
one worker that also fetches and submits batch scripts. A failure is one line in the status bar."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import work

from gputui.home import actions
from gputui.home.actions import action
from gputui.tui.messages import ActionDone
from gputui.tui.screens.dialogs import ChoiceScreen, ConfirmScreen
from gputui.tui.widgets.jobs_table import JobsTable

if TYPE_CHECKING:
    from gputui.slurm.jobs import Job


class JobActionKeys:
    """Mixed into :class:`~gputui.tui.screens.jobs.JobsScreen` (it gives ``say``, ``app``, ``query_one``)."""

    def _job(self, *, active: bool = False, running: bool = False) -> Job | None:
        row = self.query_one(JobsTable).selected_row()
        if row is None or row.job is None:
            self.say("choose a job row first (a group row stands for several jobs)", "warning")
            return None
        job = row.job
        if running and job.state != "RUNNING":
            self.say(f"job {job.job_id} is {job.state}: only a running job has nodes to open", "warning")
            return None
        if active and not job.active:
            self.say(f"job {job.job_id} has already ended ({job.state})", "warning")
            return None
        return job

    def action_job_action(self, name: str) -> None:
        """A key of :data:`~gputui.home.actions.ACTIONS`: check the job qualifies, ask, then run it."""
        entry = action(name)
        job = self._job()
        if job is None:
            return
        why_not = entry.qualifies(job)
        if why_not:
            self.say(why_not, "warning")
            return

        def run(choice: str | None = None) -> None:
            if entry.doing:
                self.say(entry.question(entry.doing, job))
            self._in_worker(lambda: entry.run(job.job_id, choice))

        if entry.confirm:
            question = ConfirmScreen(entry.question(entry.confirm, job))
            self.app.push_screen(question, lambda yes: run() if yes else None)
        elif entry.choose:
            choice = ChoiceScreen(entry.question(entry.choose, job), list(entry.choices))
            self.app.push_screen(choice, lambda chosen: run(chosen) if chosen else None)
        else:
            run()

    @work(thread=True, exit_on_error=False, group="action")
    def _in_worker(
        self, call: Callable[[], object], then: Callable | None = None, refresh: bool = True
    ) -> None:
        """The one worker of every job action: ``call`` (Slurm) in a thread; its answer as an
        :class:`ActionDone` line (a result's message, or a string), or handed to ``then`` on the UI thread.
        A failure is one line."""
        try:
            result = call()
        except actions.ACTION_ERRORS as exc:
            self.post_message(ActionDone(str(exc), "error", refresh=refresh))
            return
        if then is not None:
            self.app.call_from_thread(then, result)
        elif isinstance(result, str):
            self.post_message(ActionDone(result, refresh=refresh))
        else:
            level = "info" if getattr(result, "confirmed", True) else "warning"
            self.post_message(ActionDone(getattr(result, "message", str(result)), level, refresh=refresh))
