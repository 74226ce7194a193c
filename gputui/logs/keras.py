"""Keras / tf.keras ``fit()`` output: verbose 1 progress bars (Keras 2 ASCII, Keras 3 ``━``), verbose 2
summary lines (three generations), ``Epoch N/M`` headers, ``Epoch N: early stopping``.

After normalisation (``docs/log-formats.md`` §2):

- ``Epoch 3/10`` arms epoch 3 (1-based, as printed);
- ``  128/50000 [=>....] - ETA: 14:55 - loss: 2.9038 - acc: 0.1328``: a running frame (scope ``step``);
- ``50000/50000 [======] - 27s 547us/step - loss: 1.8970 - acc: 0.3390``: the final frame (count equals
  total and no ``ETA``) of the armed epoch → scope ``epoch`` with ``epoch_time_s`` = the elapsed field;
- ``1563/1563 - 37s - loss: … - 37s/epoch - 24ms/step`` and `` - 45s - loss: …`` (verbose 2);
- a final frame with no armed header (``evaluate()``, ``fit(epochs=1)``) → scope ``summary``.

If the first frame of an epoch counts more than 1, the counter is in samples (Keras ≤ 2.2), and the
epoch's sample count is recorded so the per-epoch view can compute images/s.
"""

from __future__ import annotations

import re

from gputui.logs.base import NUM, Context, is_metric_name, metric, to_float
from gputui.records import Record

NAME = "keras"
HEADER = re.compile(r"^\s*Epoch (\d+)/(\d+)\s*$")
# step/total, then either a bar ([===>..] or ━━━) or " - <elapsed>s"
BAR = re.compile(r"^\s*(\d+)/(\d+)\s+(?:\[[=>.]*\]|[━─]+|(?=-\s+\d))(.*)$")
COUNTLESS = re.compile(r"^\s*-\s+(\d+)s\s+-\s+(.*)$")
PAIR = re.compile(r"(?:^|\s-\s|\s)([A-Za-z_][\w./@]*):\s(" + NUM + r")(?=\s|$)", re.IGNORECASE)
ELAPSED = re.compile(r"(?:^|\s)(\d+)(ms|s)(?=\s|$)")
EARLY = re.compile(r"^\s*Epoch (\d+): early stopping")
REDUCE_LR = re.compile(r"^\s*Epoch (\d+): ReduceLROnPlateau reducing learning rate to (" + NUM + ")")


class KerasParser:
    name = NAME

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        head = text[:24]
        if head.lstrip().startswith("Epoch "):
            m = HEADER.match(text)
            if m:
                ctx.keras_epoch, ctx.keras_epochs = int(m.group(1)), int(m.group(2))
                ctx.epoch, ctx.epoch_base = ctx.keras_epoch, 1
                ctx.extra["keras_first"] = None
                return []
            if EARLY.match(text) or REDUCE_LR.match(text):
                return []  # handled by the outcome tracker / not a metric line
            return None
        if "/" in head:
            m = BAR.match(text)
            if m is None:
                return None
            return self._frame(int(m.group(1)), int(m.group(2)), m.group(3), ctx, now)
        if head.lstrip().startswith("- "):
            m = COUNTLESS.match(text)
            if m is None or ctx.keras_epoch is None:
                return None
            return self._final(None, None, float(m.group(1)), " - " + m.group(2), ctx, now)
        return None

    def _frame(self, n: int, total: int, rest: str, ctx: Context, now: float) -> list[Record] | None:
        if total <= 0 or n > total:
            return None
        eta = "ETA:" in rest
        if ctx.extra.get("keras_first") is None and ctx.keras_epoch is not None:
            ctx.extra["keras_first"] = n
        ctx.last_progress = (n, total)
        pairs = _pairs(rest)
        if n == total and not eta:
            elapsed = _elapsed(rest)
            return self._final(n, total, elapsed, rest, ctx, now, pairs)
        if not pairs and "- ETA" not in rest and "ETA" not in rest and "/step" not in rest:
            return None  # "3/10 something" that is not a Keras bar
        epoch = ctx.keras_epoch
        out = []
        for name, value in pairs:
            rec = metric(name, value, source=NAME, scope="step", ctx=ctx, now=now, epoch=epoch, step=n)
            if rec is not None:
                out.append(rec)
        return out

    def _final(
        self,
        n: int | None,
        total: int | None,
        elapsed: float | None,
        rest: str,
        ctx: Context,
        now: float,
        pairs: list[tuple[str, float]] | None = None,
    ) -> list[Record]:
        pairs = _pairs(rest) if pairs is None else pairs
        epoch = ctx.keras_epoch
        scope = "epoch" if epoch is not None else "summary"
        samples = None
        first = ctx.extra.get("keras_first")
        if epoch is not None and total is not None and first is not None and first > 1 and total > first:
            samples = total  # legacy Keras counts samples, not batches
        out = []
        for name, value in pairs:
            rec = metric(name, value, source=NAME, scope=scope, ctx=ctx, now=now, epoch=epoch, step=n)
            if rec is not None:
                out.append(rec)
        if elapsed is not None and epoch is not None:
            rec = metric(
                "epoch_time_s",
                elapsed,
                source=NAME,
                scope="epoch",
                ctx=ctx,
                now=now,
                epoch=epoch,
                step=n,
                steps=None if samples else total,
                samples=samples,
            )
            if rec is not None:
                out.append(rec)
        ctx.keras_epoch = None
        return out


def _pairs(rest: str) -> list[tuple[str, float]]:
    out = []
    for m in PAIR.finditer(rest):
        if m.group(1) == "ETA" or not is_metric_name(m.group(1)):
            continue
        value = to_float(m.group(2))
        if value is not None:
            out.append((m.group(1), value))
    return out


def _elapsed(rest: str) -> float | None:
    m = ELAPSED.search(rest)
    if m is None:
        return None
    value = float(m.group(1))
    return value / 1000.0 if m.group(2) == "ms" else value


PARSER = KerasParser()
