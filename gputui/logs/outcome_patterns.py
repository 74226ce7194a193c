"""The patterns the outcome tracker (:mod:`gputui.logs.outcome`) reads a log's lines with: the failure
signals, and the counters that show planned work reached or not."""

from __future__ import annotations

import re

from gputui.logs.end_messages import COMPLETION

SLURM = re.compile(r"\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT \S+(.*?)\*\*\*")
OOM = re.compile(
    r"CUDA out of memory|HIP out of memory|OutOfMemoryError|CUDA error: out of memory|"
    r"RESOURCE_EXHAUSTED.*OOM|oom[-_]kill event|Exceeded job memory limit|out of memory on device|"
    r"\btasks? [\d,-]+: Out Of Memory",
    re.IGNORECASE,
)
NCCL = re.compile(
    r"NCCL error|RCCL error|nccl(?:Internal|System|UnhandledCuda|Remote)Error|Watchdog caught collective|"
    r"ProcessGroupNCCL.*(?:[Tt]imeout|[Ee]rror|abort)|NCCL communicator was aborted|NCCL WARN.*(?:error|fail)"
)
INTERRUPT = re.compile(
    r"KeyboardInterrupt|received SIGINT|SIGINT received|[Kk]eyboard [Ii]nterrupt(?:ion)?\b"
)
#: Terminated from outside (scancel without Slurm's banner, a preemption, torchrun passing SIGTERM on).
TERMINATED = re.compile(
    r"got signal: 15\b|Received 15 death signal|[Rr]eceived SIGTERM|SIGTERM received|Caught SIGTERM"
    r"|^\s*Terminated\s*$"
)
CRASH = re.compile(
    r"Memory access fault by GPU|an illegal memory access was encountered|device-side assert triggered|"
    r"hipErrorIllegalAddress|Segmentation fault|SIGSEGV|core dumped|"
    r"\b[Ee]xited with (?:exit )?(?:code|status) -?[1-9]\d*|\breturned non-zero exit status"
    r"|: error: (?:unrecognized arguments|the following arguments are required|argument )"  # argparse
    r"|^\s*Aborted(?: \(core dumped\))?\s*$"
)
#: A task killed by SIGKILL: the shell's ``Killed`` (alone, or bash's ``line 12: 4242 Killed  python t.py``)
#: and srun's ``task 0: Killed``. The kernel's or the cgroup's OOM killer is the usual sender.
KILLED = re.compile(r"^\s*Killed\s*$|\b\d+ Killed\s+\S|\btasks? [\d,-]+: Killed\b")
KILLED_REASON = "killed by SIGKILL: the OOM killer is likely (host memory: check the job's memory use)"
EARLY = re.compile(
    r"Epoch \d+: early stopping|Signaling Trainer to stop|\bEarly stopping\b|early stopping at epoch"
    r"|\b[Ee]arly[ _]?[Ss]topping (?:triggered|at)\b|\bStopping early\b|\bEarly Stop!"
    r"|not improving\b.*[Ss]top|\bquitting training\b"  # flair: "… - quitting training!"
    r"|\b[Ee]arly stop(?:ped)? (?:after|at) "  # "early stop after 28 epochs (no improvement for 6)"
)
#: ``EarlyStopping counter: 9 out of 8``: the patience ran out when the count reaches its bound.
PATIENCE = re.compile(r"EarlyStopping counter: (\d+) out of (\d+)")
EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure)\b")
TRACEBACK = "Traceback (most recent call last):"
#: ``Epoch 30/30``, ``epoch [3/10]``: planned work, reached or not; on a line without an epoch counter,
#: ``iteration 252/ 500`` (Megatron), ``Step 80/100``, ``iter 7/20`` (global counters: short of the total
#: they show work not reached; at the total they are no evidence of the end, as a bar at 100 %).
PLANNED = re.compile(r"\bepoch[\"']?\s*[:\[\s\"']{0,4}(\d+)\s*/\s*(\d+)", re.IGNORECASE)  # "epoch": "60/400"
PLANNED_STEPS = re.compile(r"\b(?:iteration|iter|step|batch)\s*[:\[\s]{0,3}(\d+)\s*/\s*(\d+)", re.IGNORECASE)
PRINTED_EPOCH = re.compile(r"\bepoch\W{0,3}(\d+)", re.IGNORECASE)
#: Lines that are no summary after a counter's last line (a failure has its own signal).
NOT_SUMMARY = re.compile(r"error|exception|traceback|warn|killed|cancel", re.IGNORECASE)
#: A warning-level message (``WARNING ⚠️ CUDA OutOfMemoryError in TaskAlignedAssigner, using CPU``,
#: fairseq ``| WARNING | ... OOM ... attempting to recover``): an OOM it reports was survived.
WARNING_LEVEL = re.compile(r"WARN(?:ING)?\b")  # no \b before: a bar frame can run into it


def says_finished(text: str) -> bool:
    """Whether a frame says the run finished (HF's final dict can be long: it is looked for in any frame)."""
    if len(text) < 400:
        return COMPLETION.search(text) is not None
    return "'train_runtime':" in text


def printed_epoch(text: str) -> tuple[str, float] | None:
    """The epoch number a line prints (``epoch 3``, ``Epoch [3/10]``), where the parser did not say
    where its epochs count from: compared only with other printed numbers."""
    m = PRINTED_EPOCH.search(text)
    return ("printed", int(m.group(1))) if m is not None else None


def summary_after(recent: list[tuple[int, str]], line: int) -> str | None:
    """The first line after ``line`` that is neither a counter line nor an error: the run's summary."""
    for n, text in recent:
        if n > line and text.strip() and not PLANNED_STEPS.search(text) and not NOT_SUMMARY.search(text):
            return text.strip()[:500]
    return None


def planned_work(recent: list[tuple[int, str]]) -> tuple[int, str, re.Match[str]] | None:
    """The latest ``epoch N/M`` among the frames, or on a frame without one, ``iteration N/M``."""
    for line, text in reversed(recent):
        found = list(PLANNED.finditer(text)) or list(PLANNED_STEPS.finditer(text))
        if found:
            return line, text, found[-1]
    return None
