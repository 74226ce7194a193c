"""How a job ended, from its log: ``outcome`` events with the evidence line; the first root cause wins.

Signals (each gives an ``error`` event as it is seen, with ``signal``, ``evidence`` and ``line``):

- ``time_limit``: ``*** JOB 42 ON node CANCELLED AT … DUE TO TIME LIMIT ***`` (anywhere in a frame:
  slurmstepd often writes it after an unfinished progress bar);
- ``cancelled``: the same without the time-limit suffix (``scancel``, preemption);
- ``oom``: ``CUDA out of memory``, ``HIP out of memory``, ``OutOfMemoryError``, ``RESOURCE_EXHAUSTED``
  … ``OOM``, Slurm's ``oom-kill event`` / ``Exceeded job memory limit``;
- ``nccl_error``: NCCL/RCCL errors, ``ProcessGroupNCCL`` watchdog timeouts, aborted communicators;
- ``interrupted``: ``KeyboardInterrupt``, ``received SIGINT``;
- ``crashed``: the process died without a Python traceback: ROCm ``Memory access fault by GPU``, CUDA
  ``an illegal memory access was encountered`` / ``device-side assert triggered``, ``Segmentation fault``,
  ``core dumped``;
- ``crashed_traceback``: a Python traceback whose exception is none of the above;
- ``early_stopped`` (not a failure): Keras ``Epoch 44: early stopping``, Lightning
  ``Signaling Trainer to stop``, ``Early stopping``.

:meth:`OutcomeTracker.decide` gives the final ``outcome`` event: the first failure signal (an OOM on
one rank wins over the watchdog timeout it causes on another; the later ones are listed in
``secondary``); a traceback followed by further epochs was not fatal and only becomes secondary; else
``early_stopped``; else ``truncated`` when the log ends inside an unfinished progress bar; else
``completed`` when training output was seen, ``unknown`` when nothing was.

:func:`gate` finds, on the raw bytes of a whole block, where a signal or a traceback may be (eleven scans
that each skip at memchr speed to one rare byte); frames of the other lines skip :meth:`observe`.
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
CRASH = re.compile(
    r"Memory access fault by GPU|an illegal memory access was encountered|device-side assert triggered|"
    r"hipErrorIllegalAddress|Segmentation fault|SIGSEGV|core dumped"
)
EARLY = re.compile(
    r"Epoch \d+: early stopping|Signaling Trainer to stop|\bEarly stopping\b|early stopping at epoch"
)
EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure)\b")
TRACEBACK = "Traceback (most recent call last):"
#: Lines that say the run finished (read among the log's last frames, after its last epoch).
COMPLETION = re.compile(
    r"^\W*(?:done|all done|finished)\W*$"
    r"|\b(?:training|fine-?tuning|the run)\s+(?:is\s+|has\s+)?(?:done|complete|completed|finished)\b"
    r"|\bfinished training\b|\btraining completed\b|\btrain_finished\b"
    r"|`Trainer\.fit` stopped: `max_(?:epochs|steps)=\d+` reached"
    r"|'train_runtime':"
    r"|\bexit(?:ed)?(?: with)? (?:status|code):? 0\b",
    re.IGNORECASE,
)
#: ``Epoch 30/30``, ``epoch [3/10]``: planned work, reached or not.
PLANNED = re.compile(r"\bepoch\s*[:\[]?\s*(\d+)\s*/\s*(\d+)", re.IGNORECASE)
RECENT_FRAMES = 64
FAILURES = ("time_limit", "cancelled", "oom", "nccl_error", "interrupted", "crashed", "crashed_traceback")
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
    "Segmentation fault",
    "SIGSEGV",
    "core dumped",
    "device-side assert",
    "hipError",
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
        rb"k(?:(?<=Traceback) \(most recent call last\):|ill(?<=oom-kill))",
        rb"p(?:(?<=Trainer to stop)|(?<=arly stop)ping)",
        rb"y(?<=emory)",
        rb"Segmentation fault",
        rb"SIGSEGV",
        rb"core dumped",
        rb"device-side assert",
        rb"hipError",
    )
)


def gate(block: bytes) -> list[int]:
    """Sorted offsets in ``block`` where an outcome signal or a traceback may start (a superset: the
    frames of the lines they fall in are checked by :meth:`OutcomeTracker.observe`, the others skip)."""
    hits: list[int] = []
    for pattern in _GATE:
        for m in pattern.finditer(block):
            hits.append(m.start())
    hits.sort()
    return hits


class OutcomeTracker:
    """Feed it every finished frame; ask :meth:`decide` at the end."""

    def __init__(self) -> None:
        # What decide() needs, in order: the first signal of each kind, and the first traceback since
        # the latest epoch (earlier ones were survived). Bounded, however many signals a log prints.
        self.signals: list[dict[str, Any]] = []
        self._kinds: set[str] = set()
        self._open_tb: dict[str, Any] | None = None
        self.tb: dict[str, Any] | None = None  # the traceback being read
        self.epochs_after: int = 0  # epoch records seen after the latest traceback signal
        self.saw_training = False
        self.unfinished_progress = False
        self.last_epoch_line: tuple[int, str] | None = None

    def observe(self, text: str, line: int, rank: int | None, now: float) -> list[Record]:
        out: list[Record] = []
        if self.tb is not None:
            out.extend(self._traceback_line(text, line, rank, now))
        if TRACEBACK in text:
            self.tb = {"line": line, "text": text, "rank": rank, "frames": 0}
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
        elif CRASH.search(text):
            signal = "crashed"
        elif EARLY.search(text):
            signal = "early_stopped"
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
        if (
            OOM.search(stripped)
            or NCCL.search(stripped)
            or INTERRUPT.search(stripped)
            or CRASH.search(stripped)
        ):
            return []  # observe() reports it from the same frame with its own signal
        return [self._signal("crashed_traceback", stripped, line, rank, now, traceback_line=tb["line"])]

    def _signal(
        self, signal: str, text: str, line: int, rank: int | None, now: float, **extra: Any
    ) -> Record:
        info = {"signal": signal, "evidence": text.strip()[:500], "line": line, "rank": rank, **extra}
        if signal == "crashed_traceback":
            self.epochs_after = 0
            if self._open_tb is None:
                self._open_tb = info
                self.signals.append(info)
        elif signal not in self._kinds:
            self._kinds.add(signal)
            self.signals.append(info)
        level = "warning" if signal == "early_stopped" else "error"
        detail = {k: v for k, v in info.items() if k != "signal" and v is not None}
        return event(level, message=f"{signal}: {info['evidence'][:200]}", time=now, signal=signal, **detail)

    def saw_epoch(self, line: int, text: str) -> None:
        self.saw_training = True
        self.epochs_after += 1
        self.last_epoch_line = (line, text)
        if self._open_tb is not None:  # training went on: that traceback was not fatal
            self.signals.remove(self._open_tb)
            self._open_tb = None
        requeued = [s for s in self.signals if s["signal"] in ("cancelled", "time_limit")]
        for signal in requeued:  # preempted or requeued, then ran again into this file: the last run decides
            self.signals.remove(signal)
            self._kinds.discard(signal["signal"])

    def decide(
        self, now: float, last_frame: tuple[int, str] | None = None, recent: list[tuple[int, str]] = ()
    ) -> Record:
        """The final ``outcome`` event. ``recent``: the log's last frames, where a completion line is
        looked for (``completed`` needs one, or the last planned epoch reached)."""
        if self.tb is not None:  # a traceback cut by the end of the log
            tb = self.tb
            self.tb = None
            self._signal("crashed_traceback", tb["text"], tb["line"], tb["rank"], now)
        failures = [s for s in self.signals if s["signal"] in FAILURES]
        secondary = [s["signal"] for s in failures[1:] if failures and s["signal"] != failures[0]["signal"]]
        if failures:
            root = failures[0]
            return self._outcome(root["signal"], root, now, secondary)
        early = [s for s in self.signals if s["signal"] == "early_stopped"]
        if early:
            return self._outcome("early_stopped", early[0], now, [])
        where = {"evidence": last_frame[1][:500], "line": last_frame[0]} if last_frame else {}
        after = self.last_epoch_line[0] if self.last_epoch_line is not None else -1
        done = [(n, t) for n, t in recent if n >= after and len(t) < 400 and COMPLETION.search(t)]
        if done and self.saw_training:
            return self._outcome(
                "completed", {"evidence": done[-1][1].strip()[:500], "line": done[-1][0]}, now, []
            )
        planned = [(n, t, m) for n, t in recent for m in PLANNED.finditer(t)]
        if self.unfinished_progress:
            return self._outcome("truncated", where, now, [])
        if planned and self.saw_training:
            line, text, m = planned[-1]
            info = {"evidence": text.strip()[:500], "line": line}
            if int(m.group(1)) >= int(m.group(2)):
                return self._outcome("completed", info, now, [])  # the last planned epoch was reached
            return self._outcome("truncated", info, now, [])  # planned epochs not reached
        if self.saw_training:
            if self.last_epoch_line is not None:
                where = {"evidence": self.last_epoch_line[1][:500], "line": self.last_epoch_line[0]}
            where["evidence"] = f"no line says the run finished; last epoch line: {where.get('evidence', '')}"
            return self._outcome("unknown", where, now, [])
        return self._outcome("unknown", where, now, [])

    def _outcome(self, outcome: str, info: dict[str, Any], now: float, secondary: list[str]) -> Record:
        detail = {"evidence": info.get("evidence"), "line": info.get("line"), "rank": info.get("rank")}
        if secondary:
            detail["secondary"] = list(dict.fromkeys(secondary))
        message = f"{outcome}: {info.get('evidence', '')}"[:300]
        return event("outcome", message=message, time=now, outcome=outcome, **detail)
