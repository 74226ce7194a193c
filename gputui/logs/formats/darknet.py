"""Darknet (pjreddie's and AlexeyAB's YOLO trainer): its iteration line (``docs/log-formats.md``).

::

     595: 0.817715, 0.864981 avg loss, 0.000327 rate, 0.591668 seconds, 28560 images, 0.251609 hours left
     1: 659.564758, 659.564758 avg, 0.000000 rate, 4.317869 seconds, 64 images

The iteration is the step; the values are the batch's ``loss``, its running ``avg_loss``, the learning
``rate``, the iteration's time (``time_s``) and the ``images`` seen so far. The hours left are an
estimate of what remains, not a measurement: not read.
"""

from __future__ import annotations

import re

from gputui.logs.base import NUM, Context, emit, to_float
from gputui.stream.records import Record

NAME = "darknet"
ITERATION = re.compile(
    r"^\s*(\d+): (" + NUM + r"), (" + NUM + r") avg(?: loss)?, (" + NUM + r") rate, (" + NUM + r") seconds,"
    r" (\d+) images\b"
)


class DarknetParser:
    name = NAME

    #: The cheap pre-test of auto routing (:func:`gputui.logs.parser.route_auto`).
    PRETEST = '" avg" in text and " rate, " in text'

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        m = ITERATION.match(text)
        if m is None:
            return None
        step = int(m.group(1))
        names = ("loss", "avg_loss", "rate", "time_s")
        pairs = [
            (n, v) for n, raw in zip(names, m.groups()[1:5], strict=True) if (v := to_float(raw)) is not None
        ]
        pairs.append(("images", float(m.group(6))))
        ctx.step = step
        out: list[Record] = []
        emit(out, pairs, NAME, "step", ctx, now, ctx.epoch, step)
        return out


PARSER = DarknetParser()
