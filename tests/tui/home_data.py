"""Deterministic Slurm answers for the jobs home screen's TUI tests (no real Slurm is ever called).

:class:`FakeSlurm` is the poller's runner: it answers ``scontrol show config``, ``squeue -O``, ``sacct``,
``sinfo`` and ``scontrol -d show job`` from recorded Slurm 22.05 outputs (``tests/slurm/data``) and from
lines generated here in the exact field order gputui asks for (:data:`gputui.slurm.jobs.SQUEUE_FIELDS`,
:data:`gputui.slurm.sacct.SACCT_FIELDS`). Tests change its attributes between polls (a failing squeue,
a reordered list) and count its calls. The squeue answer's wall-clock time (the header's HH:MM:SS) is
pinned with :func:`pin_clock`; times on screen are shown in UTC.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from textual.pilot import Pilot

import gputui.home.poller as poller_module
import gputui.tui.screens.jobs as jobs_module
from gputui.config import Config, JobsSettings
from gputui.home.poller import SlurmPoller
from gputui.monitor.state import JobInfo
from gputui.slurm.jobs import SEP, SQUEUE_FIELDS
from gputui.slurm.sacct import SACCT_FIELDS
from gputui.sources.base import Feed, RecordSource
from gputui.tui.app import GputuiApp
from gputui.tui.screens.jobs import JobsScreen

DATA = Path(__file__).resolve().parent.parent / "slurm" / "data"
T_ANSWER = 1_800_000_000.0  # 2027-01-15 08:00:00 UTC: when every squeue answer "arrived"
USER = "root"  # the recorded squeue lines are root's jobs
CLUSTER = "hpc1"
VERSION = "22.05.11"


def recorded(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


# --------------------------------------------------------------------------- generated Slurm lines


def squeue_line(
    job_id: int,
    *,
    name: str = "train",
    state: str = "RUNNING",
    reason: str = "None",
    partition: str = "gpu",
    account: str = "proj1",
    nodes: int = 1,
    tasks: int = 1,
    nodelist: str = "",
    tres: str = "gres:gpu:4",
    used: str = "0:00",
    limit: str = "1:00:00",
    array: tuple[int, int] | None = None,
    work_dir: str = "/home/root/run",
    user: str = USER,
) -> str:
    """One ``squeue -h -O Field:\\x1f,...`` line (every field followed by the separator)."""
    pending = state == "PENDING"
    values = {
        "raw_job_id": str(job_id),
        "array_job_id": str(array[0]) if array else str(job_id),
        "array_task_id": str(array[1]) if array else "N/A",
        "het_job_id": "N/A",
        "het_job_offset": "N/A",
        "name": name,
        "user": user,
        "state": state,
        "reason": reason,
        "partition": partition,
        "account": account,
        "num_nodes": str(nodes),
        "num_tasks": str(tasks),
        "nodelist": "" if pending else nodelist,
        "tres_per_node": tres or "N/A",
        "time_used": used,
        "time_limit": limit,
        "submit_time": "2027-01-15T07:00:00",
        "start_time": "N/A" if pending else "2027-01-15T07:01:00",
        "work_dir": work_dir,
        "stdout_raw": f"{work_dir}/slurm-%j.out" if not array else f"{work_dir}/arr-%A_%a.out",
        "stderr_raw": f"{work_dir}/slurm-%j.out" if not array else f"{work_dir}/arr-%A_%a.out",
    }
    return "".join(values[attr] + SEP for _, attr in SQUEUE_FIELDS)


def sacct_line(
    job_id: int,
    *,
    name: str = "train",
    state: str = "FAILED",
    partition: str = "gpu",
    account: str = "proj1",
    nodes: int = 1,
    nodelist: str = "gpu01",
    elapsed: str = "00:12:34",
    limit: str = "01:00:00",
    exit_code: str = "1:0",
    work_dir: str = "/home/root/run",
    user: str = USER,
) -> str:
    """One ``sacct -X -P -n --delimiter=\\x1f -o ...`` line (fields joined by the separator)."""
    values = {
        "JobID": str(job_id),
        "JobName": name,
        "User": user,
        "State": state,
        "Partition": partition,
        "Account": account,
        "NNodes": str(nodes),
        "NodeList": nodelist,
        "Elapsed": elapsed,
        "Timelimit": limit,
        "Submit": "2027-01-15T05:00:00",
        "Start": "2027-01-15T05:01:00",
        "End": "2027-01-15T05:13:34",
        "WorkDir": work_dir,
        "ExitCode": exit_code,
    }
    assert list(values) == list(SACCT_FIELDS)
    return SEP.join(values.values())


def lines(*items: str) -> str:
    return "".join(item + "\n" for item in items)


# --------------------------------------------------------------------------- scenarios (squeue, sacct)

#: Recorded squeue (a held job, two running jobs, array 25 with two running tasks) plus a pending job
#: waiting for resources and a two-node job still configuring.
SAMPLE_SQUEUE = recorded("squeue-22.05-O.txt") + lines(
    squeue_line(31, name="bert-large", state="PENDING", reason="Resources", nodes=4, limit="2-00:00:00"),
    squeue_line(
        30, name="eval", state="CONFIGURING", nodes=2, tasks=8, nodelist="gpu[01-02]", tres="gres:gpu:a100:4"
    ),
)
#: Ended jobs that squeue forgot: one failed (exit 1), one cancelled, one completed.
SAMPLE_SACCT = lines(
    sacct_line(21, name="resnet50", state="FAILED", exit_code="1:0"),
    sacct_line(20, name="sweep-lr", state="CANCELLED by 0", exit_code="0:15", elapsed="00:03:10"),
    sacct_line(19, name="prep-data", state="COMPLETED", exit_code="0:0", nodelist="gpu02"),
)
#: Partitions debug (recorded busy cluster), gpu and long (recorded A100/V100 cluster, without its one
#: deliberately truncated line).
SAMPLE_SINFO = recorded("sinfo-22.05-busy.txt") + lines(
    *(line for line in recorded("sinfo-a100-mixed.txt").splitlines() if line.count(SEP) >= 9)
)

#: Array job 300: tasks 0–2 running, 3–4 completed, 5–9 pending; plus one plain running job.
ARRAY_SQUEUE = lines(
    *(
        squeue_line(301 + t, name="sweep", array=(300, t), nodelist=f"gpu0{t + 1}", used=f"0:{10 + t}:00")
        for t in range(3)
    ),
    *(
        squeue_line(
            304 + t, name="sweep", state="COMPLETED", array=(300, 3 + t), nodelist="gpu04", used="0:05:00"
        )
        for t in range(2)
    ),
    *(
        squeue_line(300, name="sweep", state="PENDING", reason="JobArrayTaskLimit", array=(300, t))
        for t in range(5, 10)
    ),
    squeue_line(299, name="baseline", nodelist="gpu05", used="0:40:00"),
)

MANY = 200


def many_squeue(count: int = MANY, *, bump: int | None = None, first_pending: int | None = None) -> str:
    """``count`` jobs (ids 1000…): every third pending, every seventh completed, the rest running.

    ``bump``: that job's time used advances one minute (one cell changes). ``first_pending``: that
    running job is listed as pending instead (the rows reorder)."""
    out = []
    for i in range(count):
        job_id = 1000 + i
        state = "PENDING" if i % 3 == 0 else "COMPLETED" if i % 7 == 0 else "RUNNING"
        if first_pending == job_id:
            state = "PENDING"
        first, nodes = i % 50, 1 + i % 4
        hosts = f"gpu{first:03d}" if nodes == 1 else f"gpu[{first:03d}-{first + nodes - 1:03d}]"
        minutes = i % 60 + (1 if bump == job_id else 0)
        out.append(
            squeue_line(
                job_id,
                name=f"exp-{i:03d}",
                state=state,
                reason="Priority" if state == "PENDING" else "None",
                nodes=nodes,
                nodelist=hosts if state != "PENDING" else "",
                tres="gres:gpu:4" if i % 5 else "gres:gpu:a100:8",
                used=f"{minutes}:00" if state != "PENDING" else "0:00",
                partition="gpu" if i % 2 else "long",
            )
        )
    return lines(*out)


CONFIG_OUT = f"ClusterName             = {CLUSTER}\nSLURM_VERSION           = {VERSION}\n"


# --------------------------------------------------------------------------- the fake runner


class FakeSlurm:
    """A runner ``(argv, timeout) -> CompletedProcess`` answering from the attributes below.

    ``squeue``/``sacct``/``sinfo``: stdout text, or an exception to raise, or a CompletedProcess.
    ``missing``: every command raises SlurmNotFound (as run_slurm does when Slurm is not installed)."""

    def __init__(
        self,
        squeue: object = "",
        *,
        sacct: object = "",
        sinfo: object = SAMPLE_SINFO,
        missing: bool = False,
    ) -> None:
        self.squeue = squeue
        self.sacct = sacct
        self.sinfo = sinfo
        self.missing = missing
        self.calls: list[list[str]] = []
        self._lock = threading.Lock()

    def count(self, command: str) -> int:
        with self._lock:
            return sum(1 for argv in self.calls if argv[0] == command)

    def __call__(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        with self._lock:
            self.calls.append(list(argv))
        if self.missing:
            from gputui.slurm.commands import SlurmNotFound

            raise SlurmNotFound(f"Slurm command {argv[0]!r} not found (is Slurm installed and on PATH?)")
        command = argv[0]
        if command == "scontrol" and argv[1:3] == ["show", "config"]:
            return self._done(argv, CONFIG_OUT)
        if command == "scontrol" and argv[1:3] == ["show", "job"]:
            return self._scontrol_job(argv, argv[-1])
        if command in ("squeue", "sacct", "sinfo"):
            return self._done(argv, getattr(self, command))
        return self._done(argv, "", returncode=1, stderr=f"{command}: not faked")

    def _scontrol_job(self, argv: list[str], job_id: str) -> subprocess.CompletedProcess:
        line = recorded("scontrol-22.05-job-gres.txt").replace("JobId=3 ", "JobId=22 ", 1)
        if job_id == "-d":  # every job at once (many started together): only 22's GPUs are known
            return self._done(argv, line)
        if job_id == "22":  # recorded: node[1-2], GPUs 0-1 on each
            return self._done(argv, line)
        return self._done(argv, "", returncode=1, stderr="slurm_load_jobs error: Invalid job id specified")

    @staticmethod
    def _done(argv: list[str], answer: object, returncode: int = 0, stderr: str = ""):
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, subprocess.CompletedProcess):
            return answer
        return subprocess.CompletedProcess(argv, returncode, str(answer), stderr)


def sacct_disabled() -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess(["sacct"], 1, "", recorded("sacct-22.05-disabled.txt"))


def squeue_failed(message: str = "slurm_load_jobs error: Socket timed out on send/recv operation"):
    return subprocess.CompletedProcess(["squeue"], 1, "", message + "\n")


# --------------------------------------------------------------------------- the environment


def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """For a fixture (``yield from``): tmp_path as the working directory, state and config there
    (relative paths, so messages that name them do not depend on pytest's folder), local time = UTC,
    the wall clock of the poller and the jobs screen pinned (:data:`CLOCK`)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPUTUI_STATE_DIR", "state")
    monkeypatch.setenv("GPUTUI_CONFIG", "config.toml")
    for name in ("GPUTUI_REFRESH", "GPUTUI_CLUSTER", "GPUTUI_JOBS_LISTED_FILE", "GPUTUI_FIRST_FRAME_FILE"):
        monkeypatch.delenv(name, raising=False)
    pin_clock(monkeypatch)
    IdleSource.made.clear()
    old_tz = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    try:
        yield tmp_path
    finally:
        if old_tz is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old_tz
        time.tzset()


class PinnedClock:
    """Stands in for the ``time`` module of the poller and the jobs screen: ``time()`` is :attr:`now`
    (tests move it on), everything else (monotonic, strftime, localtime, sleep) is the real module's."""

    def __init__(self, now: float = T_ANSWER) -> None:
        self.now = now

    def time(self) -> float:
        return self.now

    def __getattr__(self, name: str):
        return getattr(time, name)


CLOCK = PinnedClock()


def pin_clock(monkeypatch: pytest.MonkeyPatch, at: float = T_ANSWER) -> PinnedClock:
    """The wall clock of the poller (the squeue answer's taken_at, the header's HH:MM:SS) and of the
    jobs screen (is the list stale on return from a dashboard?) reads ``at`` until a test moves it."""
    CLOCK.now = at
    monkeypatch.setattr(poller_module, "time", CLOCK)
    monkeypatch.setattr(jobs_module, "time", CLOCK)
    return CLOCK


# --------------------------------------------------------------------------- driving the app


def make_app(
    fake: FakeSlurm,
    config: Config | None = None,
    *,
    warning: str | None = None,
    refresh_s: float | None = None,
) -> GputuiApp:
    """The home app (``gputui``) on a poller whose runner is ``fake``."""
    config = config or Config()
    if refresh_s is not None:
        config = Config(jobs=JobsSettings(refresh_s=refresh_s), clusters=config.clusters, path=config.path)
    poller = SlurmPoller(run=fake, user=USER, ended_hours=config.jobs.ended_hours)
    return GputuiApp(None, config, poller=poller, warning=warning)


def jobs_screen(app: GputuiApp) -> JobsScreen:
    return next(s for s in app.screen_stack if isinstance(s, JobsScreen))


async def wait_for(
    pilot: Pilot, condition: Callable[[], object], what: str = "condition", timeout: float = 10.0
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


async def wait_polled(pilot: Pilot, squeue_calls: int = 1, timeout: float = 10.0) -> JobsScreen:
    """Wait until the screen has drawn the answer of (at least) ``squeue_calls`` polls (or, without
    Slurm, its first poll). The screen's start is two squeue calls (a quick squeue-only poll, then the
    full one), counted here as one poll."""
    await wait_for(
        pilot, lambda: any(isinstance(s, JobsScreen) for s in pilot.app.screen_stack), "the screen"
    )
    screen = jobs_screen(pilot.app)
    fake: FakeSlurm = screen.poller.run  # type: ignore[assignment]

    def done() -> bool:
        enough = fake.missing or fake.count("squeue") >= squeue_calls + 1
        return enough and screen.snapshot is not None and not screen._polling

    await wait_for(pilot, done, "the poll", timeout)
    await pilot.pause()
    return screen


class IdleSource(RecordSource):
    """A dashboard source that stands in for AttachSource (job id, options) or LocalRunSource (spec,
    simulated=, title=): it shows a job header and waits to be stopped (no srun, no probe, no ranks).
    Every instance is kept in :attr:`made`."""

    kind = "attach"
    made: ClassVar[list[IdleSource]] = []

    def __init__(self, target: object = "", *args: object, **kwargs: object) -> None:
        super().__init__()
        self.target = target
        self.args = args
        self.kwargs = kwargs
        IdleSource.made.append(self)

    def job_info(self) -> JobInfo:
        if isinstance(self.target, str):
            return JobInfo(kind="attach", title=f"job {self.target}", job_id=self.target, state="ATTACHING")
        return JobInfo(kind="local", title=str(self.kwargs.get("title", "local run")), state="STARTING")

    def run(self, feed: Feed) -> None:
        self.stopping.wait(30)
