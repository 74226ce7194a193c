"""fairseq's JSON log lines (``--log-format json``, also under ``fairseq-hydra-train``).

Each line is a logger tag and a JSON dict whose values are strings, after a log prefix:
``[2022-06-06 09:18:44,886][train_inner][INFO] - {"epoch": 1, "update": 0.252, "loss": "0.264", …}``
(hydra) or ``2022-06-06 09:18:44 | INFO | train_inner | {"epoch": 1, …}`` (``fairseq-train``).

- ``train_inner``: every ``log_interval`` updates → scope ``step`` (step = ``num_updates``);
- a validation subset (``valid``, ``test``, …; keys ``valid_loss``, …) → scope ``step`` at its
  ``valid_num_updates``, and kept: the epoch's row takes the validation run at the epoch's end (its
  updates equal the epoch's ``train_num_updates``; mid-epoch validations, ``--save-interval-updates``,
  are not it);
- ``train`` (printed after ``end of epoch N (average epoch stats below)``) → scope ``epoch`` for epoch N,
  with that validation's values;
- fairseq's own messages (loggers ``fairseq.*``, ``fairseq_cli.*``: ``begin training epoch 2``,
  checkpoint messages, ``grouped total_num_itrs = 794``) give nothing, and prose printed between the
  dicts (a user's ``SENSE: 0.38`` at validation) joins no epoch: the epoch those messages name is not a
  context for prose values.

Names: the subset's prefix is replaced (``train_loss`` → ``loss``, ``valid_loss`` → ``val_loss``);
fairseq's ``train_wall`` (time spent in training steps) is ``step_wall`` so that it does not meet
``wall`` (the cumulative clock) under the alias table's ``train_`` rule.
"""

from __future__ import annotations

import re
from typing import Any

from gputui.logs.base import Context, emit, to_float
from gputui.stream.io import loads_json
from gputui.stream.records import Record

NAME = "fairseq"
OPEN = '{"epoch": '
TAG = re.compile(r"(?:\[([\w.]+)\]\[[A-Z]+\] - |\| [A-Z]+ \| ([\w.]+) \| )$")
#: fairseq's own log lines (``begin training epoch 2``, ``end of epoch 1 …``, checkpoint messages,
#: ``grouped total_num_itrs = 794``): its metrics are in the dicts, these give nothing (nor an epoch for
#: the prose a user's code prints at validation, ``SENSE: 0.38``)
OWN = re.compile(r"\]\[fairseq[\w.]*\]\[[A-Z]+\] - |\| [A-Z]+ \| fairseq[\w.]* \| ")
VALID = "fairseq_valid"  # ctx.extra: subset → (epoch, num_updates, pairs) of its latest validation dict
RENAME = {"train_wall": "step_wall"}
NOT_STATS = frozenset({"epoch", "update"})


def _stats(obj: dict[str, Any], prefix: str) -> dict[str, float]:
    """Numeric stats without the subset prefix (``valid_loss`` → ``loss``)."""
    out: dict[str, float] = {}
    for key, raw in obj.items():
        if key in NOT_STATS or isinstance(raw, bool):
            continue
        if isinstance(raw, str):
            value = to_float(raw)
        else:
            value = float(raw) if isinstance(raw, int | float) else None
        if value is None:
            continue
        if prefix and key.startswith(prefix):
            key = key[len(prefix) :]
        out[RENAME.get(key, key)] = value
    return out


class FairseqParser:
    name = NAME

    #: The cheap pre-test of auto routing: a condition on ``text``, ``head`` (``text[:24]``) and ``ctx``
    #: that is False only where :meth:`parse` would say "not mine" (:func:`gputui.logs.parser.route_auto`).
    PRETEST = f'{OPEN!r} in text or "fairseq" in text'

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        start = text.find(OPEN)
        if start < 0:
            return [] if OWN.search(text) is not None else None
        if not text.endswith("}"):
            return None
        tag = TAG.search(text, 0, start)
        if tag is None or tag.end() != start:
            return None
        try:
            obj = loads_json(text[start:])
        except ValueError:  # not JSON, or nested deeper than a record
            return None
        epoch = obj.get("epoch") if isinstance(obj, dict) else None
        if not isinstance(epoch, int):
            return None
        subset = tag.group(1) or tag.group(2)
        out: list[Record] = []
        ctx.epoch = None  # the dicts state their epoch; prose printed between them joins none
        if subset == "train_inner":
            stats = _stats(obj, "")
            updates = stats.pop("num_updates", None)
            step = int(updates) if updates is not None else None
            emit(out, stats.items(), NAME, "step", ctx, now, epoch, step)
            return out
        if subset == "train":
            stats = _stats(obj, "train_")
            updates = stats.get("num_updates")
            pairs = list(stats.items())
            for valid_epoch, valid_updates, valid_pairs in ctx.extra.pop(VALID, {}).values():
                if valid_epoch == epoch and (updates is None or valid_updates in (None, updates)):
                    pairs += valid_pairs
            step = int(updates) if updates is not None else None
            emit(out, pairs, NAME, "epoch", ctx, now, epoch, step)
            return out
        prefix = subset + "_"
        stats = _stats(obj, prefix)
        updates = stats.get("num_updates")
        pairs = [(prefix + key, value) for key, value in stats.items()]  # the alias table: valid_* → val_*
        ctx.extra.setdefault(VALID, {})[subset] = (epoch, updates, pairs)
        step = int(updates) if updates is not None else None
        emit(out, pairs, NAME, "step", ctx, now, epoch, step)
        return out


PARSER = FairseqParser()
