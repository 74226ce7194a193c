"""The home screen (``gputui``): my jobs, the cluster's free GPUs, and the keys that act on a job.

A timer asks a thread worker for a refresh (one ``squeue`` each time; never two at once); the answer comes
back as a :class:`~gputui.tui.messages.JobsPolled` message and only the cells that changed are redrawn.
Errors are one line in the status bar over the last good table (what failed, since when, from when the
table is); the list says "no jobs" only when squeue answered with none. Leaving the screen (quitting) stops
the poller: a hung Slurm call is killed, never waited for. The screen composes and delegates: the header,
detail and status lines are widgets (:mod:`gputui.tui.widgets.jobs_lines`); the job-action table's keys and
its one worker are :mod:`~gputui.tui.screens.jobs_actions`, the keys that open other screens
:mod:`~gputui.tui.screens.jobs_open`. Here: polling, drawing, the filter, and the editor and the shell
inside a job (run with the app suspended).
"""

from __future__ import annotations

import os
import subprocess
import time
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Input

from gputui.config import Config
from gputui.home import actions
from gputui.home.actions import ACTIONS
from gputui.home.poller import JobsSnapshot, SlurmPoller
from gputui.home.rows import AttachedFigures, JobRow, build_rows, filter_rows
from gputui.serve.mode import not_in_browser, served
from gputui.tui.messages import ActionDone, JobsPolled
from gputui.tui.screens.dialogs import ChoiceScreen, ConfirmScreen, TextScreen
from gputui.tui.screens.jobs_actions import JobActionKeys
from gputui.tui.screens.jobs_open import OpenKeys
from gputui.tui.widgets.cluster_pane import ClusterPane
from gputui.tui.widgets.jobs_lines import JobDetail, JobsHeader, JobsStatus
from gputui.tui.widgets.jobs_table import JobsTable

if TYPE_CHECKING:
    from gputui.slurm.jobs import Job


class JobsScreen(JobActionKeys, OpenKeys, Screen):
    BINDINGS = [
        Binding("q", "app.quit", "quit"),
        Binding("enter", "open_job", "open", show=False),
        Binding("l", "launch", "launch"),
        *(Binding(a.key, f"job_action('{a.name}')", a.label, show=a.footer) for a in ACTIONS),
        Binding("v", "view_script", "script"),
        Binding("e", "edit_script", "edit"),
        Binding("o", "shell", "shell"),
        Binding("slash", "filter", "filter"),
        Binding("r", "refresh", "refresh"),
        Binding("h", "history", "GPU-hours", show=False),
        Binding("S", "settings", "settings", show=False),
        Binding("d", "demo", "demo", show=False),
        Binding("p", "replay", "replay", show=False),
        Binding("question_mark", "help", "help"),
        Binding("escape", "clear_filter", show=False),
    ]

    def __init__(self, poller: SlurmPoller, config: Config, attach_options=None) -> None:
        super().__init__()
        self.poller = poller
        self.config = config
        self.attach_options = attach_options  # AttachOptions for the probes of dashboards opened here
        self.snapshot: JobsSnapshot | None = None
        self.rows: list[JobRow] = []
        self.filter_text = ""
        self.figures: dict[str, AttachedFigures] = {}
        self.status: tuple[str, str] | None = None  # (text, level) of the last action
        self._polling = False
        self._poll_again = False

    def compose(self) -> ComposeResult:
        yield JobsHeader(id="jobs-header")
        yield Input(id="filter", placeholder="filter: words in any column (enter: keep, esc: clear)")
        yield JobsTable(id="jobs")
        yield JobDetail(id="job-detail")
        yield ClusterPane(id="cluster")
        yield JobsStatus(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#filter").display = False
        self.query_one("#cluster").border_title = "cluster: free GPUs by partition"
        self.query_one("#jobs").border_title = "my jobs"
        self.query_one(JobsTable).focus()
        self._draw_header()
        self._polling = True
        self._poll(False, quick=True)  # squeue alone first: the list is on screen sooner
        self._poll_again = True  # then everything else (cluster, ended jobs, GPU placement) at once
        self.set_interval(self.config.jobs.refresh_s, self.request_poll)

    # ------------------------------------------------------------------ polling

    def request_poll(self, force: bool = False) -> None:
        if self.app.screen is not self and self.snapshot is not None and not force:
            return  # a dashboard (or the form) is on top: no squeue calls until this list is shown again
        if self._polling:
            self._poll_again = self._poll_again or force
            return
        self._polling = True
        self._poll(force)

    @work(thread=True, exit_on_error=False, group="poll")
    def _poll(self, force: bool, quick: bool = False) -> None:
        try:
            snapshot = self.poller.poll(force=force, quick=quick)
        except Exception as exc:  # a poller bug must not stop the list: say it, keep polling
            last = self.snapshot or JobsSnapshot()
            snapshot = JobsSnapshot(
                jobs=last.jobs,
                partitions=last.partitions,
                taken_at=last.taken_at,
                errors=[f"refresh failed: {exc}"],
            )
        self.post_message(JobsPolled(snapshot))

    def on_unmount(self) -> None:
        """Quitting: kill the Slurm call in flight (the poll's thread then ends at once) instead of
        letting the app's exit wait for its timeout."""
        self.poller.stop()

    def on_screen_resume(self) -> None:
        """Back from a dashboard or the form: ask squeue at once when the list is older than a refresh
        (none was asked meanwhile); back from a dialog, the list is fresh enough."""
        if self.snapshot is not None and time.time() - self.snapshot.taken_at > self.config.jobs.refresh_s:
            self.request_poll()

    def on_jobs_polled(self, message: JobsPolled) -> None:
        self._polling = False
        first = self.snapshot is None
        self.snapshot = message.snapshot  # type: ignore[assignment]
        self.redraw()
        if first and os.environ.get("GPUTUI_JOBS_LISTED_FILE"):  # benchmarks/home_screen.py
            self.call_after_refresh(self._listed, os.environ["GPUTUI_JOBS_LISTED_FILE"])
        if self._poll_again:
            self._poll_again = False
            self.request_poll(force=True)

    def _listed(self, report: str) -> None:
        """Benchmark hook: the wall-clock time the first list of jobs was on screen, then quit."""
        with open(report, "a", encoding="utf-8") as fh:
            fh.write(f"{time.time():.6f} {len(self.rows)}\n")
        self.app.exit(0)

    # ------------------------------------------------------------------ drawing

    def redraw(self) -> None:
        snapshot = self.snapshot
        if snapshot is not None:
            self.rows = build_rows(snapshot.jobs, self.figures)
            self.query_one(JobsTable).show(filter_rows(self.rows, self.filter_text))
            self.query_one(ClusterPane).show(snapshot.partitions)
            self.query_one("#cluster").display = bool(snapshot.partitions)
        self._draw_header()
        self._draw_detail()
        self._draw_status()

    def _draw_header(self) -> None:
        self.query_one(JobsHeader).show(self.snapshot, self.filter_text, self.config.jobs.refresh_s)

    def _draw_detail(self) -> None:
        self.query_one(JobDetail).show(self.query_one(JobsTable).selected_row(), self.snapshot)

    def _draw_status(self) -> None:
        self.query_one(JobsStatus).show(self.status, self.snapshot, self.config.jobs.ended_hours)

    @on(JobsTable.RowHighlighted)
    def _row_moved(self) -> None:
        self._draw_detail()

    @on(JobsTable.RowSelected)
    def _row_chosen(self) -> None:
        """Enter on a row (the table turns the key into this message)."""
        self.action_open_job()

    def say(self, text: str, level: str = "info") -> None:
        self.status = (text, level)
        self._draw_status()

    def on_action_done(self, message: ActionDone) -> None:
        self.say(message.text, message.level)
        if message.refresh:
            self.request_poll(force=True)

    def action_view_script(self) -> None:
        job = self._job()
        if job is not None:
            self._script(job, edit=False)

    def action_edit_script(self) -> None:
        if served():
            self.say(not_in_browser("the editor (e)"), "warning")
            return
        job = self._job()
        if job is not None:
            self._script(job, edit=True)

    def _script(self, job: Job, edit: bool) -> None:
        got = lambda answer: self._got_script(job, *answer, edit)  # noqa: E731
        self._in_worker(lambda: actions.batch_script(job.job_id), then=got, refresh=False)

    def _got_script(self, job: Job, text: str, origin: str, edit: bool) -> None:
        if not edit:
            self.app.push_screen(TextScreen(f"job {job.job_id}: {origin}", text, shell=True))
            return
        try:
            path = actions.editable_copy(job, text)
        except OSError as exc:
            self.say(f"cannot write a copy of the script: {exc}", "error")
            return
        argv = actions.editor_argv(path)
        try:
            with self.app.suspend():
                code = subprocess.call(argv)
        except Exception as exc:  # no editor (OSError), or a terminal that cannot be suspended
            self.say(f"cannot run the editor {argv[0]!r}: {exc}", "error")
            return
        if code != 0:
            self.say(f"{argv[0]} exited {code}; the copy is kept at {path}, nothing submitted", "warning")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._in_worker(lambda: actions.submit_edited(str(path)))
            else:
                self.say(f"not submitted; the edited copy is kept at {path}")

        self.app.push_screen(ConfirmScreen(f"Submit the edited script {path.name} with sbatch?"), answered)

    def action_shell(self) -> None:
        if served():
            self.say(not_in_browser("a shell inside the job (o)"), "warning")
            return
        job = self._job(running=True)
        if job is None:
            return
        nodes = job.nodes or ([job.batch_host] if job.batch_host else [])
        if not nodes:
            self.say(f"Slurm names no node for job {job.job_id} yet", "warning")
        elif len(nodes) == 1:
            self._shell(job, nodes[0])
        else:
            choices = [(n, f"{n}  GPU {','.join(map(str, job.gpus.get(n, []))) or '-'}") for n in nodes]
            self.app.push_screen(
                ChoiceScreen(f"Open a shell in job {job.job_id} on which node?", choices),
                lambda node: node and self._shell(job, node),
            )

    def _shell(self, job: Job, node: str) -> None:
        try:
            argv, env = actions.shell_command(job, node)
            with self.app.suspend():
                print(f"gputui: shell in job {job.job_id} on {node} (exit returns to gputui)", flush=True)
                code = subprocess.call(argv, env=env)
        except Exception as exc:  # a bad node name (SlurmError), no srun (OSError), no suspend
            self.say(f"cannot open a shell: {exc}", "error")
            return
        self.say(f"shell on {node} ended (exit {code})", "info" if code == 0 else "warning")

    # ------------------------------------------------------------------ list keys

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.value = self.filter_text
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        self.redraw()

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        event.input.display = bool(self.filter_text)
        self.query_one(JobsTable).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        self.filter_text = ""
        box.value = ""
        box.display = False
        self.query_one(JobsTable).focus()
        self.redraw()

    def action_refresh(self) -> None:
        self.say("refreshing…")
        self.status = None
        self.request_poll(force=True)
