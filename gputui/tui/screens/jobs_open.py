"""The jobs screen's keys that open another screen: a job's dashboard (attached, or its output replayed),
the launch form, the demo, a replay of chosen files, the settings, the GPU-hours history and the help.
Sources and screens are imported on first use (a faster first screen)."""

from __future__ import annotations

import os

from gputui.home.rows import AttachedFigures
from gputui.tui.screens.dialogs import PromptScreen, TextScreen
from gputui.tui.screens.help import HelpScreen
from gputui.tui.widgets.jobs_table import JobsTable
from gputui.tui.widgets.jobs_text import HOME_HELP


class OpenKeys:
    """Mixed into :class:`~gputui.tui.screens.jobs.JobsScreen` (``config``, ``snapshot``, ``say``, ...)."""

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
