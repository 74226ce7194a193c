"""A BLEU score as sacreBLEU and fairseq print it, wherever a script puts it (``docs/log-formats.md``).

::

    Epoch:  1 Dev Bleu Score: BLEU = 0.01 14.9/1.0/0.0/0.0 (BP = 0.044 ratio = 0.242 hyp_len = 137316
        ref_len = 567172)
    Generate test with beam=5: BLEU4 = 40.83, 67.5/46.8/34.4/25.5 (BP=1.000, ratio=1.006, syslen=3912,
        reflen=3889)

Values: ``bleu``, the n-gram precisions ``bleu_p1`` … ``bleu_p4``, the brevity penalty ``bp``, the length
``ratio``, ``hyp_len`` and ``ref_len`` (fairseq's ``syslen``/``reflen``). The text before the score gives
the epoch (``Epoch: 1``, else the stream's latest) and the split (``Dev``/``Valid`` → ``val_``, ``Test`` →
``test_``); without an epoch the score is the run's summary.
"""

from __future__ import annotations

import re

from gputui.logs.base import NUM, Context, emit, to_float
from gputui.logs.formats.generic import EPOCH
from gputui.stream.records import Record

NAME = "sacrebleu"
SCORE = re.compile(
    r"\bBLEU4? = (" + NUM + r"),? (" + NUM + r")/(" + NUM + r")/(" + NUM + r")/(" + NUM + r") "
    r"\(BP ?= ?(" + NUM + r"),? ratio ?= ?(" + NUM + r"),? (?:hyp_len|syslen) ?= ?(\d+),? "
    r"(?:ref_len|reflen) ?= ?(\d+)\)"
)
NAMES = ("bleu", "bleu_p1", "bleu_p2", "bleu_p3", "bleu_p4", "bp", "ratio", "hyp_len", "ref_len")
SPLIT = re.compile(r"\b(dev|valid|validation|val|test)\b", re.IGNORECASE)


class SacreBleuParser:
    name = NAME

    #: The cheap pre-test of auto routing (:func:`gputui.logs.parser.route_auto`).
    PRETEST = '"BLEU" in text and "ratio" in text'

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        m = SCORE.search(text)
        if m is None:
            return None
        before = text[: m.start()]
        em = EPOCH.search(before)
        epoch = int(em.group(1)) if em is not None else None
        split = SPLIT.search(before)
        prefix = "" if split is None else ("test_" if split.group(1).lower() == "test" else "val_")
        pairs = [
            (prefix + n, v)
            for n, raw in zip(NAMES, m.groups(), strict=True)
            if (v := to_float(raw)) is not None
        ]
        out: list[Record] = []
        if epoch is not None:
            ctx.epoch = epoch
            emit(out, pairs, NAME, "epoch", ctx, now, epoch, None)
        else:
            emit(out, pairs, NAME, "summary", ctx, now, ctx.epoch, ctx.step)
        return out


PARSER = SacreBleuParser()
