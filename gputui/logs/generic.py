"""Generic ``name: value`` / ``name = value`` lines of hand-written training loops (the fallback).

The line must name an epoch or a step, or follow one that did; nothing else is turned into metrics, so
setup output (``MASTER_PORT=12802``, ``world_size: 4``) gives no records. Rules:

- epoch anchor ``epoch 3``, ``Epoch: 3``, ``epoch=3``, ``Epoch [3/10]``, ``epoch3``; step anchor
  ``step 120``, ``iter: 25/448``, ``[Step 80/100]``, ``batch 7``, ``global_step=3``;
- pairs ``label: number`` / ``label = number`` (labels of up to nine words, ``GPU Mem (GB)`` →
  ``gpu_mem_gb``); a value followed by ``%`` gets ``_pct``; tab-separated ``Label number`` segments
  (``Training Loss 1.3883 \\tValidation Loss 1.0350``) when every segment has that shape;
- step anchor → scope ``step``; epoch anchor and pairs → scope ``epoch`` (a time-like pair,
  ``Time Taken: 214.6 sec``, becomes ``epoch_time_s``); epoch anchor alone → a header: the next line,
  if it only holds pairs, is that epoch's summary (``Results - Epoch: 1`` + body); pairs alone →
  scope ``context`` for the most recent epoch named;
- identifiers and settings (``rank``, ``SLURM_JOB_ID``, ``CUDA Device ID``) are never metrics;
- a leading ``YYYY-MM-DD HH:MM:SS`` timestamp becomes the record time (``time_source="printed"``);
  log prefixes (``[INFO]``, ``[timer.py:264:stop]``, glog ``I0101 …] ``) are skipped.
"""

from __future__ import annotations

import re
import time as _time

from gputui.logs.base import NUM, Context, is_metric_name, metric, snake, to_float
from gputui.records import Record

NAME = "generic"
EPOCH = re.compile(r"(?<![A-Za-z_])epoch(?![A-Za-z_])\s*[:#=]?\s*\[?\s*(\d+)(?!\.\d)", re.IGNORECASE)
STEP = re.compile(
    r"(?<![A-Za-z_])(?:global_step|step|iter|iteration|batch)(?![A-Za-z_])\s*[:#=]?\s*\[?\s*(\d+)(?!\.\d)",
    re.IGNORECASE,
)
WORD = r"[A-Za-z][\w./@-]*"
PAIR = re.compile(
    r"(?<![\w.@/-])("
    + WORD
    + r"(?: [\w(][\w./@()]*){0,8}?)\s*[:=]\s*("
    + NUM
    + r")(\s*%|(?:ms|s|sec|secs|min)(?!\w))?(?![\w./:]|,\d)",
    re.IGNORECASE,
)
UNIT = re.compile(r"\s*(ms|s|sec|secs|seconds|min|mins|minutes)\b", re.IGNORECASE)
TAB_SEGMENT = re.compile(r"^\s*([A-Za-z][\w ./@()-]*?)\s+(" + NUM + r")\s*$", re.IGNORECASE)
PREFIX = re.compile(
    r"^(?:\s*\[(?:\d{4}-\d\d-\d\d[^\]]*|[A-Z]+|[\w.-]+\.(?:py|cc|cpp|c|h):\d+[^\]]*|\d\d:\d\d:\d\d[^\]]*)\]"
    r"|\s*[IWEF]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\]"
    r"|\s*\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?: - [\w.]+)?(?: - [A-Z]+)?(?: -)?)+"
)
STAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?")
TIME_NAMES = frozenset(
    {"time", "time_taken", "elapsed", "elapsed_time", "time_elapsed", "duration", "took", "epoch_time"}
)
SCALE = {"ms": 0.001, "min": 60.0, "mins": 60.0, "minutes": 60.0}
SPLIT = re.compile(
    r"^\W*(train|training|val|valid|validation|eval|evaluation|evaluating|test|testing)\b", re.I
)
SPLIT_PREFIX = {"train": "", "training": "", "test": "test_", "testing": "test_"}
KNOWN_SPLITS = ("train", "val", "valid", "eval", "test")
FILE_REF = re.compile(r"\.(?:py|pyx|cc|cpp|cxx|c|h|hpp|cu|so|rs|js|go|java|sh|yaml|json)$")


def _stamp(prefix: str) -> float | None:
    m = STAMP.search(prefix)
    if m is None:
        return None
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac = float("0." + m.group(7)) if m.group(7) else 0.0
    try:
        return _time.mktime((y, mo, d, h, mi, s, 0, 0, -1)) + frac
    except (OverflowError, ValueError):
        return None


def pairs_of(text: str) -> list[tuple[str, float, str]]:
    """``(name, value, text after the value)`` for each metric pair in ``text``."""
    out = []
    for m in PAIR.finditer(text):
        label = m.group(1)
        if not is_metric_name(label):
            continue
        value = to_float(m.group(2))
        if value is None:
            continue
        name = snake(label) + ("_pct" if m.group(3) and "%" in m.group(3) else "")
        if FILE_REF.search(name):
            continue
        out.append((name, value, text[m.end(2) : m.end(2) + 12]))
    if out or "\t" not in text:
        return out
    segments = [s for s in text.split("\t") if s.strip()]
    if len(segments) < 2:
        return []
    for segment in segments:
        sm = TAB_SEGMENT.match(segment)
        if sm is None or not is_metric_name(sm.group(1)):
            return []
        value = to_float(sm.group(2))
        if value is None:
            return []
        out.append((snake(sm.group(1)), value, ""))
    return out


class GenericParser:
    name = NAME

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        if "NCCL" in text or len(text) > 4096:
            return None
        pm = PREFIX.match(text)
        printed = None
        if pm is not None and pm.end():
            printed = _stamp(pm.group(0))
            text = text[pm.end() :]
        em = EPOCH.search(text)
        sm = STEP.search(text)
        pairs = pairs_of(text) if (":" in text or "=" in text or "\t" in text) else []
        if pairs:
            split = SPLIT.match(text)
            if split is not None:
                prefix = SPLIT_PREFIX.get(split.group(1).lower(), "val_")
                pairs = [(n if n.startswith(KNOWN_SPLITS) else prefix + n, v, a) for n, v, a in pairs]
        if em is None and sm is None:
            if not pairs:
                return None
            if ctx.header_epoch is not None and ctx.header_frame == ctx.frames - 1 and len(pairs) > 1:
                return self._emit(pairs, "epoch", ctx.header_epoch, None, ctx, now, printed, anchored=False)
            if ctx.epoch is None:
                return None
            return self._emit(pairs, "context", ctx.epoch, None, ctx, now, printed, anchored=False)
        epoch = int(em.group(1)) if em is not None else None
        if epoch is not None:
            ctx.epoch = epoch
        if sm is not None:
            return self._emit(pairs, "step", epoch, int(sm.group(1)), ctx, now, printed, anchored=False)
        if not pairs:
            ctx.header_epoch, ctx.header_frame = epoch, ctx.frames
            return []
        return self._emit(pairs, "epoch", epoch, None, ctx, now, printed, anchored=True)

    def _emit(
        self,
        pairs: list[tuple[str, float, str]],
        scope: str,
        epoch: int | None,
        step: int | None,
        ctx: Context,
        now: float,
        printed: float | None,
        anchored: bool,
    ) -> list[Record]:
        out = []
        for name, value, after in pairs:
            if anchored and name in TIME_NAMES:
                unit = UNIT.match(after)
                factor = SCALE.get(unit.group(1).lower(), 1.0) if unit else 1.0
                name, value = "epoch_time_s", value * factor
            rec = metric(
                name, value, source=NAME, scope=scope, ctx=ctx, now=now, epoch=epoch, step=step, time=printed
            )
            if rec is not None:
                out.append(rec)
        return out


PARSER = GenericParser()
