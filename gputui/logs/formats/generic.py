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

Speed: where a line's prefix, anchors and pairs are depends only on its *shape* (digits read as 0), so
it is worked out once per shape and stream (:func:`plan_of`, a bounded cache in the context); a line
of a known shape is then sliced, not searched. The same line printed every step costs one lookup.
"""

from __future__ import annotations

import re
import time as _time

from gputui.logs.base import NUM, Context, emit, is_metric_name, snake, to_float
from gputui.logs.bounded import DIGITS, remember
from gputui.stream.records import Record

NAME = "generic"
# the number is whole (not "35" of "epoch 3.5") and no file name ("epoch30.pt", "epoch_5.pth")
EPOCH = re.compile(
    r"(?<![A-Za-z_])(?<!per )epoch(?![A-Za-z_])\s*[:#=]?\s*\[?\s*(\d+)(?!\d|\.\d|\.[A-Za-z])", re.IGNORECASE
)
STEP = re.compile(
    r"(?<![A-Za-z_])(?:global_step|step|iter|iteration|batch)(?![A-Za-z_])\s*[:#=]?\s*\[?\s*(\d+)(?!\.\d)",
    re.IGNORECASE,
)
WORD = r"[A-Za-z][\w./@-]*(?:\([A-Za-z]\w{0,7}\))?"  # "metrics/precision(B)": a short tag in ()
PAIR = re.compile(
    r"(?<![\w.@/-])("
    + WORD
    + r"(?: [\w(][\w./@()]*){0,8}?)\s*[:=]\s*("
    + NUM
    + r")(\s*%|(?:ms|s|sec|secs|min)(?!\w)|[KMGT]i?B(?![\w.])|[kKMB](?![\w.]))?(?![\w./:]|,\d)",
    re.IGNORECASE,
)
UNIT = re.compile(r"\s*(ms|s|sec|secs|seconds|min|mins|minutes)\b", re.IGNORECASE)
MEMORY_UNIT = re.compile(r"\s?([KMGT]i?B)(?![\w.])")
TAB_SEGMENT = re.compile(r"^\s*([A-Za-z][\w ./@()-]*?)\s+(" + NUM + r")\s*$", re.IGNORECASE)
PREFIX = re.compile(
    r"^(?:\s*\[(?:\d{4}-\d\d-\d\d[^\]]*|[A-Z]+|[\w.-]+\.(?:py|cc|cpp|c|h):\d+[^\]]*|\d\d:\d\d:\d\d[^\]]*)\]"
    r"|\s*[IWEF]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\]"
    r"|\s*\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?: - [\w.]+(?= - ))?(?: - [A-Z]+\b)?(?: -)?"
    r"|\s*(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:"  # python logging's default "INFO:root:"
    r"|\s*\(\w+ pid=\d+(?:, ip=[\d.]+)?\))+"  # Ray's "(TaskRunner pid=4242)"
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
HEADER_BLOCK = 8  # the lines after an epoch's header that may hold its values ("Epoch 3" then "loss: 0.5")
FILE_REF = re.compile(r"\.(?:py|pyx|cc|cpp|cxx|c|h|hpp|cu|so|rs|js|go|java|sh|yaml|json)$")


_SECONDS: dict[tuple[str, ...], float | None] = {}  # "YYYY-MM-DD HH:MM:SS" → local time (lines share seconds)
MAX_SECONDS = 256


def stamp(prefix: str) -> float | None:
    m = STAMP.search(prefix)
    if m is None:
        return None
    frac = float("0." + m.group(7)) if m.group(7) else 0.0
    key = m.group(1, 2, 3, 4, 5, 6)
    seconds = _SECONDS.get(key, False)
    if seconds is False:
        y, mo, d, h, mi, s = (int(part) for part in key)
        try:
            seconds = _time.mktime((y, mo, d, h, mi, s, 0, 0, -1))
        except (OverflowError, ValueError):
            seconds = None
        remember(_SECONDS, key, seconds, MAX_SECONDS)
    return None if seconds is None else seconds + frac


def _pair_spans(text: str) -> list[tuple[int, int, int, int, bool, int]]:
    """Where the metric pairs of ``text`` are: ``(label start, label end, value start, value end, %,
    length of the text after the value that may hold its unit)``."""
    out = []
    if SEP_NUM.search(text) is not None:  # no "name: 0.5" anywhere: PAIR cannot match
        for m in PAIR.finditer(text):
            label = m.group(1)
            if not is_metric_name(label):
                continue
            pct = bool(m.group(3)) and "%" in m.group(3)
            if FILE_REF.search(snake(label) + ("_pct" if pct else "")):
                continue
            out.append((m.start(1), m.end(1), m.start(2), m.end(2), pct, 12))
    if out or "\t" not in text:
        return out
    at = 0
    for segment in text.split("\t"):
        start, at = at, at + len(segment) + 1
        if not segment.strip():
            continue
        sm = TAB_SEGMENT.match(segment)
        if sm is None or not is_metric_name(sm.group(1)):
            return []
        out.append((start + sm.start(1), start + sm.end(1), start + sm.start(2), start + sm.end(2), False, 0))
    return out if len(out) >= 2 else []


MODULE_PRINTOUT = re.compile(
    r"^\s*(?:\(\w+\):\s*)?[A-Z]\w*\((?:\w+=|\d+,|\))|\(\w+\): [A-Z]\w*\(|Namespace\("  # any log prefix before
)
#: A settings dump has three or more ``name=True/False/None`` (Ultralytics ``engine/trainer:
#: agnostic_nms=False, amp=True, angle=1.0, …, batch=16``): its numbers are settings, not metrics.
SETTING = re.compile(r"[=:] ?(?:True|False|None)\b")


SPACED = re.compile(
    r"(?:^|(?<=\s)|(?<=[|,;]))\s*([A-Za-z][\w./@-]*)\s+("
    + NUM
    + r")(\s*%|(?:ms|s|sec|min)(?!\w))?(?=\s*$|\s{2,}|\s*[|,;]|\t)",
    re.IGNORECASE,
)
RANK_MARK = re.compile(r"\[rank (\d{1,5})\]")
SPACED_SKIP = frozenset({"of", "in", "at", "on", "to", "for", "from", "with", "by", "per", "and", "or", "is"})
BRACKETS = re.compile(r"\[[^\]]*\]|\([^)]*\)")


def _spaced_spans(body: str, after: int) -> list[tuple[int, int, int, int, bool, int]]:
    """``name value`` pairs separated by two spaces, ``|``, ``,`` or ``;`` after an epoch or step anchor
    (``Epoch 3: loss 1.2e-01  acc 93.1%``); bracketed parts (``[rank 0]``) are not read. Every segment
    must be such a pair, or none counts (a sentence after an anchor is not a list of metrics)."""
    rest = BRACKETS.sub(lambda m: " " * len(m.group()), body[after:])
    rest = rest.lstrip(" :-|,;)]")
    offset = len(body) - len(rest)
    if not rest.strip():
        return []
    out = []
    covered = 0
    for m in SPACED.finditer(rest):
        label = m.group(1)
        if label.lower() in SPACED_SKIP or not is_metric_name(label) or FILE_REF.search(label):
            return []
        gap = rest[covered : m.start(1)]
        if gap.strip(" |,;\t"):
            return []  # words between pairs: not a list of metrics
        pct = bool(m.group(3)) and "%" in m.group(3)
        out.append((offset + m.start(1), offset + m.end(1), offset + m.start(2), offset + m.end(2), pct, 12))
        covered = m.end(3) if m.group(3) else m.end(2)
    if rest[covered:].strip(" |,;\t"):
        return []
    return out


def _after_anchor(span: tuple, anchors: list[int], body: str) -> tuple:
    """A pair whose label runs over an anchor's number starts after it (skipping ``:``, ``,``, ``]``)."""
    label_start, label_end = span[0], span[1]
    for end in anchors:
        if label_start < end <= label_end:
            start = end
            if body[start : start + 1] in COUNT_SUFFIX and not body[start + 1 : start + 2].isalnum():
                start += 1  # "step 12k loss=0.5": the anchor's abbreviation, not the label's first word
            while start < label_end and not body[start].isalpha():
                start += 1
            if start < label_end:
                label_start = start
    return (label_start, *span[1:])


def _named(name: str, split: str | None) -> str:
    return name if split is None or name.startswith(KNOWN_SPLITS) else split + name


#: Where a line's parts are: (prefix length, epoch anchor span, step anchor span, pairs, split prefix);
#: a pair is (name, or None when its label has digits, label span, value span, after length).
Plan = tuple[int, "tuple[int, int] | None", "tuple[int, int] | None", list, "str | None"]


SENTENCE_END = re.compile(r"(?<=[a-z]{4})\.\s+(?=[A-Z])|\((?=[A-Za-z][^)]*$)")


def _clause(label: str) -> int:
    """Where a label's last clause starts: ``Training finished. Total time`` → ``Total time``, ``New best
    model saved (Dice`` → ``Dice`` (as :func:`gputui.logs.labels.label_of`)."""
    cut = 0
    for m in SENTENCE_END.finditer(label):
        cut = m.end()
    return cut


def plan_of(text: str) -> Plan:
    """Where a line's log prefix, anchors and pairs are. It depends only on the line's *shape* (the
    line with its digits 1-9 read as 0): every pattern here treats all digits alike, and the names, the
    prefix and the anchors' positions do not change with them. So it is computed once per shape.
    On ASCII text (case-insensitive matching is then plain lower-casing) absent words skip patterns."""
    pm = PREFIX.match(text)
    start = pm.end() if pm is not None else 0
    body = text[start:] if start else text
    low = body.lower() if body.isascii() else None
    em = EPOCH.search(body) if low is None or "epoch" in low else None
    sm = STEP.search(body) if low is None or "step" in low or "iter" in low or "batch" in low else None
    spans = _pair_spans(body) if (":" in body or "=" in body or "\t" in body) else []
    if spans and (MODULE_PRINTOUT.search(body) or len(SETTING.findall(body)) >= 3):
        spans = []  # "(fc1): Linear(in_features=128, ...)", "Dropout(p=0.25)": a model; settings
    anchors = [a.end(1) for a in (em, sm) if a is not None]
    if anchors and spans:  # Flax's "train epoch: 1, loss: 0.2": a pair whose value is an anchor is it
        spans = [span for span in spans if span[3] not in anchors]
    if anchors and spans:  # "epoch 1 loss=0.5": the label is "loss", not "epoch 1 loss"
        spans = [_after_anchor(span, anchors, body) for span in spans]
    if anchors and not spans:  # "epoch 3 [rank 0]: loss 0.1234  accuracy 0.95" (gputui's trainers)
        spans = _spaced_spans(body, max(anchors))
    split = SPLIT.match(body) if spans else None
    prefix = SPLIT_PREFIX.get(split.group(1).lower(), "val_") if split is not None else None
    pairs = []
    for label_start, label_end, value_start, value_end, pct, after in spans:
        label_start += _clause(body[label_start:label_end])
        label = body[label_start:label_end]
        name = None
        if not any(c.isdigit() for c in label):
            name = _named(snake(label) + "_pct" if pct else snake(label), prefix)
            memory = MEMORY_UNIT.match(body, value_end)
            if memory is not None:  # "MemAllocated=13.69GB": memallocated_gb
                name = f"{name}_{memory.group(1).lower()}"
        pairs.append((name, label_start, label_end, value_start, value_end, pct, after))
    return start, em and em.span(1), sm and sm.span(1), pairs, prefix


COUNT_SUFFIX = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9}
COUNT_WORDS = ("samples", "tokens", "images", "examples", "sequences")
# a count printed before its name on a line with an epoch or step anchor: "1.2M samples", "512 images"
COUNTED = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)([kKMB]?)\s+(" + "|".join(COUNT_WORDS) + r")\b")


def counted_pairs(body: str, pairs: list[tuple[str, float, str]]) -> list[tuple[str, float, str]]:
    """``1.2M samples`` → ``("samples", 1200000.0, "")``, for count words no name-value pair names."""
    named = {name for name, _, _ in pairs}
    out = []
    for m in COUNTED.finditer(body):
        if m.group(3) not in named:
            named.add(m.group(3))
            out.append((m.group(3), float(m.group(1)) * COUNT_SUFFIX.get(m.group(2), 1.0), ""))
    return out


#: After a value: prose goes on (``4 rank(s) on 2 node(s)``), unless it is a unit or the next label.
PROSE_AFTER = re.compile(r"\s+[A-Za-z(]")
UNIT_AFTER = re.compile(
    r"\s*(?:ms|s|sec|secs|seconds|min|mins|minutes|h|hours|[kKMGT]i?B|"
    r"(?:img|images|samples|tokens|tok|it|steps|ex|examples|seq)/s(?:ec)?)\b"
)


def _prose_follows(body: str, value_end: int) -> bool:
    """Whether the value is a word in a sentence: more words follow it and no label comes within them."""
    rest = body[value_end : value_end + 24]
    if PROSE_AFTER.match(rest) is None or UNIT_AFTER.match(rest) is not None:
        return False
    return not any(c in rest for c in ":=|\t") and "," not in rest[:2]


def pairs_of(body: str, plan: Plan) -> list[tuple[str, float, str]]:
    """``(name, value, text after the value)`` of each pair of a line (``plan`` from :func:`plan_of`)."""
    out = []
    for name, label_start, label_end, value_start, value_end, pct, after in plan[3]:
        joint = body[label_end:value_start]
        if not pct and ("=" in joint or ":" in joint) and _prose_follows(body, value_end):
            continue
        value = to_float(body[value_start:value_end])
        if value is not None and body[value_end : value_end + 1] in COUNT_SUFFIX:
            suffix_end = value_end + 1
            if suffix_end >= len(body) or not (body[suffix_end].isalnum() or body[suffix_end] == "."):
                value *= COUNT_SUFFIX[body[value_end]]  # "tokens: 1.2M", "step:12K" abbreviated counts
        if value is None:
            continue
        if name is None:
            name = snake(body[label_start:label_end])
            name = _named(name + "_pct" if pct else name, plan[4])
        out.append((name, value, body[value_end : value_end + after] if after else ""))
    return out


MAX_PLANS = 256  # shapes kept per stream
MAX_PLANNED = 1024  # longer lines are planned each time
SEP_NUM = re.compile(r"[:=]\s*[-+]?(?:\.?\d|nan|inf)", re.IGNORECASE)  # where PAIR may match


class GenericParser:
    name = NAME

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        if "NCCL" in text or len(text) > 4096:
            return None
        if len(text) > MAX_PLANNED:
            plan = plan_of(text)
        else:
            plans = ctx.plans
            shape = text.encode().translate(DIGITS)
            plan = plans.get(shape)
            if plan is None:
                plan = remember(plans, shape, plan_of(text), MAX_PLANS)
        return self.parse_planned(text, plan, ctx, now)

    def parse_planned(self, text: str, plan: Plan, ctx: Context, now: float) -> list[Record] | None:
        """The records of a line whose plan (:func:`plan_of`) is known: slices, no searching."""
        start, em, sm, spans, _ = plan
        head = ""  # the log prefix: its timestamp is read only for lines that give records
        if start:
            head = text[:start]
            text = text[start:]
        pairs = pairs_of(text, plan) if spans else []
        if (em is not None or sm is not None) and any(word in text for word in COUNT_WORDS):
            pairs += counted_pairs(text, pairs)
        if em is None and sm is None:
            if not pairs:
                return None
            if ctx.header_epoch is not None and ctx.header_frame == ctx.frames - 1 and len(pairs) > 1:
                return self._emit(pairs, "epoch", ctx.header_epoch, None, ctx, now, head, anchored=False)
            near_header = ctx.header_frame >= ctx.frames - HEADER_BLOCK
            if (
                ctx.epoch is None
                or not (ctx.trained or near_header)
                or (len(spans) == 1 and text[: spans[0][1]].endswith("  "))
            ):
                return None  # before any value was read; an indented "  weight_decay: 0.05" is a setting
            records = self._emit(pairs, "context", ctx.epoch, None, ctx, now, head, anchored=False)
            if not ctx.trained:  # "**** EPOCH 000 ****" then "Current learning rate: 0.01": not yet run
                ctx.held += records
                return []
            return records
        epoch = int(text[em[0] : em[1]]) if em is not None else None
        if epoch is not None:
            ctx.epoch = epoch
        if sm is not None:
            step = int(text[sm[0] : sm[1]])
            suffix = text[sm[1] : sm[1] + 2]
            if suffix[:1] in COUNT_SUFFIX and (len(suffix) == 1 or not suffix[1].isalnum()):
                step = int(step * COUNT_SUFFIX[suffix[0]])
            return self._emit(pairs, "step", epoch, step, ctx, now, head, anchored=False)
        if not pairs:
            ctx.header_epoch, ctx.header_frame = epoch, ctx.frames
            return _announced(ctx, epoch)
        out = self._emit(pairs, "epoch", epoch, None, ctx, now, head, anchored=True)
        if ctx.rank is None and "[rank" in text:
            marker = RANK_MARK.search(text)  # "epoch 3 [rank 0]: ..." (gputui's trainers): that rank's row
            if marker is not None:
                for record in out:
                    record.fields["rank"] = int(marker.group(1))
        return out

    def _emit(
        self,
        pairs: list[tuple[str, float, str]],
        scope: str,
        epoch: int | None,
        step: int | None,
        ctx: Context,
        now: float,
        head: str,
        anchored: bool,
    ) -> list[Record]:
        out: list[Record] = []
        if not pairs:
            return out
        named = []
        for name, value, after in pairs:
            if name in TIME_NAMES or name.endswith("_time"):
                unit = UNIT.match(after)  # "time: 850ms" is 0.85 s
                value *= SCALE.get(unit.group(1).lower(), 1.0) if unit else 1.0
                if anchored and name in TIME_NAMES:
                    name = "epoch_time_s"
            named.append((name, value))
        emit(out, named, NAME, scope, ctx, now, epoch, step, stamp(head) if head else None)
        return out


def _announced(ctx: Context, epoch: int | None) -> list[Record]:
    """An epoch's header: the values held under an earlier epoch are given (that epoch ran); under the
    same epoch (a second block of it, or a launch starting over) they stay held."""
    held = ctx.held
    if held and epoch is not None and held[0].fields.get("epoch", epoch) < epoch:
        ctx.held = []
        return held
    return []


PARSER = GenericParser()
