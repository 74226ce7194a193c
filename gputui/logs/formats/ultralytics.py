"""Ultralytics YOLO training output: the epoch table (``docs/log-formats.md``).

Shapes (YOLOv5, YOLOv8/11 with tqdm bars, Ultralytics 8.4 with its own bars):

- header ``      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size`` (YOLOv5:
  ``Epoch gpu_mem box obj cls labels img_size``): the names of the bar's columns. Seen once, it makes
  this parser read the stream's frames first (``KEY`` in the context);
- training bar frames, redrawn with ``\\r``: ``      3/40      2.1G      1.234 …  38   768: 100% ━━━━ 5/5
  5.2it/s 1.0s`` (8.4) or ``…  640: 100%|██████████| 8/8 [00:02<00:00,  3.07it/s]`` (tqdm). A running
  frame gives ``step`` values (one per printed second, as tqdm bars); the final frame (n = total) gives
  the epoch's losses and ``epoch_time_s`` (its elapsed field: training only, not validation), GPU
  memory (``gpu_mem_gb``: ``14.5G``) and instances; the image size is a setting. The bar's position
  counts for the outcome;
- validation header ``Class Images Instances Box(P R mAP50 mAP50-95): 100% …`` (``box_p``,
  ``box_map50`` …; ``Mask(…)`` columns ``mask_p`` …, classification ``classes top1_acc top5_acc``) and
  its ``all`` row: the row right after an epoch's final frame joins that epoch; other ``all`` rows
  (an evaluation outside the loop: the final validation of ``best.pt``) are ``summary`` values;
- ``40 epochs completed in 0.012 hours.``: training ended, later lines belong to no epoch (the
  outcome reads it as the run's end message, :mod:`gputui.logs.outcome`).

``engine/trainer: agnostic_nms=False, …, batch=16, …`` (the settings) is a settings dump for the generic
parser: no metrics.
"""

from __future__ import annotations

import re

from gputui.logs.base import Context, clock_seconds, emit, is_metric_name, to_float
from gputui.stream.records import Record

NAME = "ultralytics"
KEY = "ultralytics"  # ctx.extra: the bar's column names (a header was seen on this stream)
VAL = "ultralytics_val"  # ctx.extra: (column names) of the latest validation header
PENDING = "ultralytics_epoch"  # ctx.extra: the epoch whose validation row comes next
NOT_COLUMNS = frozenset({"size", "img_size", "images", "class", "classes"})  # constants, names
MEMORY_COLUMNS = frozenset({"gpu_mem"})  # "14.5G": gigabytes (torch.cuda.memory_reserved() / 1E9)
BAR = re.compile(r"^\s*(\d+)/(\d+)\s+([^:]*):\s*(\d{1,3})%(.*?)\s(\d+)/(\d+)(?=\s|$)(.*)$")
BAR_POSITION = re.compile(r"\s(\d+)/(\d+)(?=\s|$)")
TQDM_ELAPSED = re.compile(r"^\s*\[(\d+(?::\d\d)+)")
ELAPSED = re.compile(r"\s(\d+(?:\.\d+)?s|\d+(?::\d\d)+)(?:<\S*)?\s*$")  # 8.4: "1.0s", "3:40<38:10"
VAL_BAR = re.compile(r":\s+\d{1,3}%")
ROW = re.compile(r"^\s*all\s+([-+\d.eE\s]+)$")
DONE = re.compile(r"^\s*\d+ epochs? completed in ")


def _elapsed(rest: str) -> float | None:
    m = TQDM_ELAPSED.match(rest)
    if m is not None:
        return clock_seconds(m.group(1))
    m = ELAPSED.search(rest)
    if m is None:
        return None
    word = m.group(1)
    return to_float(word[:-1]) if word.endswith("s") else clock_seconds(word)


def _header(text: str) -> tuple[str | None, ...] | None:
    """The bar's column names after ``N/M`` (``None`` for columns that are not metrics)."""
    words = text.split()
    if len(words) < 3 or words[0] != "Epoch" or words[1].lower() != "gpu_mem":
        return None
    names = []
    for word in words[1:]:
        low = word.lower()
        if low in MEMORY_COLUMNS:
            names.append(low + "_gb")
        else:
            names.append(None if low in NOT_COLUMNS or not is_metric_name(word) else word)
    return tuple(names)


def _val_header(text: str) -> tuple[str, ...] | None:
    """``Class Images Instances Box(P R mAP50 mAP50-95) Mask(P …)`` → ``P R mAP50 mAP50-95 mask_P …``."""
    bar = VAL_BAR.search(text)
    words = (text[: bar.start()] if bar is not None else text).split()
    if not words or words[0] not in ("Class", "classes"):
        return None
    names: list[str] = []
    group = ""
    for word in words[1:]:
        if word in ("Images", "Instances", "Labels"):
            continue
        if "(" in word:
            head, word = word.split("(", 1)
            group = head.lower() + "_" if head else ""
        names.append(group + word.rstrip(")"))
    return tuple(names)


class UltralyticsParser:
    name = NAME

    #: The cheap pre-test of auto routing: a condition on ``text``, ``head`` (``text[:24]``) and ``ctx``
    #: that is False only where :meth:`parse` would say "not mine" (:func:`gputui.logs.parser.route_auto`).
    PRETEST = f'{KEY!r} in ctx.extra or ("Epoch " in head and "_mem" in text)'

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        columns = ctx.extra.get(KEY)
        if columns is not None:
            m = BAR.match(text)
            if m is not None:
                return self._bar(m, columns, ctx, now)
            head = text[:40]
            if "all " in head:
                return self._row(text, ctx, now)
            if "Class" in head or "classes" in head:
                return self._validation(text, ctx)
            if "epochs completed in" in text and DONE.match(text):
                ctx.epoch = None  # training ended: later prose (a final evaluation) joins no epoch
                ctx.extra.pop(PENDING, None)
                return []
        if "Epoch " in text[:24] and "_mem" in text:
            header = _header(text)
            if header is not None:
                ctx.extra[KEY] = header
                return []
        return None

    def _bar(self, m: re.Match[str], columns: tuple, ctx: Context, now: float) -> list[Record]:
        epoch, n, total = int(m.group(1)), int(m.group(6)), int(m.group(7))
        ctx.last_progress = (n, total)
        ctx.epoch = epoch
        values = m.group(3).split()
        pairs = []
        if len(values) == len(columns):
            for name, value in zip(columns, values, strict=True):
                number = None if name is None else to_float(value.removesuffix("G"))
                if number is not None:
                    pairs.append((name, number))
        elapsed = _elapsed(m.group(8))
        out: list[Record] = []
        if total > 0 and n == total:
            emit(out, pairs, NAME, "epoch", ctx, now, epoch, n)
            if elapsed is not None:
                extra = {"steps": total}
                emit(out, (("epoch_time_s", elapsed),), NAME, "epoch", ctx, now, epoch, n, None, extra)
            ctx.extra[PENDING] = epoch
            return out
        if ctx.extra.get(PENDING, epoch) != epoch:
            del ctx.extra[PENDING]  # a new epoch without a validation row (val=False)
        clock = None if elapsed is None else (NAME, epoch, int(elapsed))
        if clock is not None and clock == ctx.bar_clock:
            return out  # same bar, same printed second: thinned (docs/log-formats.md)
        emit(out, pairs, NAME, "step", ctx, now, epoch, n)
        if out:
            ctx.bar_clock = clock
        return out

    def _validation(self, text: str, ctx: Context) -> list[Record] | None:
        names = _val_header(text)
        if names is None:
            return None
        ctx.extra[VAL] = names
        bar = BAR_POSITION.search(text)
        if bar is not None:
            ctx.last_progress = (int(bar.group(1)), int(bar.group(2)))
        return []

    def _row(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        m = ROW.match(text)
        if m is None:
            return None
        epoch = ctx.extra.pop(PENDING, None)
        names = ctx.extra.get(VAL)
        if not names:
            return []
        values = m.group(1).split()
        if len(values) < len(names):
            return []
        pairs = []
        for name, value in zip(names, values[len(values) - len(names) :], strict=True):
            number = to_float(value)
            if number is not None:
                pairs.append((name, number))
        out: list[Record] = []
        if epoch is None:  # an evaluation outside the training loop (the final one of best.pt)
            emit(out, pairs, NAME, "summary", ctx, now)
        else:
            emit(out, pairs, NAME, "epoch", ctx, now, epoch)
        return out


PARSER = UltralyticsParser()
