"""The local-run source: the embedded launcher running a real command, followed live.

The ranks are started with :func:`gputui.slurm.launch_local.launch_local` (the same environment contract
as a Slurm job); each rank's output file is followed with the project's log follower (raw text for the log
pane, parsed metrics for the charts), and a probe samples this machine every ``interval`` seconds in a
thread: real GPUs through the usual backends, or (``simulated=True``, the demo) one simulated GPU per rank
that is busy exactly while that rank computes. Stopping (``q``, SIGTERM, SIGHUP: :mod:`gputui.hangup`) or
an error terminates the ranks still running (they are gputui's own). A pattern taught from the dashboard
(:meth:`LocalRunSource.relearn`) makes the loop read every rank's output again from the start.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from gputui.monitor.state import JobInfo
from gputui.probes.base import Backend, ProbeError
from gputui.slurm.batch_script import LaunchSpec
from gputui.slurm.commands import SlurmError
from gputui.slurm.launch_local import LocalRun, launch_local
from gputui.sources.base import Feed, RecordSource

if TYPE_CHECKING:
    from gputui.probes.sampler import Sampler

LOG_POLL_S = 0.25


class LocalRunSource(RecordSource):
    kind = "local"

    def __init__(
        self,
        spec: LaunchSpec,
        *,
        simulated: bool = False,
        backend: str = "auto",
        interval: float = 1.0,
        title: str | None = None,
        env: dict[str, str] | None = None,
        folder: Path | None = None,
    ) -> None:
        super().__init__()
        self.spec = spec
        self.simulated = simulated
        self.backend_name = backend
        self.interval = interval
        self.title = title or f"local {spec.job_name or Path(spec.cmd[0]).name}"
        self.env = env
        self.folder = folder
        self.run_handle: LocalRun | None = None
        self.exit_codes: list[int] | None = None
        self._relearn = threading.Event()
        self._relearn_note = ""

    def job_info(self) -> JobInfo:
        return JobInfo(
            kind="local",
            title=self.title,
            name=self.spec.job_name or Path(self.spec.cmd[0]).name,
            state="STARTING",
            nodes=["localhost"],
            gpus_expected=self.spec.world_size if self.simulated else None,
            simulated=self.simulated,
        )

    # ------------------------------------------------------------------ probe

    def _backend(self) -> Backend:
        if self.simulated:
            from gputui.probes.process_sim import ProcessSimBackend

            def pids() -> list[int | None]:
                run = self.run_handle
                if run is None:
                    return []
                return [p.pid if p.poll() is None else None for p in run.procs]

            return ProcessSimBackend(pids, self.spec.world_size, self.env)
        from gputui.probes.backends import make_backend

        return make_backend(self.backend_name, self.env)

    def _probe(self, feed: Feed, started: threading.Event) -> Sampler | None:
        from gputui.probes.host import HostProbe
        from gputui.probes.sampler import Sampler, started_event

        try:
            backend = self._backend()
            devices = backend.open()
        except ProbeError as exc:
            feed.say("warning", f"no GPU samples: {exc}")
            backend, devices = None, []
        sampler = Sampler(backend or Backend(self.env), HostProbe(self.env), interval=self.interval)
        if backend is not None:
            feed.record(started_event(backend, self.interval, len(devices)))

        def loop() -> None:
            started.wait()
            try:
                sampler.run(feed.record)
            except Exception as exc:  # a probe that dies is told, the run goes on
                feed.say("error", f"local probe stopped: {type(exc).__name__}: {exc}")

        threading.Thread(target=loop, name="gputui-local-probe", daemon=True).start()
        return sampler

    def relearn(self, note: str = "") -> bool:
        if self.exit_codes is not None or self.finished.is_set() or self.stopping.is_set():
            return False  # the run has ended: nothing follows its output any more
        self._relearn_note = note
        self._relearn.set()
        return True

    # ------------------------------------------------------------------ run

    def run(self, feed: Feed) -> None:
        from gputui.logs.follower import LogFollower  # imported in the worker: not on the first frame's path

        started = threading.Event()
        sampler = self._probe(feed, started)
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("OMP_NUM_THREADS", "1")
        try:
            run = self.run_handle = launch_local(self.spec, base_env=env, folder=self.folder)
        except (SlurmError, OSError) as exc:
            feed.say("error", f"cannot start the run: {exc}")
            feed.job(state="FAILED")
            if sampler:
                sampler.request_stop_quiet("failed")
            started.set()
            return
        started.set()
        feed.job(state="RUNNING", started=time.time(), job_id=run.run_id)
        followers = [
            LogFollower(
                path,
                on_data=lambda data, p=str(path): feed.text(p, data),
                on_reset=lambda why, p=str(path): feed.text_reset(p, why),
                on_unread=lambda count, p=str(path): feed.unread(p, count),
            )
            for path in run.outputs
        ]
        try:
            while not self.stopping.is_set():
                if self._relearn.is_set():
                    self._relearn.clear()
                    feed.forget_metrics()
                    if self._relearn_note:
                        feed.say("info", self._relearn_note)
                    for follower in followers:
                        feed.records(follower.reread())
                for follower in followers:
                    feed.records(follower.poll())
                if all(code is not None for code in run.poll()):
                    break
                self.stopping.wait(LOG_POLL_S)
        finally:
            run.terminate()  # ranks still running (stopped, or an error here) never outlive the source
            for follower in followers:
                with contextlib.suppress(OSError):
                    feed.records(follower.finish())
            if sampler:
                sampler.request_stop_quiet("run ended")
        codes = self.exit_codes = [int(p.wait()) for p in run.procs]
        if self.stopping.is_set():
            feed.job(state="CANCELLED")
            return
        failed = [f"rank {r} exited {c}" for r, c in enumerate(codes) if c]
        feed.job(state="FAILED" if failed else "COMPLETED")
        feed.say("error" if failed else "info", "; ".join(failed) if failed else "all ranks finished")
