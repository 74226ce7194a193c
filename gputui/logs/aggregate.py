"""Catch-up reading of the step lines it skips: their values in one pass, as aggregate records.

In catch-up mode (:mod:`gputui.logs.thinning`) a run of lines of one shape is parsed at its ends and
every 128th line; the lines in between used to be dropped, so a mean step time came from a sample (a
19,073-step run whose every 250th step evaluates for 20 s was said to take 7 s a step). Here the
skipped lines of a shape the extractor reads (a step counter and named values) are read together: a
regular expression made from the shape's first line (its numbers as groups, its text literal, its
spacing free) finds every line of the stretch at once, and each value becomes, per stretch, one
``metric`` record with ``count`` (how many printed values it stands for), ``value`` (their mean),
``min``, ``max``, ``step_first`` and ``step`` (the stretch's first and last step). A rate printed beside
a step time (``dt: 496ms | tok/sec: 1.06M``) also carries its mean over time (``timed``, weighted by
the step times, whose sum is ``weight_s``): what the stretch did, tokens over seconds. ``docs/records.md``,
*Aggregate records*.

A stretch whose lines the expression does not all find (another shape among them) is parsed line by
line instead: nothing is lost, only the speed.
"""

from __future__ import annotations

import re
from operator import mul
from typing import Any

from gputui.logs.base import Context, emit
from gputui.logs.bounded import remember
from gputui.logs.formats import extract
from gputui.logs.tokens import TOKEN, Reading
from gputui.stream.names import SAMPLES, STEP_TIMES, TOKENS, canonical_metric_name
from gputui.stream.records import Record

NUMBER = rb"([-+]?(?:[\d][\d,]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf|NaN|Inf))"
OTHER = rb"(?:\S*?)"
SPACE = re.compile(r"\s+")
MAX_TEMPLATES = 256


class Template:
    """The expression of one line shape and what each of its groups is."""

    __slots__ = ("groups", "pattern")

    def __init__(self, pattern: re.Pattern[bytes], groups: list[tuple[str, str, float]]) -> None:
        self.pattern = pattern
        self.groups = groups  # per group: (kind, name, scale): kind "step" or "metric"


def template(text: str, start: int, reading: Reading) -> Template | None:
    """The expression that finds every line of ``text``'s shape, its slots as groups (``None``: the
    reading has no step counter and named values, or a number cannot be placed)."""
    slots = {(slot.start + start, slot.end + start): slot for slot in reading.slots or ()}
    if not any(s.kind == "step" for s in slots.values()) or any(s.clock for s in slots.values()):
        return None
    parts: list[bytes] = [b"^"]
    groups: list[tuple[str, str, float]] = []
    at = 0
    for token in TOKEN.finditer(text):
        number = token.span("v") if token.group("v") is not None else token.span()
        parts.append(_literal(text[at : number[0]]))
        slot = slots.pop(number, None)
        if slot is None:
            parts.append(OTHER)
        elif slot.kind in ("step", "metric"):
            parts.append(NUMBER)
            groups.append((slot.kind, slot.name, slot.scale))
        else:
            parts.append(OTHER)
        at = number[1]
    if slots:
        return None  # a slot the tokens did not give back
    parts.append(_literal(text[at:]) + rb"\s*$")
    return Template(re.compile(b"".join(parts), re.MULTILINE), groups)


def _literal(text: str) -> bytes:
    pieces = [re.escape(p.encode()) for p in SPACE.split(text)]
    return rb"\s*".join(pieces)


def _is_time(name: str) -> bool:
    return name in STEP_TIMES or canonical_metric_name(name) in STEP_TIMES


def aggregate(raws: list[bytes], text: str, ctx: Context, now: float, cache: dict) -> list[Record] | None:
    """Aggregate records of skipped step lines of one shape (``text``: the first of them, decoded, as the
    parser reads it), or ``None`` where they are to be parsed line by line."""
    found = extract.PARSER.read(text, ctx)
    if found is None or found[2].slots is None or not found[2].steps:
        return None
    shape = raws[0].translate(None, b"0123456789")
    entry = cache.get(shape, cache)
    if entry is cache:
        entry = remember(cache, shape, template(text, found[0], found[2]), MAX_TEMPLATES)
    if entry is None:
        return None
    matches = entry.pattern.findall(b"\n".join(raws))
    if len(matches) != len(raws):
        return None
    columns = list(zip(*matches, strict=True)) if len(entry.groups) > 1 else [tuple(matches)]
    return _records(entry, columns, len(raws), ctx, now)


def _floats(column: tuple[bytes, ...]) -> list[float]:
    if any(b"," in value for value in column):
        column = tuple(value.replace(b",", b"") for value in column)
    return list(map(float, column))


def _records(entry: Template, columns: list[Any], count: int, ctx: Context, now: float) -> list[Record]:
    steps: list[int] = []
    values: list[tuple[str, list[float]]] = []
    for (kind, name, scale), column in zip(entry.groups, columns, strict=True):
        if kind == "step":
            steps = [int(v * scale) for v in _floats(column)]
        else:
            values.append((name, [v * scale for v in _floats(column)]))
    if not steps:
        return []
    times = next((vals for name, vals in values if _is_time(name)), None)
    out: list[Record] = []
    ctx.step = steps[-1]
    for name, vals in values:
        extra: dict[str, Any] = {"count": count, "min": min(vals), "max": max(vals), "step_first": steps[0]}
        mean = sum(vals) / count
        if times is not None and vals is not times and _is_rate(name):
            weight = sum(times)
            if weight > 0:  # over time: what the stretch did (tokens over its seconds)
                extra["weight_s"] = weight
                extra["timed"] = sum(map(mul, vals, times)) / weight
        emit(out, ((name, mean),), extract.NAME, "step", ctx, now, ctx.epoch, steps[-1], None, extra)
    return out


def _is_rate(name: str) -> bool:
    canonical = canonical_metric_name(name)
    return canonical in TOKENS or canonical in SAMPLES or name in TOKENS or name in SAMPLES
