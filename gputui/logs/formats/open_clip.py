"""OpenCLIP's training loop (``open_clip_train``): its progress line (``docs/log-formats.md``).

::

    Train Epoch: 0 [    4096/10977280 (0%)] Data (t): 2.352 Batch (t): 4.571, 896.088/s, 56.0055/s/gpu
        LR: 0.000000 Logit Scale: 14.286 Contrastive_loss: 8.4170 (8.4170) Loss: 8.4170 (8.4170)

The samples seen in the epoch are the step (as printed), with the epoch. Values: ``data_t`` and
``batch_t`` (the data-loading and the whole batch's seconds, averaged over the interval; ``batch_t`` is
the step time), ``samples_per_second`` and ``samples_per_second_per_gpu``, ``lr``, ``logit_scale``, and
each loss with its running average (``loss``, ``loss_avg``). Older releases print the same parts in
another order (``Loss: … Data (t): … Batch (t): …, 49.5/s LR: …``): each part is found by its label.
"""

from __future__ import annotations

import re

from gputui.logs.base import NUM, Context, emit, to_float
from gputui.stream.records import Record

NAME = "open_clip"
LINE = re.compile(r"\bTrain Epoch: (\d+) \[\s*(\d+)/(\d+) \(\s*\d+%\)\]\s+(.*)$")
PARTS = (
    ("data_t", re.compile(r"\bData \(t\): (" + NUM + r")")),
    ("batch_t", re.compile(r"\bBatch \(t\): (" + NUM + r")")),
    ("samples_per_second", re.compile(r"(?:^|,\s)(" + NUM + r")/s(?!/)")),
    ("samples_per_second_per_gpu", re.compile(r"(?:^|,\s)(" + NUM + r")/s/gpu\b")),
    ("lr", re.compile(r"\bLR: (" + NUM + r")")),
    ("logit_scale", re.compile(r"\bLogit Scale: (" + NUM + r")")),
)
LOSS = re.compile(r"\b([A-Za-z][\w]*): (" + NUM + r") \((" + NUM + r")\)")


class OpenClipParser:
    name = NAME

    #: The cheap pre-test of auto routing (:func:`gputui.logs.parser.route_auto`).
    PRETEST = '"Train Epoch: " in text and "(t): " in text'

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        m = LINE.search(text)
        if m is None:
            return None
        epoch, step, rest = int(m.group(1)), int(m.group(2)), m.group(4)
        pairs: list[tuple[str, float]] = []
        for name, pattern in PARTS:
            found = pattern.search(rest)
            if found is not None and (value := to_float(found.group(1))) is not None:
                pairs.append((name, value))
        for loss in LOSS.finditer(rest):
            name = loss.group(1).lower()
            pairs += [
                (n, v)
                for n, raw in ((name, loss.group(2)), (f"{name}_avg", loss.group(3)))
                if (v := to_float(raw)) is not None
            ]
        ctx.epoch, ctx.step = epoch, step
        out: list[Record] = []
        emit(out, pairs, NAME, "step", ctx, now, epoch, step)
        return out


PARSER = OpenClipParser()
