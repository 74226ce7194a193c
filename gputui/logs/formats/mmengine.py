"""MMEngine's loop lines (MMDetection 3, MMSegmentation 1, MMPretrain …) (``docs/log-formats.md``).

``2025/10/09 09:49:34 - mmengine - INFO - Epoch(train)  [1][  50/3505]  lr: 1.9820e-03  eta: 10:28:51
time: 0.8981  data_time: 0.2132  memory: 9480  loss: 0.9783  acc: 95.8496``; iteration-based loops print
``Iter(train) [  50/90000]``. Pairs are ``name: value`` separated by two spaces; ``eta`` (a duration) is
not a number and is skipped; ``time`` (per iteration) is ``step_time_s``, ``memory`` (MB) ``memory_mb``.

- ``Epoch(train) [E][i/N]`` → scope ``step`` (step = i, ``steps_total`` = N, the epoch's batches);
- ``Epoch(val) [E][N/N]`` with metrics (the validation's summary, ``coco/bbox_mAP: 0.374``) → scope
  ``epoch`` for epoch E, names ``val_*``; ``Epoch(val) [E][i/N]`` lines before it hold timings only;
- ``Iter(train) [i/N]`` → scope ``step``; ``Iter(val) [N/N]`` summary → scope ``step`` at the last
  training iteration, names ``val_*``.

Every line states the loop's position (``i/N``): a log that ends on a training line short of its
total ends inside its work (outcome ``truncated``).
"""

from __future__ import annotations

import re

from gputui.logs.base import NUM, Context, emit, is_metric_name, to_float
from gputui.stream.records import Record

NAME = "mmengine"
LOOP = re.compile(r"\b(Epoch|Iter)\((train|val|test)\)\s*(?:\[\s*(\d+)\s*\])?\s*\[\s*(\d+)\s*/\s*(\d+)\s*\]")
PAIR = re.compile(r"(?:^|\s)([A-Za-z][\w./@()-]*):\s+(" + NUM + r")(?=\s|$)")
TIMINGS = frozenset({"eta", "time", "data_time", "memory"})
RENAME = {"time": "step_time_s", "memory": "memory_mb"}  # seconds per iteration; MB
TIMINGS_RENAMED = frozenset(RENAME.get(name, name) for name in TIMINGS)
LAST_ITER = "mmengine_iter"  # ctx.extra: the latest Iter(train) position


class MMEngineParser:
    name = NAME

    #: The cheap pre-test of auto routing: a condition on ``text``, ``head`` (``text[:24]``) and ``ctx``
    #: that is False only where :meth:`parse` would say "not mine" (:func:`gputui.logs.parser.route_auto`).
    PRETEST = (
        '"(" in text and ("Epoch(" in text or "Iter(" in text)'
        ' and ("Epoch" in text or "epoch" in text or "Test" in text or "[" in text or "*" in text)'
    )

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        m = LOOP.search(text)
        if m is None:
            return None
        kind, split, epoch_text = m.group(1), m.group(2), m.group(3)
        i, total = int(m.group(4)), int(m.group(5))
        if (kind == "Epoch") != (epoch_text is not None):
            return None
        epoch = int(epoch_text) if epoch_text is not None else None
        ctx.last_progress = (i, total)
        if epoch is not None:
            ctx.epoch, ctx.epoch_base = epoch, 1
        pairs = []
        for pm in PAIR.finditer(text, m.end()):
            name = pm.group(1)
            value = to_float(pm.group(2))
            if value is not None and is_metric_name(name):
                pairs.append((RENAME.get(name, name), value))
        out: list[Record] = []
        if split == "train":
            if kind == "Iter":
                ctx.extra[LAST_ITER] = i
            extra = {"steps_total": total} if epoch is not None else None
            emit(out, pairs, NAME, "step", ctx, now, epoch, i, None, extra)
            return out
        summary = [(f"{split}_{name}", value) for name, value in pairs if name not in TIMINGS_RENAMED]
        if i != total or not summary:
            return out  # a validation in progress: its timings
        if epoch is not None:
            emit(out, summary, NAME, "epoch", ctx, now, epoch)
        else:
            emit(out, summary, NAME, "step", ctx, now, None, ctx.extra.get(LAST_ITER))
        return out


PARSER = MMEngineParser()
