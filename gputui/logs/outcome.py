"""How a job ended, from its log: ``outcome`` events with the evidence line; the last run decides.

Signals (each gives an ``error`` event as it is seen, with ``signal``, ``evidence`` and ``line``):

- ``time_limit``: ``*** JOB 42 ON node CANCELLED AT … DUE TO TIME LIMIT ***`` (anywhere in a frame:
  slurmstepd often writes it after an unfinished progress bar);
- ``cancelled``: the same without the time-limit suffix (``scancel``, ``DUE TO PREEMPTION``,
  ``DUE TO JOB REQUEUE``): a requeue ends the run, and what follows it is the next run;
- ``oom``: ``CUDA out of memory``, ``HIP out of memory``, ``OutOfMemoryError``, ``RESOURCE_EXHAUSTED``
  … ``OOM``, Slurm's ``oom-kill event`` / ``oom_kill event`` / ``task 0: Out Of Memory`` / ``Exceeded job
  memory limit``; on a ``WARNING`` line it was survived (Ultralytics falls back to the CPU, fairseq
  recovers): a ``warning`` event, no signal;
- ``nccl_error``: NCCL/RCCL errors, ``ProcessGroupNCCL`` watchdog timeouts, aborted communicators;
- ``interrupted``: ``KeyboardInterrupt``, ``received SIGINT``;
- ``crashed``: the process died without a Python traceback: ROCm ``Memory access fault by GPU``, CUDA
  ``an illegal memory access was encountered`` / ``device-side assert triggered``, ``Segmentation fault``,
  ``core dumped``; a shell's ``Killed`` (SIGKILL: ``reason`` says the OOM killer is likely, and a Slurm
  oom-kill line after it makes it ``oom``);
- ``crashed_traceback``: a Python traceback whose exception is none of the above;
- ``early_stopped`` (not a failure): Keras ``Epoch 44: early stopping``, Lightning
  ``Signaling Trainer to stop``, ``Early stopping``.

Runs: several launches appended to one file are runs (:mod:`gputui.logs.runs`: a start banner, a counter
back at its start, an epoch lower than the previous one as in the epoch table, a requeue). Once a run
has ended (a failure, a requeue, an end message), the next run begins where training output follows a
start marker; the ended run's signals stay as events and are listed in the outcome's ``earlier_runs``.

:meth:`OutcomeTracker.decide` gives the final ``outcome`` event from the last run: its first failure
signal (an OOM on one rank wins over the watchdog timeout it causes on another; the later ones are listed
in ``secondary``); a traceback followed by further epochs, or printed before any training output that
then follows (a failed start), was not fatal; else ``early_stopped``; else ``completed`` on an end
message (:mod:`gputui.logs.end_messages`: a framework's anywhere after the last epoch line, a script's
among the last frames); else ``truncated`` when the log shows planned work not reached (an unfinished bar
or ``[i/N]`` line, ``epoch N/M`` or ``iteration N/M`` with N < M), ``completed`` when its latest
``epoch N/M`` has N = M, or its latest ``iter N/N`` is followed by a summary line, ``unknown`` otherwise.

:func:`gate` finds, on the raw bytes of a whole block, where a signal, a traceback, an end message or a
start marker may be (scans that each skip at memchr speed to a literal); other lines skip :meth:`observe`.
"""

from __future__ import annotations

import re
from typing import Any

from gputui.logs.counters import Counters
from gputui.logs.end_messages import FINISH, FINISH_KEYS
from gputui.logs.epochs import restarts
from gputui.logs.outcome_patterns import (
    CRASH,
    EARLY,
    EXCEPTION,
    INTERRUPT,
    KILLED,
    KILLED_REASON,
    NCCL,
    OOM,
    PATIENCE,
    PLANNED,
    SLURM,
    TERMINATED,
    TRACEBACK,
    WARNING_LEVEL,
    planned_work,
    printed_epoch,
    says_finished,
    summary_after,
)
from gputui.logs.runs import GATE as RUN_GATE
from gputui.logs.runs import TRAINING_KEYS, start_marker
from gputui.stream.records import Record, event

RECENT_FRAMES = 64
FAILURES = ("time_limit", "cancelled", "oom", "nccl_error", "interrupted", "crashed", "crashed_traceback")
_KEYS = (
    "CANCELLED",
    "emory",
    "OOM",
    "oom-kill",
    "oom_kill",
    "Killed",
    "NCCL",
    "CCL",
    "SIGINT",
    "Interrupt",
    "arly stopping",
    "Trainer to stop",
    "Segmentation fault",
    "SIGSEGV",
    "core dumped",
    "device-side assert",
    "hipError",
    "signal: 15",
    "death signal",
    "SIGTERM",
    "Terminated",
    "EarlyStopping counter",
    "xited with",
    "non-zero exit status",
    "tart inference",
    "tarting inference",
    "Aborted",
    "eyboard interrupt",
    "Early Stop",
    "not improving",
    "quitting training",
    "arly stop ",
    ": error: ",
    "Logging error",
)
MAX_TRACEBACK_FRAMES = 400
_KEY_RE = re.compile("|".join(re.escape(k) for k in _KEYS))
# The gate: where a key or a traceback header may be, on raw bytes, as a few scans that each start with
# one literal byte (the regex engine then skips at memchr speed; one alternation of all the keys is
# several times slower). Every match of _KEY_RE or TRACEBACK contains a match of one of these.
_GATE = tuple(
    re.compile(p)
    for p in (
        rb"C(?:ANCELLED|CL)",  # CANCELLED, NCCL, RCCL
        rb"OOM",
        rb"I(?:NT(?<=SIGINT)|nterrupt)",
        rb"k(?:(?<=Traceback) \(most recent call last\):|ill(?<=oom-kill)|ill(?<=oom_kill))",
        rb"Killed",
        rb"p(?:(?<=Trainer to stop)|(?<=arly stop)ping)",
        rb"y(?<=emory)",
        rb"Segmentation fault",
        rb"SIGSEGV",
        rb"core dumped",
        rb"device-side assert",
        rb"hipError",
        rb"SIGTERM",
        rb"signal: 15",
        rb"death signal",
        rb"Terminated",
        rb"EarlyStopping counter",
        rb"xited with",
        rb"non-zero exit status",
        rb"tart(?:ing)? inference",
        rb"Aborted",
        rb"eyboard [Ii]nterrupt",
        rb"Early Stop",
        rb"not improving",
        rb"quitting training",
        rb"arly stop ",
        rb": error: ",
        rb"Logging error",
    )
)
MAX_EARLIER_RUNS = 20
LOGGING_ERROR = "--- Logging error ---"  # Python's logging.Handler.handleError, before its traceback
SURVIVED_FRAMES = 10  # frames of training after a traceback that show it was survived


def _around(core: bytes, keys: tuple[bytes, ...]) -> re.Pattern[bytes]:
    """One scan for several keys that share ``core``: the literal, then each key's text around it."""
    alternatives = []
    for key in keys:
        end = key.index(core) + len(core)
        alternatives.append(b"(?<=" + re.escape(key[:end]) + b")" + re.escape(key[end:]))
    return re.compile(re.escape(core) + b"(?:" + b"|".join(alternatives) + b")")


# The end messages and training banners that contain "raining" share one scan; the others are finds.
_RAINING = _around(b"raining", tuple(k for k in (*FINISH_KEYS, *TRAINING_KEYS) if b"raining" in k))
_FINDS = tuple(k for k in FINISH_KEYS if b"raining" not in k)
# every end message contains its key: a frame without one skips FINISH's search (~15 µs on a long line)
_FINISH_TEXT = tuple(k.decode() for k in FINISH_KEYS)


#: End messages that only time the run: printed on the way out too (detectron2's after_train hooks).
TIMING = re.compile(r"\b(?:overall training speed|total (?:training |train |run )?time)\b", re.IGNORECASE)
ANNOUNCED = re.compile(r"\bStart(?:ing)? (?:inference|evaluation)\b")


def _patience_ran_out(text: str) -> bool:
    """``EarlyStopping counter: 9 out of 8``: the count reached its bound."""
    m = PATIENCE.search(text)
    return m is not None and int(m.group(1)) >= int(m.group(2))


def merge_outcome(current: Record | None, new: Record) -> Record:
    """The run's outcome when several outputs (one per rank, per node) each end with one: a failure
    first (the earliest one kept: the root cause), then completed or early stopped, then truncated, then
    unknown -- rank 0 alone says ``train_finished``, so the other ranks' logs end ``unknown``."""
    if current is None:
        return new
    return new if _weight(new) > _weight(current) else current


def _weight(record: Record) -> int:
    outcome = record.get("outcome")
    return 3 if outcome in FAILURES else {"completed": 2, "early_stopped": 2, "truncated": 1}.get(outcome, 0)


def gate(block: bytes) -> list[int]:
    """Sorted offsets in ``block`` where an outcome signal or a traceback may start (a superset: the
    frames of the lines they fall in are checked by :meth:`OutcomeTracker.observe`, the others skip)."""
    hits: list[int] = []
    for pattern in (*_GATE, *RUN_GATE, _RAINING):
        for m in pattern.finditer(block):
            hits.append(m.start())
    for key in _FINDS:
        at = block.find(key)
        while at >= 0:
            hits.append(at)
            at = block.find(key, at + 1)
    hits.sort()
    return hits


class OutcomeTracker:
    """Feed it every finished frame; ask :meth:`decide` at the end."""

    def __init__(self) -> None:
        # What decide() needs, in order: the first signal of each kind in the current run, and the first
        # traceback since the latest epoch (earlier ones were survived). Bounded, however long the log.
        self.signals: list[dict[str, Any]] = []
        self._kinds: set[str] = set()
        self._open_tb: dict[str, Any] | None = None
        self.tb: dict[str, Any] | None = None  # the traceback being read
        self.logging_error = -2  # the line of logging's latest "--- Logging error ---"
        # set by the parser on every frame with records: training output since the latest start marker
        # that followed the end of a run (see _start); _trained_before: any training output before it
        self.saw_training = False
        self._trained_before = False
        self.unfinished_progress = False
        self.last_epoch_line: tuple[int, str] | None = None
        self.finished: tuple[int, str] | None = None  # the latest framework end message (FINISH)
        self._epoch: float | None = None  # the 0-based epoch of the last epoch line
        self._epoch_start: int | None = None  # the line where that epoch was first seen
        self._counter: tuple[str, float] | None = None  # the last epoch number (index or printed)
        self.earlier: list[dict[str, Any]] = []  # the ended runs' signals: signal, line, evidence
        self._pending: tuple[int, str] | None = None  # a start marker after the run ended: line, kind
        self.counters = Counters()  # where the run's step and epoch counters got, and what was planned
        self.announced: tuple[int, str] | None = None  # the latest "Start training" (or inference) line
        self.record_line = -1  # the latest line that gave records (set by the parser)

    def _trained(self) -> bool:
        return self._trained_before or self.saw_training

    def _ended(self) -> str | None:
        """How the current run ended: ``requeue``, ``failure``, ``finish`` (an end message, early
        stopping), or None while it runs."""
        kinds = self._kinds | ({"crashed_traceback"} if self._open_tb is not None else set())
        if kinds & {"cancelled", "time_limit"}:
            return "requeue"
        if kinds & set(FAILURES):
            return "failure"
        return "finish" if self.finished is not None or "early_stopped" in kinds else None

    def _start(self, line: int, kind: str) -> None:
        """A start marker (:mod:`gputui.logs.runs`). After a run that ended, the training output that
        follows it begins a new run (see :meth:`_confirm`); after an end message only a ``training``
        marker counts (a test phase after ``fit()`` starts its processes and counters again)."""
        ended = self._ended()
        if self._pending is not None or ended is None or (ended == "finish" and kind != "training"):
            return
        self._pending = (line, kind)
        self._trained_before = self._trained()
        self.saw_training = False

    def _confirm(self) -> None:
        if self._pending is not None and self.saw_training:
            self._new_run()

    def _new_run(self) -> None:
        """The current run is over: its failures stay as events and in ``earlier``; the next one starts."""
        for info in self.signals:
            self.earlier.append({key: info[key] for key in ("signal", "line", "evidence") if key in info})
        del self.earlier[:-MAX_EARLIER_RUNS]
        self.signals, self._kinds, self._open_tb = [], set(), None
        self.finished = self._pending = None
        self.counters = Counters()

    def _drop_failed_start(self) -> None:
        """A traceback before any training output, then training: a failed start (an earlier job's
        output in the same file, an optional import that failed) that was survived."""
        open_tb = self._open_tb
        if open_tb is not None and open_tb.get("before_training") and self.saw_training:
            self.signals.remove(open_tb)
            self._open_tb = None

    def observe(self, text: str, line: int, rank: int | None, now: float) -> list[Record]:
        out: list[Record] = []
        self._confirm()
        if self.tb is not None:
            out.extend(self._traceback_line(text, line, rank, now))
        if TRACEBACK in text:
            logged = self.logging_error == line - 1  # logging's "--- Logging error ---": it goes on
            self.tb = {"line": line, "text": text, "rank": rank, "frames": 0, "logging": logged}
            return out
        if LOGGING_ERROR in text:
            self.logging_error = line
            return out
        if any(key in text for key in _FINISH_TEXT) and FINISH.search(text) is not None:
            self.finished = (line, text.strip()[:500])
        if _KEY_RE.search(text) is None:
            kind = start_marker(text)
            if kind is not None:
                self._start(line, kind)
                if kind == "training":
                    self.announced = (line, text.strip()[:500])
            return out
        signal = None
        m = SLURM.search(text)
        oom = OOM.search(text) if m is None else None
        if m is not None:
            signal = "time_limit" if "TIME LIMIT" in m.group(1) else "cancelled"
        elif oom is not None:
            if WARNING_LEVEL.search(text, 0, oom.start()) is not None:
                out.append(self._warning(text, line, rank, now))  # reported and survived
                return out
            signal = "oom"
        elif NCCL.search(text):
            signal = "nccl_error"
        elif INTERRUPT.search(text):
            signal = "interrupted"
        elif TERMINATED.search(text):
            signal = "cancelled"
        elif CRASH.search(text):
            signal = "crashed"
        elif KILLED.search(text):
            out.append(self._signal("crashed", text, line, rank, now, reason=KILLED_REASON))
        elif EARLY.search(text) or _patience_ran_out(text):
            signal = "early_stopped"
        elif ANNOUNCED.search(text):
            self.announced = (line, text.strip()[:500])
        if signal is not None:
            out.append(self._signal(signal, text, line, rank, now))
        return out

    def _traceback_line(self, text: str, line: int, rank: int | None, now: float) -> list[Record]:
        tb = self.tb
        assert tb is not None
        tb["frames"] += 1
        if text[:1].isspace() and tb["frames"] < MAX_TRACEBACK_FRAMES:
            return []
        stripped = text.strip()
        if EXCEPTION.match(stripped) is None and tb["frames"] < MAX_TRACEBACK_FRAMES:
            return []  # another rank's output between the traceback's lines
        self.tb = None
        if tb["logging"]:
            return []  # a message logging could not format: reported, and the program went on
        if (
            OOM.search(stripped)
            or NCCL.search(stripped)
            or INTERRUPT.search(stripped)
            or CRASH.search(stripped)
        ):
            return []  # observe() reports it from the same frame with its own signal
        return [self._signal("crashed_traceback", stripped, line, rank, now, traceback_line=tb["line"])]

    @staticmethod
    def _warning(text: str, line: int, rank: int | None, now: float) -> Record:
        evidence = text.strip()[:500]
        detail = {"evidence": evidence, "line": line} | ({"rank": rank} if rank is not None else {})
        return event("warning", message=f"warning: {evidence[:200]}", time=now, **detail)

    def _signal(
        self, signal: str, text: str, line: int, rank: int | None, now: float, **extra: Any
    ) -> Record:
        info = {"signal": signal, "evidence": text.strip()[:500], "line": line, "rank": rank, **extra}
        if signal == "crashed_traceback":
            self._drop_failed_start()
            if not self.saw_training:
                info["before_training"] = True
            if self._open_tb is None:
                self._open_tb = info
                self.signals.append(info)
        elif signal not in self._kinds:
            self._kinds.add(signal)
            self.signals.append(info)
        level = "warning" if signal == "early_stopped" else "error"
        detail = {k: v for k, v in info.items() if k not in ("signal", "before_training") and v is not None}
        return event(level, message=f"{signal}: {info['evidence'][:200]}", time=now, signal=signal, **detail)

    def progress(self, line: int, text: str, fields: dict[str, Any], extra: dict[str, Any]) -> None:
        """A frame's last metric record: where its counters got (the parser calls it per frame). Training
        that goes on after a traceback shows it did not end the run: a counter back at or below where it
        was starts a new run (a relaunch; the failure stays in ``earlier_runs``), and
        :data:`SURVIVED_FRAMES` frames of training without that show it was survived."""
        open_tb = self._open_tb
        if self._ended() in ("failure", "requeue") and (
            self.counters.restarts(fields) or self.counters.where is None
        ):
            self._new_run()  # a relaunch after a failure: its counters start again (or start at all)
        elif open_tb is not None and not open_tb.get("before_training"):
            if self.counters.restarts(fields):
                self._new_run()
            else:
                open_tb["after"] = open_tb.get("after", 0) + 1
                if open_tb["after"] >= SURVIVED_FRAMES:
                    self.signals.remove(open_tb)
                    self._open_tb = None
        self.counters.note(line, text, fields, extra)

    def saw_epoch(self, line: int, text: str, epoch: float | None = None) -> None:
        """An epoch line; ``epoch``: its 0-based epoch where known. A completion line counts when it
        comes after the line where the last epoch was first seen: the same epoch drawn again (a progress
        bar's last refresh as it closes, after the end message) is not training after the end. An epoch
        after a requeue, or one lower than the previous after the run ended, begins a new run."""
        self._confirm()
        counter = ("index", epoch) if epoch is not None else printed_epoch(text)
        ended = self._ended()
        if ended == "requeue" or (
            ended is not None
            and counter is not None
            and self._counter is not None
            and counter[0] == self._counter[0]
            and restarts(self._counter[1], counter[1])
        ):
            self._new_run()
        if counter is not None:
            self._counter = counter
        self.last_epoch_line = (line, text)
        if epoch is None or epoch != self._epoch or self._epoch_start is None:
            self._epoch_start = line
        if epoch is not None:
            self._epoch = epoch
        if self._open_tb is not None:  # training went on: that traceback was not fatal
            self.signals.remove(self._open_tb)
            self._open_tb = None

    def decide(
        self, now: float, last_frame: tuple[int, str] | None = None, recent: list[tuple[int, str]] = ()
    ) -> Record:
        """The final ``outcome`` event, of the last run. ``recent``: the log's last frames, where a
        completion line is looked for (``completed`` needs one, or the last planned epoch reached)."""
        if self.tb is not None:  # a traceback cut by the end of the log
            tb = self.tb
            self.tb = None
            self._signal("crashed_traceback", tb["text"], tb["line"], tb["rank"], now)
        self._confirm()
        self._drop_failed_start()
        failures = [s for s in self.signals if s["signal"] in FAILURES]
        if failures:
            root = failures[0]
            if root["signal"] == "crashed_traceback":  # the traceback of an interrupt, a kill, an OOM
                causes = ("interrupted", "cancelled", "time_limit", "oom", "nccl_error")
                root = next((s for s in failures if s["signal"] in causes), root)
            if root.get("reason") == KILLED_REASON:  # the Slurm line after the shell's names the killer
                root = next((s for s in failures if s["signal"] == "oom"), root)
            secondary = [s["signal"] for s in failures if s["signal"] not in (root["signal"], "crashed")]
            return self._outcome(root["signal"], root, now, secondary)
        early = [s for s in self.signals if s["signal"] == "early_stopped"]
        if early:
            return self._outcome("early_stopped", early[0], now, [])
        trained = self._trained()
        where = {"evidence": last_frame[1][:500], "line": last_frame[0]} if last_frame else {}
        after = self._epoch_start if self._epoch_start is not None else -1
        after_counted = max(after, self.counters.counted)  # a tokenizer's "Finished training" before steps
        done = [(n, t) for n, t in recent if n >= after_counted and says_finished(t)]
        if self.finished is not None and self.finished[0] >= after:  # a framework's: an eval may follow
            done = sorted([*done, self.finished])  # the latest line that says so is the evidence
        if done and TIMING.search(done[-1][1]) is not None and trained:
            reached = self.counters.reached()  # a time summary is also printed on the way out
            if reached is not None and reached[0] == "truncated":
                return self._outcome("truncated", reached[1], now, [])
        if done:
            return self._outcome(
                "completed", {"evidence": done[-1][1].strip()[:500], "line": done[-1][0]}, now, []
            )
        if self.unfinished_progress:
            return self._outcome("truncated", where, now, [])
        planned = planned_work([(n, t) for n, t in recent if n >= after])  # the last epoch's, not older
        if planned is not None and trained:
            line, text, m = planned
            info = {"evidence": text.strip()[:500], "line": line}
            if int(m.group(1)) < int(m.group(2)):
                return self._outcome("truncated", info, now, [])  # planned work not reached
            if m.re is PLANNED:
                return self._outcome("completed", info, now, [])  # the last planned epoch was reached
            # the last iteration printed, like a bar at its total: the run may still have died after it,
            # unless it went on to print its summary
            summary = summary_after(recent, line)
            if summary is not None:
                return self._outcome("completed", {**info, "summary": summary}, now, [])
        announced = self.announced
        if announced is not None and self.record_line < announced[0]:
            # the training (or inference) it announced printed nothing after: planned work not done
            return self._outcome("truncated", {"evidence": announced[1], "line": announced[0]}, now, [])
        reached = self.counters.reached() if trained else None
        if reached is not None:
            status, info = reached
            return self._outcome(status, info, now, [])
        if trained:
            if self.last_epoch_line is not None:
                where = {"evidence": self.last_epoch_line[1][:500], "line": self.last_epoch_line[0]}
            where["evidence"] = f"no line says the run finished; last epoch line: {where.get('evidence', '')}"
        return self._outcome("unknown", where, now, [])

    def _outcome(self, outcome: str, info: dict[str, Any], now: float, secondary: list[str]) -> Record:
        detail = {key: info.get(key) for key in ("evidence", "line", "rank", "reason", "summary")}
        if secondary:
            detail["secondary"] = list(dict.fromkeys(secondary))
        if self.earlier:
            detail["earlier_runs"] = [dict(entry) for entry in self.earlier]
        message = f"{outcome}: {info.get('evidence', '')}"[:300]
        return event("outcome", message=message, time=now, outcome=outcome, **detail)


def has_ended(outcome: str | None) -> bool:
    """Whether an outcome says the run is over (completed, stopped early or failed); ``truncated`` and
    ``unknown`` do not (it may still run, or its log was cut)."""
    return outcome is not None and outcome not in ("truncated", "unknown")
