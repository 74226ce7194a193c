"""Where a new launch starts in a log that several launches appended to (a requeued or resubmitted job).

The outcome tracker (:mod:`gputui.logs.outcome`) decides a log by its last run; these are the start
markers it reads on the frames the outcome gate flags (the epoch table's own rule, an epoch number lower
than the previous one, is :func:`gputui.logs.epochs.restarts`, shared by both):

- ``training``: a trainer announcing its training loop: Hugging Face ``***** Running training *****``,
  Ultralytics ``Starting training for 40 epochs...``, detectron2 ``Starting training from iteration 0``,
  ``Start training``;
- ``launch``: a process starting up: an argparse dump ``Namespace(...)``, the torch.distributed set-up
  line of the DeiT/DINO/DETR scripts ``| distributed init (rank 0): env://`` (Lightning's and Megatron's
  set-up lines are not read: each scan costs the catch-up time, and their runs restart their counters);
- ``counter``: a step counter at its start: ``iter 0: loss 10.9``, ``step 1/80000``,
  ``iteration        1/     500``.

A ``training`` marker starts a new run after a run that ended (a failure, a requeue or an end message);
``launch`` and ``counter`` markers only after a failure or a requeue (a test phase after ``fit()`` sets up
its processes again and counts its own batches: that is not a new training). The new run begins when
training output follows the marker.
"""

from __future__ import annotations

import re

TRAINING_START = re.compile(r"\*{3,} Running training \*{3,}|\b(?:Start|Starting|starting) training\b")
LAUNCH_START = re.compile(r"^\s*Namespace\(|\| distributed init \(rank \d+\): ")
COUNTER_START = re.compile(
    r"\b(?:[Ss]tep|[Ii]ter|[Ii]teration)\s*[:=#\[]?\s*[01](?:\s*/\s*\d+)?(?!\d|[.,]\d)"
)

#: Byte scans for the gate (:func:`gputui.logs.outcome.gate`): each starts with a literal, so the regex
#: engine skips at memchr speed; every match of the patterns above contains a match of one of them.
GATE: tuple[re.Pattern[bytes], ...] = (
    re.compile(rb"Namespace\("),
    re.compile(rb"\(rank \d+\): "),
    re.compile(rb"te(?:p|r|ration)\s*[:=#\[]?\s*[01](?!\d|[.,]\d)"),
)
#: Substrings of the ``training`` markers: the gate finds them in its scan for ``raining``, which it shares
#: with the end messages (:data:`gputui.logs.end_messages.FINISH_KEYS`).
TRAINING_KEYS: tuple[bytes, ...] = (
    b"Running training",
    b"Start training",
    b"Starting training",
    b"starting training",
)


def start_marker(text: str) -> str | None:
    """``training``, ``launch`` or ``counter`` where the frame is a start marker; else None."""
    if "raining" in text and TRAINING_START.search(text) is not None:
        return "training"
    if LAUNCH_START.search(text) is not None:
        return "launch"
    if ("tep" in text or "ter" in text) and COUNTER_START.search(text) is not None:
        return "counter"
    return None
