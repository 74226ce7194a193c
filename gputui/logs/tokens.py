"""A metric line cut into numbers and the text between them (the extractor's template of a line).

:func:`read_line` works out, for one line, which numbers are counters (epoch, step), which are metrics and
what each is called (:mod:`gputui.logs.naming`), or that the line is no metric line. It depends only on
the line's *shape* (digits read as 0), so :mod:`gputui.logs.formats.extract` calls it once per shape.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import NamedTuple

from gputui.logs.base import is_metric_name
from gputui.logs.naming import COUNT_SCALE, full_name, line_split
from gputui.stream.names import canonical_metric_name

NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)"
TOKEN = re.compile(
    r"(?<![\w.@/-])(?:"
    r"(?P<n>\d+)\s*/\s*(?P<m>\d+)(?![\w./])"  # a position "10/500", "[ 10/ 500]"
    r"|(?P<clock>\d{1,3}:\d\d(?::\d\d)?)(?![\w:.])"  # a duration "0:13:11"
    r"|(?P<v>" + NUMBER + r")"
    r"(?P<u>\s?(?:%|(?:us|µs|ms|s|sec|secs|min|h|[KMG]i?B)(?![\w/]))|[kKMGB](?![\w/]))?"
    r"(?![\w.]|-\d)"
    r")",
    re.IGNORECASE,
)
#: Structural separators between the parts of a line.
SEPARATOR = re.compile(r"\s*(?:\||\t|;|,\s*|\s{2,}|\s-\s)\s*")
LABEL = re.compile(r"[A-Za-z][\w.@/%()\[\]-]*(?: [A-Za-z(\[][\w.@/%()\[\]-]*){0,3}")
EPOCH_WORDS = frozenset({"epoch", "ep"})
STEP_WORDS = frozenset({"step", "iter", "iteration", "it", "global_step", "batch", "update", "updates"})
SKIP_NAMES = frozenset({"eta", "remaining", "time_left", "left"})
PROSE_WORDS = frozenset(
    {"of", "in", "at", "on", "to", "for", "from", "with", "by", "and", "or", "is", "are", "was"}
)
#: What may follow the last number of a metric line: a rate or count unit (``850 img/s``, ``12 GB``).
RATE = re.compile(r"[A-Za-z]{1,12}/(?:s|sec|step|it|batch)|it|img|imgs|samples|tokens|tok|ex|[KMGT]i?B", re.I)
LIST = re.compile(r"\[([A-Za-z][^\[\]]*)\]\s*[:=]\s*\[([^\[\]]*)\]")
MODULE_PRINTOUT = re.compile(r"^\s*(?:\(\w+\):\s*)?[A-Z]\w*\((?:\w+=|\d+,|\))|Namespace\(")
SETTING = re.compile(r"[=:] ?(?:True|False|None)\b")
OPEN = "([{"
SPLIT_TAG = re.compile(r"^\[[A-Za-z]+\]\s*")  # "[Eval] [10/100]": the line's label, not a metric's


class Slot(NamedTuple):
    """One number of a line: where it is, what it is (``epoch``, ``step``, ``metric``), its name, scale."""

    start: int
    end: int
    kind: str
    name: str
    scale: float
    clock: bool


class Reading(NamedTuple):
    """What a line shape holds: its number slots (``None``: no metric line); a row of bare numbers."""

    slots: tuple[Slot, ...] | None
    row: tuple[tuple[int, int, str | None], ...] | None  # (start, end, unit) per cell of a table row
    steps: bool = False  # a pairs line with a step counter


def counter_kind(label: str) -> str | None:
    words = label.lower().replace("_", " ").split()
    last = words[-1] if words else ""
    if last in EPOCH_WORDS:
        return "epoch"
    if last in STEP_WORDS or label.lower().strip() == "global_step":
        return "step"
    return None


def _prose(label: str) -> bool:
    """A label that ends in a little word (``started with``, ``5 of``) is a sentence, not a name."""
    return label.rsplit(None, 1)[-1].lower() in PROSE_WORDS


def _label(gap: str) -> tuple[str, bool] | None:
    """The label at the end of the text before a number and whether that text opens a bracket;
    ``None`` when words that are no label stand between it and the previous number (prose)."""
    pieces = SEPARATOR.split(gap)
    for piece in pieces[:-1]:
        if len(piece.strip(" )]}>*#:=").split()) > 1:
            return None
    text = SPLIT_TAG.sub("", pieces[-1].lstrip(" )]}>*#"))
    opened = text.rstrip()[-1:] in OPEN if text.strip() else False
    text = text.rstrip(" :=[({#")
    if not text:
        return "", opened
    if LABEL.fullmatch(text) is None or _prose(text):
        return None
    return text, opened


def _cell(token: re.Match) -> tuple[int, int, str | None]:
    """A table cell: where its number is (without its unit), and the unit."""
    for group in ("v", "clock", "n"):
        if token.group(group) is not None:
            return token.start(group), token.end(group), (token.group("u") or "").strip() or None
    return token.start(), token.end(), None


def read_line(body: str) -> Reading:
    """The slots of one line (its text without the log prefix)."""
    if MODULE_PRINTOUT.match(body) or len(SETTING.findall(body)) >= 3 or "{'" in body or '{"' in body:
        return Reading(None, None)
    lists = {m.start(2): m for m in LIST.finditer(body)}
    named_at: dict[int, str] = {}
    for start, m in lists.items():
        names = [n.strip() for n in m.group(1).split(",")]
        values = list(TOKEN.finditer(m.group(2)))
        if len(names) == len(values):
            for name, value in zip(names, values, strict=True):
                named_at[start + value.start()] = name
    tokens = list(TOKEN.finditer(body))
    if not tokens:
        return Reading(None, None)
    gaps = [body[a.end() : b.start()] for a, b in pairwise(tokens)]
    bare_ends = not body[: tokens[0].start()].strip() and not body[tokens[-1].end() :].strip()
    if len(tokens) > 1 and bare_ends and all(not SEPARATOR.sub("", gap).strip() for gap in gaps):
        return Reading(None, tuple(_cell(t) for t in tokens))
    split = line_split(body)
    slots: list[Slot] = []
    bare: list[int] = []
    previous = 0
    last_name = ""
    for token in tokens:
        gap = body[previous : token.start()]
        previous = token.end()
        if token.start() in named_at:
            label, opened = named_at[token.start()], False
        elif any(m.start(2) <= token.start() < m.end(2) for m in lists.values()):
            return Reading(None, None)  # a list of values without as many names
        else:
            found = _label(gap)
            if found is None:
                return Reading(None, None)
            label, opened = found
        if token.group("n") is not None:
            kind = counter_kind(label) if label else None
            if kind is None and label and line_split(label) is None:
                return Reading(None, None)  # "Accuracy: 9845/10000": a fraction, not read
            if kind is None:
                bare.append(len(slots))
                kind = "step"
            slots.append(Slot(token.start("n"), token.end("n"), kind, "", 1.0, False))
            continue
        if not label:
            if opened and last_name and gap.strip() == "(" and body[token.end() :].lstrip()[:1] == ")":
                avg = canonical_metric_name(last_name) + "_avg"  # the running average of the value before
                slots.append(Slot(token.start(), token.end("v"), "metric", avg, 1.0, False))
                continue
            if opened:
                close = body.find(")", token.end())
                previous = close + 1 if close >= 0 else previous
                continue  # "(0.41 s / it)": a note in brackets, not read
            return Reading(None, None)
        kind = counter_kind(label)
        if kind is not None:
            if token.group("v") is None or not token.group("v").isdigit():
                return Reading(None, None)
            scale = COUNT_SCALE.get(token.group("u") or "", 1.0)  # "step 12k"
            slots.append(Slot(token.start(), token.end("v"), kind, "", scale, False))
            continue
        clock = token.group("clock") is not None
        unit = "s" if clock else (token.group("u") or "").strip() or None
        name, scale = full_name(label, unit, split)
        if not name or full_name(label, None, None)[0] in SKIP_NAMES or not is_metric_name(name):
            last_name = ""
            continue
        end = token.end("clock") if clock else token.end("v")
        slots.append(Slot(token.start(), end, "metric", name, scale, clock))
        last_name = name
    rest = SEPARATOR.sub(" ", body[previous:]).strip(" )]}|,;.")
    if rest and RATE.fullmatch(rest) is None:
        return Reading(None, None)  # the line goes on in words: prose
    if len(bare) == 2 and not any(s.kind == "epoch" for s in slots):
        slots[bare[0]] = slots[bare[0]]._replace(kind="epoch")
    if sum(s.kind == "step" for s in slots) > 1 or sum(s.kind == "epoch" for s in slots) > 1:
        return Reading(None, None)
    if not any(s.kind == "metric" for s in slots):
        return Reading(None, None)
    return Reading(tuple(slots), None, any(s.kind == "step" for s in slots))
