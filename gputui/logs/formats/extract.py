"""The format-agnostic extractor: metric lines of any shape the family parsers do not know.

Runs after the generic parser (:data:`FALLBACK` is the two together): a line the generic parser did not
take, or took and read nothing from, is read here (``docs/log-formats.md``, *The extractor*):

- the log prefix (timestamps, levels, logger names, ranks, file:line, Ray's ``(Actor pid=…)``) is cut;
- the rest is cut into numbers and the text between them (:mod:`gputui.logs.tokens`); each number is
  named by the label before it, by its entry in a list of names (``[Avg. Loss, Loss]: [10.4, 7.1]``), or
  by its column in the header row above it (TSV, CSV, aligned tables); counters (``step N``,
  ``iter N/M``, ``[N/M]``, ``Epoch N``, a ``step``/``epoch`` column) place the values;
- a line is read only when it has a counter and every number on it is a counter or a named value:
  setup output, prose and model printouts give nothing.

Speed: the reading depends only on the line's shape (digits read as 0), so it is worked out once per
shape and stream; a line of a known shape costs one ``translate``, one dict lookup and its slices.
"""

from __future__ import annotations

import re
from typing import Any

from gputui.logs.base import Context, emit, is_metric_name, to_float
from gputui.logs.bounded import DIGITS, remember
from gputui.logs.formats import generic
from gputui.logs.naming import full_name
from gputui.logs.tokens import LABEL, TOKEN, Reading, counter_kind, read_line
from gputui.stream.records import Record

NAME = "extract"
PREFIX = re.compile(
    r"^(?:\s*(?:"
    r"\[[^\]]*\d\d:\d\d[^\]]*\]"  # [2024-05-01 12:00:00,123], [12:00:00]
    r"|\[(?:[A-Z]+|[IWEF])\]"  # [INFO]
    r"|\[[\w.-]+\](?=\[)"  # hydra's [time][module][LEVEL]
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
    r"|\d\d:\d\d:\d\d(?:[.,]\d+)?"
    r"|(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL)(?:(?::[\w.]+)?:|(?=[\s\]|]))"
    r"|\[?rank\s?\d{1,5}\]?:?"
    r"|\(\w+ pid=\d+(?:, ip=[\d.]+)?\)"
    r"|[IWEF]\d{4} [\d:.]+\s+\d+ [\w./-]+:\d+\]"
    r"|[IWEF] [\w./-]+:\d+\]"  # TensorFlow's C++ log after its time: "I external/xla/service.cc:163]"
    r"|\[?[\w.-]+\.py:\d+[^\]\s]*\]?"
    r"|[\w.<>-]+:[\w.<>-]+:\d+(?=\s-\s)"  # loguru's "{name}:{function}:{line} - "
    r"|[\w.]+(?= - (?:INFO|WARNING|DEBUG)\b)"
    r"|[\w.]+ (?=(?:INFO|WARNING|WARN|DEBUG|ERROR)\b)"  # PaddleOCR's "root INFO:"
    r"|[^\[\]|\n]{0,60}\|[^|\n]{0,80}\|\s*[\d?]+/[\d?]+\s*\[[^\]\n]{0,60}\]"  # a tqdm bar before the line
    r"|[A-Za-z][\w.]*-[\w.-]*\d:(?=\s)|[a-z]{2,}\d{3,}:(?=\s)"  # pdsh's "v100x16-1: ", "nid001234: "
    r"|[|:]|-(?=\s)"
    r"))+\s*"
)
RANK = re.compile(r"rank\s?(\d{1,5})")
WARNING = re.compile(r"WARN|ERROR|CRITICAL|FATAL|(?:^|\s)[WEF]\d{4} ")
HEADER_FIELD = re.compile(r"[A-Za-z][\w.@/%()\[\]-]*")
MAX_SHAPES = 8192  # shapes kept per log (its ranks share them)
MAX_NAMED = 256  # readings kept per shape whose names hold digits
MAX_LINE = 2048
NO_DIGITS = b"0123456789"
NOTHING = Reading(None, None)


def _header(body: str) -> tuple[str, ...] | None:
    """The column labels of a header row (no numbers, a counter column), or ``None``."""
    for sep in ("\t", ",", "|"):
        if sep in body:
            fields = [f.strip() for f in body.split(sep)]
            fields = [f for f in fields if f] if sep == "|" else fields
            break
    else:
        fields = re.split(r"\s{2,}", body.strip())
        if len(fields) < 2:
            fields = body.split()
            if any(HEADER_FIELD.fullmatch(f) is None for f in fields):
                return None
    if len(fields) < 2 or any(LABEL.fullmatch(f) is None for f in fields):
        return None
    if not any(counter_kind(f) for f in fields):
        return None
    return tuple(fields)


def _value(text: str) -> float | None:
    """A duration ``[D day(s), ]H:MM:SS`` or ``MM:SS`` in seconds, or a plain number."""
    if ":" in text:
        days = 0.0
        if "day" in text:
            count, _, text = text.partition(" ")
            days, text = float(count) * 86400, text.split(",", 1)[1].strip()
        total = 0.0
        for part in text.split(":"):
            total = total * 60 + float(part)
        return days + total
    return to_float(text)


def reading_of(text: str) -> tuple[int, Any, Reading]:
    """(prefix length, header labels or None, reading) of a line; it depends only on the line's shape."""
    pm = PREFIX.match(text)
    start = pm.end() if pm is not None else 0
    if start and WARNING.search(text, 0, start):
        return start, None, Reading(None, None, False, "a warning's numbers")
    body = text[start:]
    header = _header(body) if TOKEN.search(body) is None else None
    reading = read_line(body) if header is None else Reading(None, None)
    return start, header, reading


class Shape:
    """What is known of one line shape: the extractor's reading and, once needed, the generic plan.
    Where a name holds a digit (``top1``, ``layer 'lstm0'``) lines of one shape may name their values
    otherwise (``top5``): their readings are kept per line, its numbers masked (``by_names``)."""

    __slots__ = ("by_names", "empty", "found", "plan")

    def __init__(self, found: tuple[int, Any, Reading]) -> None:
        self.found = found
        self.plan: generic.Plan | None = None
        self.empty = False  # neither parser can read anything from a line of this shape
        slots, header = found[2].slots or (), found[1] or ()
        named_digits = any(c.isdigit() for s in slots for c in s.name) or any(
            c.isdigit() for label in header for c in label
        )
        self.by_names: dict[str, Shape] | None = {} if named_digits else None


def shape_of(text: str, ctx: Context) -> Shape:
    """The shape of a line, its reading worked out once (per line where its names hold digits)."""
    key = text.encode().translate(DIGITS)
    entry = ctx.shapes.get(key)
    if entry is None:
        entry = remember(ctx.shapes, key, Shape(reading_of(text)), MAX_SHAPES)
    if entry.by_names is not None:
        exact = TOKEN.sub("0", text)
        own = entry.by_names.get(exact)
        if own is None:
            own = remember(entry.by_names, exact, Shape(reading_of(text)), MAX_NAMED)
            own.by_names = None
        return own
    return entry


class Series:
    """A line of named values without a counter, by its shape with the digits left out: whether it came
    back with other numbers, and the records of its first line until then."""

    __slots__ = ("count", "example", "pending", "repeats")

    def __init__(self, example: str) -> None:
        self.example = example
        self.count = 0  # lines of this shape seen
        self.repeats = False  # one of them had other numbers
        self.pending: list[Record] = []


class Extractor:
    name = NAME

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        found = self.read(text, ctx)
        return None if found is None else self.records(text, found, ctx, now)

    def read(self, text: str, ctx: Context) -> tuple[int, Any, Reading] | None:
        """(prefix length, header labels or None, reading) of a line: one lookup per known shape."""
        if len(text) > MAX_LINE or "NCCL" in text:
            return None
        return shape_of(text, ctx).found

    def records(
        self, text: str, found: tuple[int, Any, Reading], ctx: Context, now: float
    ) -> list[Record] | None:
        """The records of a line read by :meth:`read`."""
        start, header, reading = found
        if header is not None:
            ctx.table = header
            return None
        body = text[start:] if start else text
        if reading.row is not None:
            return self._row(text[:start], body, reading, ctx, now)
        if reading.slots is None:
            return None
        epoch = step = rank = None
        pairs = named_values(body, reading)
        for slot in reading.slots:
            if slot.kind == "metric":
                continue
            if slot.kind == "step":
                step = int(int(body[slot.start : slot.end]) * slot.scale)
            elif slot.kind == "rank":
                rank = int(body[slot.start : slot.end])
            else:
                epoch = int(body[slot.start : slot.end])
        out = self._emit(text[:start], pairs, epoch, step, ctx, now)
        if out and rank is not None and ctx.rank is None:  # "epoch 3 [rank 0]: loss 0.12"
            for record in out:
                record.fields["rank"] = rank
        return out

    def _row(self, head: str, body: str, reading: Reading, ctx: Context, now: float) -> list[Record] | None:
        """A row of bare numbers under the header row its stream printed last."""
        table: Any = ctx.table
        cells = reading.row
        if table is None or cells is None or len(cells) != len(table):
            return None
        epoch = step = None
        pairs: list[tuple[str, float]] = []
        for label, (start, end, unit) in zip(table, cells, strict=True):
            raw = body[start:end]
            kind = counter_kind(label)
            if kind is not None:
                if not raw.isdigit():
                    return None
                if kind == "step":
                    step = int(raw)
                else:
                    epoch = int(raw)
                continue
            name, scale = full_name(label, unit, None)
            value = _value(raw) if ":" in raw else to_float(raw)
            if value is not None and name and is_metric_name(name):
                pairs.append((name, scaled(value, scale)))
        return self._emit(head, pairs, epoch, step, ctx, now)

    def _emit(
        self,
        head: str,
        pairs: list[tuple[str, float]],
        epoch: int | None,
        step: int | None,
        ctx: Context,
        now: float,
    ) -> list[Record] | None:
        if not pairs or (epoch is None and step is None):
            return None
        if epoch is not None:
            ctx.epoch = epoch
        if step is not None:
            ctx.step = step
        out: list[Record] = []
        scope = "step" if step is not None else "epoch"
        emit(out, pairs, NAME, scope, ctx, now, epoch, step, generic.stamp(head) if head else None)
        if ctx.rank is None and "rank" in head:
            marker = RANK.search(head)
            if marker is not None:
                for record in out:
                    record.fields["rank"] = int(marker.group(1))
        return out


PARSER = Extractor()


class Fallback:
    """The fallback of every log (``--format generic``): a line with a step counter that the extractor
    reads whole, and a row under a header row, are the extractor's; other lines go to the generic parser
    first (its epoch, context and header-line rules), then to the extractor for what it did not read."""

    name = generic.NAME

    #: Every frame is the fallback's to look at (it is tried last; :func:`gputui.logs.parser.route_auto`).
    PRETEST = "True"

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        if "NCCL" in text:
            return None
        if len(text) > MAX_LINE:
            return generic.PARSER.parse(text, ctx, now)  # too long for the extractor
        entry = shape_of(text, ctx)  # one shape, one lookup for both parsers
        if entry.empty:
            return None
        found = entry.found
        reading = found[2]
        if reading.anchored or (reading.row is not None and ctx.table is not None):
            extracted = PARSER.records(text, found, ctx, now)
            if extracted is not None:
                return extracted
        plan = entry.plan
        if plan is None:
            plan = entry.plan = generic.plan_of(text)
            _, em, sm, spans, _ = plan
            if em is None and sm is None and not spans and found[1] is None and reading == NOTHING:
                entry.empty = True  # no anchor, no pair, no header, no slots: nothing, whatever the context
                return None
        records = generic.PARSER.parse_planned(text, plan, ctx, now)
        if records:
            return _fuller(text, found, records, ctx, now)
        extracted = PARSER.records(text, found, ctx, now)
        if extracted is not None:
            return extracted
        if reading.slots is not None and not reading.anchored:
            return series(text, entry, ctx, now) or records
        return records


FALLBACK = Fallback()


def _fuller(
    text: str, found: tuple[int, Any, Reading], records: list[Record], ctx: Context, now: float
) -> list[Record]:
    """The generic parser's records of a line, or, where the extractor reads more of its values
    (``Speed: 0.2ms preprocess, 6.2ms inference``: the generic parser sees ``Speed: 0.2``), the
    extractor's values at the same place (scope, epoch, step)."""
    start, _, reading = found
    slots = reading.slots
    if slots is None or reading.anchored or sum(s.kind == "metric" for s in slots) <= len(records):
        return records
    pairs = named_values(text[start:], reading)
    if len(pairs) <= len(records):
        return records
    first = records[0].fields
    out: list[Record] = []
    stamp = generic.stamp(text[:start]) if start else None
    emit(out, pairs, NAME, first["scope"], ctx, now, first.get("epoch"), first.get("step"), stamp)
    return out


def why_unread(text: str) -> str:
    """Why the extractor reads no value from a line (the rule; ``gputui parse --unread``)."""
    _, header, reading = reading_of(text)
    if header is not None:
        return "a table's header"
    if reading.slots is None:
        return reading.why or "no value"
    if not reading.anchored:
        return (
            "named values without a step or epoch: read once their names come back with other numbers in a "
            "log that shows training (whole numbers without a unit need a training word)"
        )
    return "read by a format of its own family"


def complete(text: str, ctx: Context, now: float, records: list[Record]) -> list[Record]:
    """A family parser's records of a frame, with the values of the frame that it did not read: the
    extractor's reading of the same line adds each value none of the records holds, at their position
    (``docs/log-formats.md``, *The extractor*). Every printed value is read, whichever parser knows the
    line's format."""
    found = PARSER.read(text, ctx)
    if found is None or found[2].slots is None:
        return records
    start, _, reading = found
    body = text[start:] if start else text
    have = {r.fields["value"] for r in records if r.kind == "metric"}
    missing = []
    for slot in reading.slots:
        if slot.kind != "metric":
            continue
        raw = body[slot.start : slot.end]
        value = _value(raw) if slot.clock else to_float(raw.replace(",", "") if "," in raw else raw)
        if value is not None and value not in have and value * slot.scale not in have:
            missing.append((slot.name, scaled(value, slot.scale)))
    if not missing:
        return records
    first = next((r.fields for r in records if r.kind == "metric"), None)
    out = list(records)
    if first is None:  # the family knows the line and read nothing: the extractor's own reading
        if reading.anchored:
            return PARSER.records(text, found, ctx, now) or records
        return series(text, shape_of(text, ctx), ctx, now) or records
    scope = first.get("scope", "step")
    emit(out, missing, NAME, scope, ctx, now, first.get("epoch"), first.get("step"))
    return out


#: Words of names that only a training (or evaluation) run prints: a series of them needs no counter.
TRAINING_WORDS = re.compile(
    r"loss|acc|reward|return|score|ppl|perplexity|f1|bleu|rouge|wer|cer|psnr|ssim|map|iou|dice|auc|mse|mae"
    r"|rmse|err|lr|learning_rate|grad|norm|kl|entropy|precision|recall"
)


def series(text: str, entry: Shape, ctx: Context, now: float) -> list[Record] | None:
    """The last stage (``docs/log-formats.md``, *Series*): a line of named values without a counter is
    read at the stream's latest step (or epoch) when its names come back with other numbers and the
    log shows training (a value read on this stream, or a name that only training prints), or at once
    when both hold; the records of the lines before wait until then. A line of whole numbers without a unit
    needs a training word (``Killing subprocess 8774``, ``nnodes: 2`` are no series)."""
    start, _, reading = entry.found
    body = text[start:] if start else text
    pairs = named_values(body, reading)
    if not pairs:
        return None
    ctx.series_lines += 1
    key = tuple(name for name, _ in pairs)  # a series: the same names with other values
    state = ctx.series.get(key)
    if state is None:
        state = remember(ctx.series, key, Series(body), MAX_SHAPES)
    elif not state.repeats and body != state.example:
        state.repeats = True
    state.count += 1
    trained = ctx.trained
    says_training = any(TRAINING_WORDS.search(name) for name, _ in pairs)
    if not says_training and not _measured(body, reading):
        return None  # whole numbers with no unit and no training word: ids, counts, settings
    if text.lstrip().startswith("wandb:"):  # W&B's run summary: the run's last values
        out: list[Record] = []
        emit(out, pairs, NAME, "summary", ctx, now)
        return out
    stamp = generic.stamp(text[:start]) if start else None
    scope = "step" if ctx.step is not None else "context"
    if not (state.repeats and (trained or (says_training and state.count >= 3))) and not (
        trained and says_training
    ):
        if state.count < 3:  # the lines before it qualifies (at the third, untrained) wait with it
            emit(state.pending, pairs, NAME, scope, ctx, now, ctx.epoch, ctx.step, stamp)
        return None
    out, state.pending = state.pending, []  # type: ignore[assignment]
    emit(out, pairs, NAME, scope, ctx, now, ctx.epoch, ctx.step, stamp)
    return out


def _measured(body: str, reading: Reading) -> bool:
    """A value of the line has a fraction, an exponent or a unit (a measurement, not an id or a count)."""
    for slot in reading.slots or ():
        if slot.kind != "metric":
            continue
        raw = body[slot.start : slot.end]
        if slot.clock or slot.scale != 1.0 or not raw.lstrip("-+").replace(",", "").isdigit():
            return True
        if slot.name.endswith(("_s", "_pct", "_mib", "_gib", "_kib", "_mb", "_gb", "_kb")):
            return True
    return False


def scaled(value: float, scale: float) -> float:
    """A printed value in its name's unit, without the binary fraction's noise (``6.2 ms`` → 0.0062 s)."""
    return value if scale == 1.0 else float(f"{value * scale:.15g}")


def named_values(body: str, reading: Reading) -> list[tuple[str, float]]:
    """(name, value) of every metric slot of a reading of ``body``."""
    pairs = []
    for slot in reading.slots or ():
        if slot.kind != "metric":
            continue
        raw = body[slot.start : slot.end]
        value = _value(raw) if slot.clock else to_float(raw.replace(",", "") if "," in raw else raw)
        if value is not None:
            pairs.append((slot.name, scaled(value, slot.scale)))
    return pairs
