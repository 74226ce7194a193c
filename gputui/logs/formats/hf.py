"""Hugging Face ``Trainer`` log dicts and ``epoch N: {...}`` dict lines (``docs/log-formats.md`` §4).

``{'loss': 0.6914, 'grad_norm': 3.36, 'learning_rate': 8.9e-06, 'epoch': 0.0}`` (older: floats) and
``{'loss': '0.6914', 'epoch': '0.5'}`` (newer: strings) are read as Python literals: the Trainer's
plain shape by a regex, anything else with ``ast.literal_eval`` (never ``eval``), with the same result.
The dict may sit anywhere in a frame: HF clears the stderr bar with ``\\r`` before it, and a
block-buffered stdout can splice it into the middle of a bar frame (``' 4{...}0%|███▉ | 395/1000'``).

A dict is a metric dict only when every value is a number (or a numeric string) and it has ``epoch``
or a loss / ``eval_*`` / ``train_*`` key, so pprinted dataset samples are ignored. ms-swift's dicts also
hold text (``'elapsed_time': '1m 60s'``, ``'global_step/max_steps': '1/294'``): text values are skipped
in a dict with ``epoch`` and ``loss`` (or an ``eval_*`` / ``train_*`` key), and ``global_step/max_steps``
gives the step.

- training dicts → scope ``step`` with the fractional ``epoch``;
- ``eval_*`` dicts → scope ``step`` too (Trainer evaluations are step-based), names ``val_*``;
- the end-of-training dict (``train_runtime`` …) → scope ``summary``;
- ``epoch 3: {'accuracy': 0.84, 'f1': 0.89}`` (Accelerate examples) → scope ``epoch`` for epoch 3.

A dict with a whole ``step`` (or ``global_step``) value is at that step. The Trainer prints no step: a
step dict gets the position of the training bar (the longest bar seen
on the stream, not the shorter evaluation bars) at the time it is read, so loss can be plotted against
the global step. With a block-buffered stdout the dict can be read a few steps after it was printed;
with no bar (``disable_tqdm``) it gets no step.
"""

from __future__ import annotations

import ast
import re

from gputui.logs.base import Context, emit
from gputui.stream.records import Record

NAME = "hf_trainer"
DICT = re.compile(r"\{'[A-Za-z_][\w./ -]*': [^{}]*\}")
EPOCH_PREFIX = re.compile(r"\bepoch\s*[:=]?\s*(\d+)\s*[:,-]?\s*$", re.IGNORECASE)
MAX_DICT = 8192
# The Trainer's own shape, read without ast: 'key': number or 'key': 'text', joined by ", ". Python
# literal syntax (ASCII digits, no leading zeros on ints); anything else goes to ast.literal_eval.
_KEY = r"'[^'\\\x00-\x1f]*'"
_VALUE = r"-?(?:(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)[eE][-+]?[0-9]+|[0-9]+\.[0-9]*|\.[0-9]+|0+|[1-9][0-9]*)"
_ITEM = _KEY + r": (?:" + _VALUE + r"|" + _KEY + r")"
SIMPLE_DICT = re.compile(r"\{" + _ITEM + r"(?:, " + _ITEM + r")*\}")
STEP_OF_MAX = re.compile(r"(\d+)/(\d+)$")
TRAINER = ("eval_", "train_")
ITEM = re.compile(r"'([^']*)': (?:'([^']*)'|([^,}]+))")


class HFParser:
    name = NAME

    #: The cheap pre-test of auto routing: a condition on ``text``, ``head`` (``text[:24]``) and ``ctx``
    #: that is False only where :meth:`parse` would say "not mine" (:func:`gputui.logs.parser.route_auto`).
    PRETEST = '"{\'" in text'

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        start = text.find("{'")
        if start < 0 or (not text.endswith("}") and "}" not in text[start:]):
            return None
        m = DICT.search(text, start)
        if m is None or len(m.group(0)) > MAX_DICT:
            return None
        obj = _literal_dict(m.group(0))
        if not isinstance(obj, dict) or not obj:
            return None
        values: dict[str, float] = {}
        texts: dict[str, str] = {}  # string values that are not numbers ('1m 60s', '294/294')
        for key, raw in obj.items():
            if isinstance(raw, bool) or not isinstance(key, str):
                return None
            if isinstance(raw, int | float):
                values[key] = float(raw)
            elif isinstance(raw, str):
                try:
                    values[key] = float(raw)
                except ValueError:
                    texts[key] = raw
            else:
                return None
        if texts and not ("epoch" in values and any(k == "loss" or k.startswith(TRAINER) for k in values)):
            return None  # text values are read only in a trainer's own dicts (ms-swift's), not in samples
        prefix = EPOCH_PREFIX.search(text[: m.start()])
        if prefix is not None:
            epoch = int(prefix.group(1))
            ctx.epoch = epoch
            return self._records(values, "epoch", epoch, ctx, now)
        keys = values.keys()
        if "epoch" not in keys and not any(
            k == "loss" or k.startswith(("eval_", "train_", "test_")) for k in keys
        ):
            return None
        epoch_value = values.pop("epoch", None)
        scope = "summary" if "train_runtime" in keys else "step"
        step = ctx.main_bar[0] if scope == "step" and ctx.main_bar is not None else None
        counter = STEP_OF_MAX.match(texts.get("global_step/max_steps", ""))
        if scope == "step" and counter is not None:
            step = int(counter.group(1))  # ms-swift states the step: 'global_step/max_steps': '1/294'
        elif scope == "step":
            step = _step_key(values, step)
        return self._records(values, scope, epoch_value, ctx, now, step)

    def _records(
        self,
        values: dict[str, float],
        scope: str,
        epoch: float | None,
        ctx: Context,
        now: float,
        step: int | None = None,
    ) -> list[Record]:
        out: list[Record] = []
        emit(out, values.items(), NAME, scope, ctx, now, epoch, step)
        return out


def _step_key(values: dict[str, float], step: int | None) -> int | None:
    """A dict that states its step (``{'loss': 2.1, 'step': 120}``, TRL and custom loops): that step,
    taken out of the values (it is a position, not a metric); else ``step`` (the bar's position)."""
    for key in ("step", "global_step"):
        value = values.get(key)
        if value is not None and value >= 0 and value == int(value):
            del values[key]
            return int(value)
    return step


def _literal_dict(text: str) -> object:
    """``ast.literal_eval(text)`` (``None`` where it fails), with a fast path for the Trainer's dicts."""
    if len(text) < 2048 and SIMPLE_DICT.fullmatch(text) is not None:
        obj: dict[str, object] = {}
        for key, string, number in ITEM.findall(text):
            if number:
                obj[key] = float(number) if ("." in number or "e" in number or "E" in number) else int(number)
            else:
                obj[key] = string
        return obj
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None


PARSER = HFParser()
