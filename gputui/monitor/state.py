"""Everything the dashboard shows about one job, built from the record stream and the job's output.

:class:`DashboardState` is fed by a record source (in the UI: drained from a
:class:`~gputui.sources.base.Feed` on the UI thread) and read by the screen. It holds no widget and
does no I/O, so ``gputui demo --headless``, the benchmarks and the tests use it as the screen does.
"""

from __future__ import annotations

import math
import time as _time
from collections import deque
from dataclasses import dataclass, field

from gputui.analysis.run import RunAnalysis
from gputui.config import AlertThresholds, VerdictSettings
from gputui.logs.outcome import FAILURES, merge_outcome
from gputui.monitor.alerts import Alerts
from gputui.monitor.gpus import GpuBoard
from gputui.monitor.logtext import LogText
from gputui.monitor.training import TrainingState
from gputui.monitor.verdicts import Finding, VerdictEngine
from gputui.stream.records import Record

#: Slurm's final job states as outcomes (used where the log itself has no evidence).
SLURM_OUTCOME = {
    "COMPLETED": "completed",
    "CANCELLED": "cancelled",
    "TIMEOUT": "time_limit",
    "OUT_OF_MEMORY": "oom",
    "FAILED": "crashed",
    "NODE_FAIL": "crashed",
    "PREEMPTED": "cancelled",
}
ENDED_STATES = frozenset(
    {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED", "FINISHED"}
)


@dataclass
class JobInfo:
    """What the header says about the job (the source fills it in; records update ``state``)."""

    kind: str  # attach | local | replay
    title: str  # "job 4711", "demo", "replay run.jsonl"
    job_id: str | None = None
    name: str = ""
    state: str = "STARTING"
    started: float | None = None  # Unix time the job started running
    ended: float | None = None
    time_limit_s: float | None = None
    nodes: list[str] = field(default_factory=list)
    gpus_expected: int | None = None
    simulated: bool = False  # the source knows its GPUs are simulated

    @property
    def running(self) -> bool:
        return self.state in ("RUNNING", "COMPLETING")


@dataclass
class Note:
    time: float
    level: str  # info | warning | error
    message: str


VERDICT_EVERY_S = 5.0  # the verdict is judged again at most this often while nothing new arrives


class DashboardState:
    def __init__(
        self, job: JobInfo, thresholds: AlertThresholds | None = None, verdict: VerdictSettings | None = None
    ) -> None:
        self.job = job
        self.thresholds = thresholds or AlertThresholds()
        # why the job is slow or stuck: fed every record and the output's growth (docs/verdicts.md)
        self.verdicts = VerdictEngine(self.thresholds, verdict)
        self._verdict: tuple[tuple, list[Finding]] | None = None  # (when judged, what was found)
        self._verdict_every = VERDICT_EVERY_S
        self.board = GpuBoard(idle_util_pct=self.thresholds.idle_util_pct)
        self.training = TrainingState()
        self.training.recorded = job.kind == "replay"  # no epoch past the last one the files state
        # the report view (R): the analysis module of `gputui report`, sharing the dashboard's epoch table
        self.analysis = RunAnalysis(
            job.title, table=self.training.epochs, idle_pct=self.thresholds.idle_util_pct
        )
        self.alerts = Alerts(self.thresholds)
        self.logs: dict[str, LogText] = {}
        self.notes: deque[Note] = deque(maxlen=300)
        self.status: Note | None = None  # the latest one-line error or notice of the source itself
        self.outcome: Record | None = None
        self.records = 0
        self.skipped = 0  # records the state could not use (bad files are counted here too)
        self.version = 0  # bumps on every change: the screen redraws only when it moved
        self.last_time = 0.0  # newest record time
        self.clock: float | None = None  # a replay's cursor; None: the wall clock
        self.cursor: dict | None = None  # a replay's position (start, end, at, playing, speed, live)
        self.catch_up: tuple[int, int] | None = None  # (bytes read, size) while a log's history is read
        self.clockless = False  # a replay of logs that print no times or durations: its times are an order

    # ------------------------------------------------------------------ input

    def final_outcome(self) -> tuple[str, str] | None:
        """(outcome, evidence) to show: the log's verdict, or Slurm's final job state where the log has
        no evidence (``unknown``) and gputui watched the job through Slurm."""
        log = (
            (str(self.outcome.get("outcome")), str(self.outcome.get("evidence") or ""))
            if self.outcome
            else None
        )
        slurm = SLURM_OUTCOME.get(self.job.state) if self.job.kind == "attach" else None
        if slurm is not None and (log is None or log[0] == "unknown"):
            return slurm, f"Slurm: job {self.job.job_id or ''} ended {self.job.state}".replace("  ", " ")
        return log

    def ingest(self, records: list[Record]) -> None:
        board, training, analysis = self.board, self.training, self.analysis
        for rec in records:
            analysis.add(rec)
            self.verdicts.add(rec)
            kind = rec.kind
            if kind == "gpu":
                board.add_gpu(rec)
            elif kind == "metric":
                training.add_metric(rec)
                if rec.get("name") in ("loss", "val_loss") and not _finite(rec.get("value")):
                    self._nonfinite(rec)
            elif kind == "host":
                board.add_host(rec)
            elif kind == "event":
                self._event(rec)
            if rec.time > self.last_time:
                self.last_time = rec.time
        self.records += len(records)
        if records:
            self.version += 1

    def text(self, path: str, data: bytes, now: float | None = None) -> None:
        log = self.logs.get(path)
        if log is None:
            log = self.logs[path] = LogText(path)
        when = _time.time() if now is None else now
        log.feed(data, when)
        if data:
            self.verdicts.output_grew(when)
        self.version += 1

    def text_reset(self, path: str, why: str) -> None:
        if path in self.logs:
            self.logs[path].reset(why)
            self.version += 1

    def say(self, level: str, message: str, when: float | None = None) -> None:
        """A line from the source itself (an error, a notice): shown in one line, kept in the notes."""
        note = Note(_time.time() if when is None else when, level, message)
        self.notes.append(note)
        self.status = note
        self.version += 1

    def forget_metrics(self) -> None:
        """The logs are about to be read again from the start (a pattern was taught): the training state
        and the report's metric side start empty; the GPUs, alerts, notes and log text stay."""
        old, training = self.analysis, self.training
        self.training = TrainingState()
        self.training.ended, self.training.recorded = training.ended, training.recorded
        self.analysis = RunAnalysis(
            self.job.title, table=self.training.epochs, idle_pct=self.thresholds.idle_util_pct
        )
        self.analysis.gpus, self.analysis.world_size = old.gpus, old.world_size
        self.analysis.outcome = old.outcome
        self.verdicts.forget_metrics()
        self.version += 1

    def set_state(self, state: str, when: float | None = None) -> None:
        self.job.state = state
        self.training.ended = self.training.ended or state in ENDED_STATES
        if state in ENDED_STATES and self.job.ended is None:
            self.job.ended = _time.time() if when is None else when
        self.version += 1

    # ------------------------------------------------------------------ events

    def _event(self, rec: Record) -> None:
        name = rec.get("event")
        message = str(rec.get("message", ""))
        self.training.add_event(rec)  # train_started, train_finished, outcome
        if name == "job_state":
            state = rec.get("state")
            if isinstance(state, str):
                self.set_state(state, rec.time)
        elif name == "node_lost":
            host = str(rec.get("host", "?"))
            self.board.lose_node(host, message, rec.time)
            self.alerts.raise_(
                f"node_lost:{host}", "node_lost", "error", f"node {host} lost", message, rec.time
            )
        elif name == "probe_started":
            host = rec.get("host")
            if isinstance(host, str):
                self.board.revive_node(host)
                self.alerts.clear(f"node_lost:{host}")
        elif name == "outcome":
            self.outcome = merge_outcome(self.outcome, rec)
            outcome = rec.get("outcome")
            if outcome in FAILURES:
                self.alerts.raise_(f"outcome:{outcome}", str(outcome), "error", message, message, rec.time)
        elif name in ("error", "warning"):
            if rec.get("reset"):
                self.training.epochs.add(rec)
            signal = rec.get("signal")
            kind = str(signal or name)
            key = f"{kind}:{rec.get('host') or ''}:{rec.get('rank') if signal else message}"
            self.alerts.raise_(
                key,
                kind,
                "error" if name == "error" else "warning",
                message,
                str(rec.get("evidence") or message),
                rec.time,
            )
        level = "error" if name in ("error", "node_lost") else "warning" if name == "warning" else "info"
        self.notes.append(Note(rec.time, level, f"[{name}] {message}"))

    def _nonfinite(self, rec: Record) -> None:
        what = rec.get("nonfinite") or "nan"
        self.alerts.raise_(
            f"nonfinite:{rec.get('name')}",
            "loss_nonfinite",
            "error",
            f"{rec.get('name')} is {what} (step {rec.get('step', '?')}, epoch {rec.get('epoch', '?')})",
            f"{rec.get('name')}={what} from {rec.get('source', 'the stream')}",
            rec.time,
        )

    # ------------------------------------------------------------------ derived

    def check(self, now: float | None = None) -> None:
        """Re-evaluate condition alerts (the screen calls this on its refresh timer)."""
        when = self.now() if now is None else now
        before = len(self.alerts.history), len(self.alerts.active)
        self.alerts.check(self.board, list(self.logs.values()), when, self.job.running)
        if (len(self.alerts.history), len(self.alerts.active)) != before:
            self.version += 1

    def use_verdict_settings(self, settings: VerdictSettings) -> None:
        """The ``[verdict]`` thresholds of the settings (before records arrive: the windows start anew)."""
        if self.verdicts.last_time is None:
            self.verdicts = VerdictEngine(self.thresholds, settings)
        else:
            self.verdicts.settings = settings
        self._verdict = None

    def verdict(self) -> list[Finding]:
        """Why the job is slow or stuck now: the engine's findings, judged again every
        :data:`VERDICT_EVERY_S` seconds of the clock (or 20 times as long as judging took, on a large
        job), when the job starts or stops running, and when a log's history has been read (no hang is
        judged while it is read: its metrics are old; a replay is judged as running)."""
        replay, reading = self.job.kind == "replay", self.catch_up is not None
        now = (self.verdicts.last_time or self.now()) if replay and self.clock is None else self.now()
        # a replay's job ran at the cursor while its records go on (as `gputui report` judges a file)
        running = (self.job.running or replay) and not reading
        key = (int(now // self._verdict_every), running, self.verdicts.last_time is None)
        if self._verdict is None or self._verdict[0] != key:
            started = _time.perf_counter()
            self._verdict = (key, self.verdicts.findings(now, running))
            self._verdict_every = max(VERDICT_EVERY_S, 20 * (_time.perf_counter() - started))
        return self._verdict[1]

    def now(self) -> float:
        """Live sources: the wall clock; a replay sets ``clock`` to its cursor."""
        return self.clock if self.clock is not None else _time.time()

    def elapsed_s(self) -> float | None:
        """Since the job started; None when not known (a replayed log without times or durations)."""
        if self.job.started is None or self.clockless:
            return None
        end = self.job.ended or self.now()
        return max(0.0, end - self.job.started)

    def eta_beyond_limit(self) -> bool:
        """The training's ETA ends after the job's time limit."""
        eta, elapsed, limit = self.training.eta_s(), self.elapsed_s(), self.job.time_limit_s
        return eta is not None and elapsed is not None and limit is not None and elapsed + eta > limit


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)
