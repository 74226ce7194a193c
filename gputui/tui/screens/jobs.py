"""The home screen (``gputui``): my jobs, the cluster's free GPUs, and the keys that act on a job.

A timer asks a thread worker for a refresh (one ``squeue`` each time; never two at once); the answer comes
back as a :class:`~gputui.tui.messages.JobsPolled` message and only the cells that changed are redrawn.
Errors are one line in the status bar over the last good table (what failed, since when, from when the
table is); the list says "no jobs" only when squeue answered with none. Leaving the screen (quitting) stops
the poller: a hung Slurm call is killed, never waited for. Job actions (cancel, signal, script,
submit) run in workers and report through :class:`~gputui.tui.messages.ActionDone`; the editor and the
shell inside a job run with the app suspended.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from gputui.config import Config
from gputui.home import actions
from gputui.home.actions import ACTIONS, action
from gputui.home.poller import JobsSnapshot, SlurmPoller
from gputui.home.rows import AttachedFigures, JobRow, build_rows, filter_rows
from gputui.serve.mode import not_in_browser, served
from gputui.tui.messages import ActionDone, JobsPolled
from gputui.tui.screens.dialogs import ChoiceScreen, ConfirmScreen, PromptScreen, TextScreen
from gputui.tui.screens.help import HelpScreen
from gputui.tui.screens.jobs_text import HOME_HELP, detail_line, header_line, status_lines
from gputui.tui.widgets.cluster_pane import ClusterPane
from gputui.tui.widgets.jobs_table import JobsTable

if TYPE_CHECKING:
    from gputui.slurm.jobs import Job


class JobsScreen(Screen):
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
        self._shown: dict[str, object] = {}  # what each Static shows now

    def compose(self) -> ComposeResult:
        yield Static(id="jobs-header")
        yield Input(id="filter", placeholder="filter: words in any column (enter: keep, esc: clear)")
        yield JobsTable(id="jobs")
        yield Static(id="job-detail")
        yield ClusterPane(id="cluster")
        yield Static(id="status")
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

    def _update(self, selector: str, content: Text | str) -> None:
        """Update a one-line Static only when its content changed (each repaint costs CPU at idle)."""
        if self._shown.get(selector) != content:
            self._shown[selector] = content
            self.query_one(selector, Static).update(content)

    def _draw_header(self) -> None:
        text = header_line(self.snapshot, self.filter_text, self.config.jobs.refresh_s)
        self._update("#jobs-header", text)

    def _draw_detail(self) -> None:
        self._update("#job-detail", detail_line(self.query_one(JobsTable).selected_row(), self.snapshot))

    def _draw_status(self) -> None:
        lines = status_lines(self.status, self.snapshot, self.config.jobs.ended_hours)
        self._update("#status", lines[0] if lines else "")
        self.query_one("#status", Static).display = bool(lines)

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

    # ------------------------------------------------------------------ the selected job

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

    def open_dashboard(self, source, job_id: str | None = None) -> None:
        from gputui.tui.screens.dashboard import DashboardScreen  # imported on first use: a faster start

        def back(result) -> None:
            if job_id and result is not None:
                util, loss = result
                self.figures[job_id] = AttachedFigures(util, loss)
                self.redraw()
            self.query_one(JobsTable).focus()

        self.app.push_screen(DashboardScreen(source, self.config, back=True), back)

    def action_open_job(self) -> None:
        job = self._job()
        if job is None:
            return
        if job.active:
            from gputui.sources.attach import AttachSource

            self.open_dashboard(AttachSource(job.job_id, self.attach_options), job.job_id)
            return
        from gputui.sources.inputs import job_files

        files = job_files(job)
        if not files:
            self.say(f"job {job.job_id} ended and none of its output files are found here", "warning")
            return
        from gputui.sources.replay import ReplaySource

        self.open_dashboard(ReplaySource(files, self.config.alerts), job.job_id)

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

    def action_launch(self) -> None:
        from gputui.tui.screens.launch import LaunchScreen

        snap = self.snapshot
        cluster = snap.cluster_name if snap else ""
        slurm = bool(snap and snap.slurm_found)
        partitions = [p.name for p in snap.partitions] if snap else []
        self.app.push_screen(
            LaunchScreen(self.config, cluster, slurm=slurm, partitions=partitions), self._launched
        )

    def _launched(self, result) -> None:
        if not result:
            return
        kind, value = result
        if kind == "slurm":
            from gputui.sources.attach import AttachSource

            self.say(f"submitted job {value}")
            self.request_poll(force=True)
            self.open_dashboard(AttachSource(value, self.attach_options), value)
        else:
            from gputui.sources.local import LocalRunSource

            self.open_dashboard(LocalRunSource(value))

    def action_demo(self) -> None:
        from gputui.extras import MissingExtra, require

        try:
            require("demo", "the demo (a real training run)")
        except MissingExtra as exc:
            self.say(f"{exc} (or make demo)", "error")
            return
        from gputui.sources.demo import demo_spec
        from gputui.sources.local import LocalRunSource

        self.open_dashboard(LocalRunSource(demo_spec(), simulated=True, title="demo"))

    def action_replay(self) -> None:
        def chosen(text: str | None) -> None:
            if not text:
                return
            import shlex

            try:
                files = shlex.split(text)
            except ValueError as exc:
                self.say(f"cannot read the file names: {exc}", "error")
                return
            missing = [f for f in files if not os.path.isfile(os.path.expanduser(f))]
            if missing:
                self.say(f"no such file: {missing[0]}", "error")
                return
            from gputui.sources.replay import ReplaySource

            self.open_dashboard(ReplaySource([os.path.expanduser(f) for f in files], self.config.alerts))

        self.app.push_screen(
            PromptScreen(
                "Replay which files? (record files, training logs; space-separated)",
                "run.jsonl slurm-123.out",
            ),
            chosen,
        )

    def action_settings(self) -> None:
        from gputui.home.settings_text import settings_text

        cluster = self.snapshot.cluster_name if self.snapshot else ""
        text = settings_text(self.config, cluster, getattr(self.app, "warning", None))
        self.app.push_screen(TextScreen("settings in effect", text))

    def action_history(self) -> None:
        from gputui.tui.screens.history import HistoryScreen

        self.app.push_screen(HistoryScreen(user=self.poller.user))

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(HOME_HELP))
