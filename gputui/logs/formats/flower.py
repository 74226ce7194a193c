"""Flower (``flwr``), the federated-learning framework: its server's round lines (``docs/log-formats.md``).

::

    INFO :      initial parameters (loss, other metrics): 2.3026, {'cen_accuracy': 0.1011}
    INFO :      fit progress: (3, 3.8714, {'cen_accuracy': 0.1003}, 594.4367)
    INFO :      Run finished 151 round(s) in 57346.53s
    INFO :      	History (loss, distributed):
    INFO :      		round 1: 0.0

A round is the step. ``fit progress`` gives the round, the centralised ``loss``, the metrics of its
dictionary under their keys, and the seconds since the server started (``elapsed_s``: a clock, not a
round's time). The initial evaluation is round 0. ``Run finished`` is the run's ``runtime_s``. In the
closing History, the distributed (clients') losses are ``distributed_loss`` at their rounds; the
centralised ones repeat what the rounds printed and are not read again, nor are the metric dictionaries
that History prints over several lines.
"""

from __future__ import annotations

import re

from gputui.logs.base import NUM, Context, emit, is_metric_name, to_float
from gputui.stream.records import Record

NAME = "flower"
FIT = re.compile(r"\bfit progress: \((\d+), (" + NUM + r"), \{([^{}]*)\}, (" + NUM + r")\)\s*$")
INITIAL = re.compile(r"\binitial parameters \(loss, other metrics\): (" + NUM + r"), \{([^{}]*)\}\s*$")
FINISHED = re.compile(r"\bRun finished (\d+) round\(s\) in (" + NUM + r")s\s*$")
HISTORY = re.compile(r"\bHistory \((\w+), (distributed|centralized)\):\s*$")
HISTORY_ROUND = re.compile(r"^\s*round (\d+): (" + NUM + r")\s*$")
ENTRY = re.compile(r"['\"]([\w./-]+)['\"]: (" + NUM + r")(?=\s*(?:,|$))")
KEY = "flower_history"  # ctx.extra: the name of the History section being read ("" : not read)


def _entries(body: str) -> list[tuple[str, float]]:
    """The metrics of a printed dictionary, ``'cen_accuracy': 0.1011`` → (``cen_accuracy``, 0.1011)."""
    return [
        (name, v)
        for name, raw in ENTRY.findall(body)
        if is_metric_name(name) and (v := to_float(raw)) is not None
    ]


class FlowerParser:
    name = NAME

    #: The cheap pre-test of auto routing (:func:`gputui.logs.parser.route_auto`).
    PRETEST = (
        '"progress: (" in text or "metrics): " in text or "round(s)" in text or "History (" in text'
        ' or "flower_history" in ctx.extra'
    )

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        out: list[Record] = []
        if (m := FIT.search(text)) is not None:
            step = int(m.group(1))
            pairs = [
                ("loss", to_float(m.group(2))),
                *_entries(m.group(3)),
                ("elapsed_s", to_float(m.group(4))),
            ]
        elif (m := INITIAL.search(text)) is not None:
            step = 0
            pairs = [("loss", to_float(m.group(1))), *_entries(m.group(2))]
        elif (m := FINISHED.search(text)) is not None:
            ctx.extra.pop(KEY, None)
            emit(out, [("runtime_s", float(m.group(2)))], NAME, "summary", ctx, now, ctx.epoch, ctx.step)
            return out
        elif (m := HISTORY.search(text)) is not None:
            read = m.group(1) == "loss" and m.group(2) == "distributed"
            ctx.extra[KEY] = "distributed_loss" if read else ""
            return out
        elif KEY in ctx.extra and (m := HISTORY_ROUND.search(_message(text))) is not None:
            if ctx.extra[KEY]:
                step = int(m.group(1))
                emit(out, [(ctx.extra[KEY], float(m.group(2)))], NAME, "step", ctx, now, ctx.epoch, step)
            return out
        else:
            ctx.extra.pop(KEY, None)  # the History's round lines have ended
            return None
        ctx.step = step
        emit(out, [(n, v) for n, v in pairs if v is not None], NAME, "step", ctx, now, ctx.epoch, step)
        return out


def _message(text: str) -> str:
    """The text after Flower's level prefix (``INFO :      ``), where the log keeps it."""
    head, sep, rest = text.partition(" :")
    return rest if sep and head.strip().isupper() else text


PARSER = FlowerParser()
