"""How a job ended, from its log: ``outcome`` events with the evidence line; the first root cause wins.

Signals (each gives an ``error`` event as it is seen, with ``signal``, ``evidence`` and ``line``):

- ``time_limit``: ``*** JOB 42 ON node CANCELLED AT … DUE TO TIME LIMIT ***`` (anywhere in a frame:
  slurmstepd often writes it after an unfinished progress bar);
- ``cancelled``: the same without the time-limit suffix (``scancel``, preemption);
- ``oom``: ``CUDA out of memory``, ``HIP out of memory``, ``OutOfMemoryError``, ``RESOURCE_EXHAUSTED``
  … ``OOM``, Slurm's ``oom-kill event`` / ``Exceeded job memory limit``; on a ``WARNING`` line it was
  survived (Ultralytics falls back to the CPU, fairseq recovers): a ``warning`` event, no signal;
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
``secondary``); a traceback followed by further epochs, or printed before any training output that then
follows (a failed start), was not fatal; else ``early_stopped``; else ``completed`` on a line that says
the run finished (among the last frames, or a framework's end message, :data:`FINISH`, anywhere after
the last epoch line); else ``truncated`` when the log shows planned work not reached (an unfinished bar
or ``[i/N]`` line, ``epoch N/M`` or ``iteration N/M`` with N < M), ``completed`` when its latest
``epoch N/M`` has N = M, ``unknown`` otherwise.

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
#: Frameworks' own end messages, found anywhere in the log (the gate flags their lines, so a long final
#: evaluation after them does not hide them): Ultralytics ``40 epochs completed in 0.012 hours.``,
#: Megatron ``[after training is done]``, ``exiting program after consuming all available data`` and
#: ``exiting program at iteration N`` (``--exit-interval``), ms-swift ``End time of running main``, fairseq
#: ``done training in 33.0 seconds``, timm ``*** Best metric: 72.19 (epoch 299)`` (printed after its loop).
FINISH = re.compile(
    r"\b\d+ epochs completed in [\d.]+ hours\b|\bafter training is done\b"
    r"|\bexiting program (?:after consuming all available data|at iteration \d+)"
    r"|\bEnd time of running main\b|\bdone training in [\d.]+ seconds"
    r"|\*\*\* Best metric: \S+ \(epoch \d+\)"
)
#: Byte keys of FINISH for the gate (each a plain substring search: ``bytes.find`` is fast on long keys).
FINISH_KEYS = (
    b"epochs completed in",
    b"after training is done",
    b"exiting program",
    b"End time of running main",
    b"done training in",
    b"*** Best metric:",
)
#: Lines that say the run finished (read among the log's last frames, after its last epoch).
COMPLETION = re.compile(
    r"^\W*(?:done|all done|finished)\W*$"
    r"|\b(?:training|fine-?tuning|the run)\s+(?:is\s+|has\s+)?(?:done|complete|completed|finished)\b"
    r"|\bfinished training\b|\btraining completed\b|\btrain_finished\b"
    r"|`Trainer\.fit` stopped: `max_(?:epochs|steps)=\d+` reached"
    r"|'train_runtime':"
    r"|\bexit(?:ed)?(?: with)? (?:status|code):? 0\b"
    r"|" + FINISH.pattern,
    re.IGNORECASE,
)
#: ``Epoch 30/30``, ``epoch [3/10]``: planned work, reached or not; on a line without an epoch counter,
#: ``iteration 252/ 500`` (Megatron), ``Step 80/100``, ``iter 7/20`` (global counters: short of the total
#: they show work not reached; at the total they are no evidence of the end, as a bar at 100 %).
PLANNED = re.compile(r"\bepoch\s*[:\[]?\s*(\d+)\s*/\s*(\d+)", re.IGNORECASE)
PLANNED_STEPS = re.compile(r"\b(?:iteration|iter|step)\s*[:\[]?\s*(\d+)\s*/\s*(\d+)", re.IGNORECASE)
#: A warning-level message (``WARNING ⚠️ CUDA OutOfMemoryError in TaskAlignedAssigner, using CPU``,
#: fairseq ``| WARNING | ... OOM ... attempting to recover``): an OOM it reports was survived.
WARNING_LEVEL = re.compile(r"WARN(?:ING)?\b")  # no \b before: a bar frame can run into it
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
    for pattern in _GATE:
        for m in pattern.finditer(block):
            hits.append(m.start())
    for key in FINISH_KEYS:
        at = block.find(key)
        while at >= 0:
            hits.append(at)
            at = block.find(key, at + 1)
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
        self.saw_training = False  # any record seen (set by the parser)
        self.unfinished_progress = False
        self.last_epoch_line: tuple[int, str] | None = None
        self.finished: tuple[int, str] | None = None  # the latest framework end message (FINISH)
        self._epoch: float | None = None  # the 0-based epoch of the last epoch line
        self._epoch_start: int | None = None  # the line where that epoch was first seen

    def _drop_failed_start(self) -> None:
        """A traceback before any training output, then training: a failed start (an earlier job's
        output in the same file, an optional import that failed) that was survived."""
        open_tb = self._open_tb
        if open_tb is not None and open_tb.get("before_training") and self.saw_training:
            self.signals.remove(open_tb)
            self._open_tb = None

    def observe(self, text: str, line: int, rank: int | None, now: float) -> list[Record]:
        out: list[Record] = []
        if self.tb is not None:
            out.extend(self._traceback_line(text, line, rank, now))
        if TRACEBACK in text:
            self.tb = {"line": line, "text": text, "rank": rank, "frames": 0}
            return out
        if FINISH.search(text) is not None:
            self.finished = (line, text.strip()[:500])
        if _KEY_RE.search(text) is None:
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
            self.epochs_after = 0
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

    def saw_epoch(self, line: int, text: str, epoch: float | None = None) -> None:
        """An epoch line; ``epoch``: its 0-based epoch where known. A completion line counts when it
        comes after the line where the last epoch was first seen: the same epoch drawn again (a progress
        bar's last refresh as it closes, after the end message) is not training after the end."""
        self.saw_training = True
        self.epochs_after += 1
        self.last_epoch_line = (line, text)
        if epoch is None or epoch != self._epoch or self._epoch_start is None:
            self._epoch_start = line
        if epoch is not None:
            self._epoch = epoch
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
        self._drop_failed_start()
        failures = [s for s in self.signals if s["signal"] in FAILURES]
        secondary = [s["signal"] for s in failures[1:] if failures and s["signal"] != failures[0]["signal"]]
        if failures:
            root = failures[0]
            return self._outcome(root["signal"], root, now, secondary)
        early = [s for s in self.signals if s["signal"] == "early_stopped"]
        if early:
            return self._outcome("early_stopped", early[0], now, [])
        where = {"evidence": last_frame[1][:500], "line": last_frame[0]} if last_frame else {}
        after = self._epoch_start if self._epoch_start is not None else -1
        done = [(n, t) for n, t in recent if n >= after and _says_finished(t)]
        if self.finished is not None and self.finished[0] >= after:
            done = sorted([*done, self.finished])  # the latest line that says so is the evidence
        if done and self.saw_training:
            return self._outcome(
                "completed", {"evidence": done[-1][1].strip()[:500], "line": done[-1][0]}, now, []
            )
        if self.unfinished_progress:
            return self._outcome("truncated", where, now, [])
        planned = _planned(recent)
        if planned is not None and self.saw_training:
            line, text, m = planned
            info = {"evidence": text.strip()[:500], "line": line}
            if int(m.group(1)) < int(m.group(2)):
                return self._outcome("truncated", info, now, [])  # planned work not reached
            if m.re is PLANNED:
                return self._outcome("completed", info, now, [])  # the last planned epoch was reached
            # the last iteration printed, like a bar at its total: the run may still have died after it
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


def _says_finished(text: str) -> bool:
    """Whether a frame says the run finished (HF's final dict can be long: it is looked for in any frame)."""
    if len(text) < 400:
        return COMPLETION.search(text) is not None
    return "'train_runtime':" in text


def _planned(recent: list[tuple[int, str]]) -> tuple[int, str, re.Match[str]] | None:
    """The latest ``epoch N/M`` among the frames, or on a frame without one, ``iteration N/M``."""
    for line, text in reversed(recent):
        found = list(PLANNED.finditer(text)) or list(PLANNED_STEPS.finditer(text))
        if found:
            return line, text, found[-1]
    return None
