"""How a job ended, from its log: ``outcome`` events with the evidence line; the first root cause wins.

Signals (each gives an ``error`` event as it is seen, with ``signal``, ``evidence`` and ``line``):

- ``time_limit``: ``*** JOB 42 ON node CANCELLED AT … DUE TO TIME LIMIT ***`` (anywhere in a frame:
  slurmstepd often writes it after an unfinished progress bar);
- ``cancelled``: the same without the time-limit suffix (``scancel``, preemption);
- ``oom``: ``CUDA out of memory``, ``HIP out of memory``, ``OutOfMemoryError``, ``RESOURCE_EXHAUSTED``
  … ``OOM``, Slurm's ``oom-kill event`` / ``Exceeded job memory limit``;
- ``nccl_error``: NCCL/RCCL errors, ``ProcessGroupNCCL`` watchdog timeouts, aborted communicators;
- ``interrupted``: ``KeyboardInterrupt``, ``received SIGINT``;
- ``crashed_traceback``: a Python traceback whose exception is none of the above;
- ``early_stopped`` (not a failure): Keras ``Epoch 44: early stopping``, Lightning
  ``Signaling Trainer to stop``, ``Early stopping``.

:meth:`OutcomeTracker.decide` gives the final ``outcome`` event: the first failure signal (an OOM on
one rank wins over the watchdog timeout it causes on another; the later ones are listed in
``secondary``); a traceback followed by further epochs was not fatal and only becomes secondary; else
``early_stopped``; else ``truncated`` when the log ends inside an unfinished progress bar; else
``completed`` when training output was seen, ``unknown`` when nothing was.
"""

from __future__ import annotations

import re
from typing import Any

from gputui.records import Record, event

SLURM = re.compile(r"\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT \S+(.*?)\*\*\*")
OOM = re.compile(
    r"CUDA out of memory|HIP out of memory|OutOfMemoryError|CUDA error: out of memory|"
    r"RESOURCE_EXHAUSTED.*OOM|oom-kill event|Exceeded job memory limit|out of memory on device",
    re.IGNORECASE,
)
NCCL = re.compile(
    r"NCCL error|RCCL error|nccl(?:Internal|System|UnhandledCuda|Remote)Error|Watchdog caught collective|"
    r"ProcessGroupNCCL.*(?:[Tt]imeout|[Ee]rror|abort)|NCCL communicator was aborted|NCCL WARN.*(?:error|fail)"
)
INTERRUPT = re.compile(r"KeyboardInterrupt|received SIGINT|SIGINT received")
EARLY = re.compile(
    r"Epoch \d+: early stopping|Signaling Trainer to stop|\bEarly stopping\b|early stopping at epoch"
)
EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure)\b")
TRACEBACK = "Traceback (most recent call last):"
FAILURES = ("time_limit", "cancelled", "oom", "nccl_error", "interrupted", "crashed_traceback")
_KEYS = (
    "CANCELLED",
    "emory",
    "OOM",
    "oom-kill",
    "NCCL",
    "CCL",
    "SIGINT",
    "Interrupt",
    "arly stopping",
    "Trainer to stop",
)
MAX_TRACEBACK_FRAMES = 400
_KEY_RE = re.compile("|".join(re.escape(k) for k in _KEYS))


class OutcomeTracker:
    """Feed it every finished frame; ask :meth:`decide` at the end."""

    def __init__(self) -> None:
        self.signals: list[dict[str, Any]] = []
        self._tb: dict[str, Any] | None = None
        self.epochs_after: int = 0  # epoch records seen after the latest traceback signal
        self.saw_training = False
        self.unfinished_progress = False
        self.last_epoch_line: tuple[int, str] | None = None

    def observe(self, text: str, line: int, rank: int | None, now: float) -> list[Record]:
        out: list[Record] = []
        if self._tb is not None:
            out.extend(self._traceback_line(text, line, rank, now))
        if TRACEBACK in text:
            self._tb = {"line": line, "text": text, "rank": rank, "frames": 0}
            return out
        if _KEY_RE.search(text) is None:
            return out
        signal = None
        m = SLURM.search(text)
        if m is not None:
            signal = "time_limit" if "TIME LIMIT" in m.group(1) else "cancelled"
        elif OOM.search(text):
            signal = "oom"
        elif NCCL.search(text):
            signal = "nccl_error"
        elif INTERRUPT.search(text):
            signal = "interrupted"
        elif EARLY.search(text):
            signal = "early_stopped"
        if signal is not None:
            out.append(self._signal(signal, text, line, rank, now))
        return out

    def _traceback_line(self, text: str, line: int, rank: int | None, now: float) -> list[Record]:
        tb = self._tb
        assert tb is not None
        tb["frames"] += 1
        if text[:1].isspace() and tb["frames"] < MAX_TRACEBACK_FRAMES:
            return []
        stripped = text.strip()
        if EXCEPTION.match(stripped) is None and tb["frames"] < MAX_TRACEBACK_FRAMES:
            return []  # another rank's output between the traceback's lines
        self._tb = None
        if OOM.search(stripped) or NCCL.search(stripped) or INTERRUPT.search(stripped):
            return []  # observe() reports it from the same frame with its own signal
        return [self._signal("crashed_traceback", stripped, line, rank, now, traceback_line=tb["line"])]

    def _signal(
        self, signal: str, text: str, line: int, rank: int | None, now: float, **extra: Any
    ) -> Record:
        info = {"signal": signal, "evidence": text.strip()[:500], "line": line, "rank": rank, **extra}
        self.signals.append(info)
        if signal == "crashed_traceback":
            self.epochs_after = 0
        level = "warning" if signal == "early_stopped" else "error"
        detail = {k: v for k, v in info.items() if k != "signal" and v is not None}
        return event(level, message=f"{signal}: {info['evidence'][:200]}", time=now, signal=signal, **detail)

    def saw_epoch(self, line: int, text: str) -> None:
        self.saw_training = True
        self.epochs_after += 1
        self.last_epoch_line = (line, text)
        for info in self.signals:
            if info["signal"] == "crashed_traceback":
                info["survived"] = True

    def decide(self, now: float, last_frame: tuple[int, str] | None = None) -> Record:
        """The final ``outcome`` event."""
        if self._tb is not None:  # a traceback cut by the end of the log
            tb = self._tb
            self._tb = None
            self._signal("crashed_traceback", tb["text"], tb["line"], tb["rank"], now)
        failures = [s for s in self.signals if s["signal"] in FAILURES and not s.get("survived")]
        secondary = [s["signal"] for s in failures[1:] if failures and s["signal"] != failures[0]["signal"]]
        if failures:
            root = failures[0]
            return self._outcome(root["signal"], root, now, secondary)
        early = [s for s in self.signals if s["signal"] == "early_stopped"]
        if early:
            return self._outcome("early_stopped", early[0], now, [])
        where = {"evidence": last_frame[1][:500], "line": last_frame[0]} if last_frame else {}
        if self.unfinished_progress:
            return self._outcome("truncated", where, now, [])
        if self.saw_training:
            if self.last_epoch_line is not None and not last_frame:
                where = {"evidence": self.last_epoch_line[1][:500], "line": self.last_epoch_line[0]}
            return self._outcome("completed", where, now, [])
        return self._outcome("unknown", where, now, [])

    def _outcome(self, outcome: str, info: dict[str, Any], now: float, secondary: list[str]) -> Record:
        detail = {"evidence": info.get("evidence"), "line": info.get("line"), "rank": info.get("rank")}
        if secondary:
            detail["secondary"] = list(dict.fromkeys(secondary))
        message = f"{outcome}: {info.get('evidence', '')}"[:300]
        return event("outcome", message=message, time=now, outcome=outcome, **detail)
