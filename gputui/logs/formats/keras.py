"""Keras / tf.keras ``fit()`` output: verbose 1 progress bars (Keras 2 ASCII, Keras 3 ``━``), verbose 2
summary lines (three generations), ``Epoch N/M`` headers, ``Epoch N: early stopping``.

After normalisation (``docs/log-formats.md`` §2):

- ``Epoch 3/10`` arms epoch 3 (1-based, as printed);
- ``  128/50000 [=>....] - ETA: 14:55 - loss: 2.9038 - acc: 0.1328``: a running frame (scope ``step``),
  thinned to the first frame of each printed time (the word after ``ETA:``, or Keras 3's elapsed
  ``3s``) per epoch and bar, as for tqdm: Keras redraws ~20 times a second;
- ``50000/50000 [======] - 27s 547us/step - loss: 1.8970 - acc: 0.3390``: the final frame (count equals
  total and no ``ETA``) of the armed epoch → scope ``epoch`` with ``epoch_time_s`` = the elapsed field;
- ``1563/1563 - 37s - loss: … - 37s/epoch - 24ms/step`` and `` - 45s - loss: …`` (verbose 2);
- a final frame with no armed header (``evaluate()``, ``fit(epochs=1)``) → scope ``summary``.

If the first frame of an epoch counts more than 1, the counter is in samples (Keras ≤ 2.2), and the
epoch's sample count is recorded so the per-epoch view can compute images/s.
"""

from __future__ import annotations

import re

from gputui.logs.base import NUM, Context, emit, is_metric_name, to_float
from gputui.stream.records import Record

NAME = "keras"
HEADER = re.compile(r"^\s*Epoch (\d+)/(\d+)\s*$")
# step/total, then either a bar ([===>..] or ━━━) or " - <elapsed>s"
BAR = re.compile(r"^\s*(\d+)/(\d+)\s+(?:\[[=>.]*\]|[━─]+|(?=-\s+\d))(.*)$")
COUNTLESS = re.compile(r"^\s*-\s+(\d+)s\s+-\s+(.*)$")
PAIR = re.compile(  # a name of up to three words: PaddleSeg's "- reader cost: 0.16"
    r"(?:^|\s-\s|\s)([A-Za-z_][\w./@]*(?: [A-Za-z][\w./@]*){0,2}):\s(" + NUM + r")(?=\s|$)", re.IGNORECASE
)
ELAPSED = re.compile(r"(?:^|\s)(\d+)(ms|s)(?=\s|$)")
EARLY = re.compile(r"^\s*Epoch (\d+): early stopping")
EPOCH_LINE = re.compile(r"\s*Epoch \d+(?:/|: early stopping|: ReduceLROnPlateau )")  # any of these 3
ELAPSED_TOKEN = re.compile(r"(?<!\S)\d[\d:]*(?:ms|us|s)?(?=\s)")  # Keras 3: "3s", "1:23"
REDUCE_LR = re.compile(r"^\s*Epoch (\d+): ReduceLROnPlateau reducing learning rate to (" + NUM + ")")


class KerasParser:
    name = NAME

    #: The cheap pre-test of auto routing: a condition on ``text``, ``head`` (``text[:24]``) and ``ctx``
    #: that is False only where :meth:`parse` would say "not mine" (:func:`gputui.logs.parser.route_auto`).
    PRETEST = '"/" in head or "Epoch " in head or "- " in head'

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        head = text[:24]
        lead = head.lstrip()
        if lead.startswith("Epoch "):
            if EPOCH_LINE.match(text) is None:  # Lightning's "Epoch 0:  25%|…" bars, mostly
                return None
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
            # BAR starts with digits and "/": tqdm's "  1%|…| 3/9" stops here without a regex
            after = lead.lstrip("0123456789")
            if not lead[:1].isdigit() or not (after[:1] == "/" or after[:1].isdigit()):
                return None
            m = BAR.match(text)
            if m is None:
                return None
            return self._frame(int(m.group(1)), int(m.group(2)), m.group(3), ctx, now)
        if lead.startswith("- "):
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
        if n == total and not eta:
            return self._final(n, total, _elapsed(rest), rest, ctx, now)
        pairs = None
        if "ETA" not in rest and "/step" not in rest:
            pairs = _pairs(rest)
            if not pairs:
                return None  # "3/10 something" that is not a Keras bar
        word = _clock(rest)
        clock = None if word is None else (ctx.keras_epoch, total, word)
        if clock is not None and clock == ctx.bar_clock:
            return []  # same bar, same printed second: thinned (docs/log-formats.md)
        out: list[Record] = []
        emit(out, _pairs(rest) if pairs is None else pairs, NAME, "step", ctx, now, ctx.keras_epoch, n)
        if out:
            ctx.bar_clock = clock
        return out

    def _final(
        self,
        n: int | None,
        total: int | None,
        elapsed: float | None,
        rest: str,
        ctx: Context,
        now: float,
    ) -> list[Record]:
        epoch = ctx.keras_epoch
        scope = "epoch" if epoch is not None else "summary"
        samples = None
        first = ctx.extra.get("keras_first")
        if epoch is not None and total is not None and first is not None and first > 1 and total > first:
            samples = total  # legacy Keras counts samples, not batches
        out: list[Record] = []
        emit(out, _pairs(rest), NAME, scope, ctx, now, epoch, n)
        if elapsed is not None and epoch is not None:
            extra = {"steps": None if samples else total, "samples": samples}
            emit(out, (("epoch_time_s", elapsed),), NAME, "epoch", ctx, now, epoch, n, None, extra)
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


def _clock(rest: str) -> str | None:
    """The printed time of a running frame: the word after ``ETA:`` (Keras 1/2: ``14:55``, ``3s``),
    else the first time word (Keras 3: ``0s 10ms/step``); ``None`` if it shows none."""
    at = rest.find("ETA:")
    if at >= 0:
        word = rest[at + 4 :].split(None, 1)
        return word[0] if word else None
    m = ELAPSED_TOKEN.search(rest)
    return None if m is None else m.group(0)


def _elapsed(rest: str) -> float | None:
    m = ELAPSED.search(rest)
    if m is None:
        return None
    value = float(m.group(1))
    return value / 1000.0 if m.group(2) == "ms" else value


PARSER = KerasParser()
