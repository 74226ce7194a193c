"""Taught patterns: the formats a user names where automatic extraction does not read a line.

A pattern is the line's literal text with ``{name}`` placeholders for its numbers
(``iter {step}: loss {loss}, time {step_time_ms}ms``; ``docs/log-formats.md``, *Teaching a format*):

- ``{step}``, ``{iter}``, ``{epoch}`` (any name :func:`~gputui.logs.tokens.counter_kind` calls a counter)
  place the values; a total after a slash (``{epoch}/{epochs_total}``) and other settings are read past;
- every other name is a metric, named by the extractor's rule (:mod:`gputui.logs.naming`): a unit at the
  end of the name (``step_time_ms``, ``acc_pct``, ``mem_gib``) or glued after the placeholder in the
  pattern (``{dt}ms``) is read as its unit, so ``step_time_ms`` is ``step_time_s`` in seconds;
- ``{}`` is a number read past (not a metric);
- a run of whitespace in the pattern matches any whitespace (or none); ``{{``/``}}`` are literal braces.

A pattern is compiled once to a regular expression; :class:`TaughtParser` tries it only on lines that
hold its longest literal piece. Where patterns come from: ``--pattern`` and the settings file's
``[[patterns]]`` (per folder with ``where``, per cluster with ``cluster``), gathered in :data:`TEACHING`
by the command line; every :class:`~gputui.logs.parser.LogParser` asks it for the patterns of its file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from gputui.logs.base import NOT_METRICS, SETTING_SUFFIXES, Context, emit
from gputui.logs.formats.extract import PREFIX
from gputui.logs.naming import MEMORY_UNITS, TIME_UNITS, is_memory, label_name, unit_rule
from gputui.logs.tokens import NUMBER, counter_kind
from gputui.stream.records import Record

NAME = "taught"
PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
GOOD_NAME = re.compile(r"[A-Za-z][\w.@/%-]*")
UNIT_AFTER = re.compile(r"\s?(%|us|µs|ms|sec|secs|s|min|h|[KMG]i?B|[KMG])(?![A-Za-z])")
MAX_PATTERN = 500
LINE_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
Route = Callable[[str, Context, float], "list[Record] | None"]


@dataclass(frozen=True)
class Slot:
    """One placeholder: ``kind`` ``step``/``epoch``/``metric``/``skip``, the metric's name and scale."""

    kind: str
    name: str
    scale: float = 1.0


@dataclass(frozen=True)
class Pattern:
    text: str
    regex: re.Pattern[str]
    slots: tuple[Slot, ...]
    anchor: str  # the longest literal piece: a line without it is not tried

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.slots if s.kind == "metric"]


def _unit_of(raw: str, after: str) -> tuple[str, str | None]:
    """A placeholder's label and unit: from the end of its name (``step_time_ms``), else from the text
    glued after it in the pattern (``{dt}ms``)."""
    head, _, tail = raw.rpartition("_")
    low = tail.lower()
    if head and (low in TIME_UNITS or low in ("pct", "percent")):
        return head, "%" if low in ("pct", "percent") else low
    if head and low in MEMORY_UNITS and is_memory(label_name(head)):
        return head, low
    m = UNIT_AFTER.match(after)
    return raw, (m.group(1) if m else None)


def _slot(raw: str, after: str, previous: Slot | None, before: str) -> Slot:
    if raw in ("", "_"):
        return Slot("skip", "")  # "{}": a number read past
    if GOOD_NAME.fullmatch(raw) is None:
        raise ValueError(f"placeholder {{{raw}}} is not a name such as {{loss}} or {{step}}")
    kind = counter_kind(raw)
    if kind is not None:
        return Slot(kind, raw)
    low = label_name(raw).replace("-", "_")
    if previous is not None and previous.kind in ("step", "epoch") and before.strip() == "/":
        return Slot("skip", raw)  # "{epoch}/{epochs_total}": the planned total
    if low in NOT_METRICS or low.endswith(SETTING_SUFFIXES) or low.endswith("_total"):
        return Slot("skip", raw)
    label, unit = _unit_of(raw, after)
    name, scale = unit_rule(label_name(label), unit)
    if not name:
        raise ValueError(f"placeholder {{{raw}}} gives no metric name")
    return Slot("metric", name, scale)


def _literal(text: str) -> str:
    """Literal pattern text as a regex: whitespace runs match any whitespace, or none."""
    return r"\s*".join(re.escape(piece) for piece in re.split(r"\s+", text))


def compile_pattern(text: str) -> Pattern:
    """The pattern as a regex and its slots; ``ValueError`` (one line) when it cannot be used."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a pattern is the line's text with {name} placeholders, not empty")
    if len(text) > MAX_PATTERN or "\n" in text or "\r" in text:
        raise ValueError(f"a pattern is one line of at most {MAX_PATTERN} characters")
    parts: list[str] = []
    literals: list[str] = []
    slots: list[Slot] = []
    literal, at = "", 0
    for m in PLACEHOLDER.finditer(text):
        literal += text[at : m.start()]
        at = m.end()
        token = m.group(0)
        if token in ("{{", "}}"):
            literal += token[0]
            continue
        if m.group(1) is None:
            raise ValueError(
                f"unbalanced {token!r} at character {m.start() + 1}: write {token * 2} for a brace"
            )
        slot = _slot(m.group(1).strip(), text[m.end() :], slots[-1] if slots else None, literal)
        if slot.kind != "skip" and any(s.kind == slot.kind and s.name == slot.name for s in slots):
            raise ValueError(f"{{{m.group(1)}}} appears twice")
        parts.append(_literal(literal))
        literals.append(literal)
        parts.append(r"\s*(" + NUMBER + ")")
        slots.append(slot)
        literal = ""
    literal += text[at:]
    parts.append(_literal(literal))
    literals.append(literal)
    if not any(s.kind == "metric" for s in slots):
        raise ValueError("a pattern needs at least one {name} placeholder for a metric, such as {loss}")
    if sum(s.kind == "step" for s in slots) > 1 or sum(s.kind == "epoch" for s in slots) > 1:
        raise ValueError("a pattern has at most one step and one epoch placeholder")
    anchor = max((piece.strip() for lit in literals for piece in re.split(r"\s+", lit)), key=len)
    regex = re.compile("".join(parts))
    return Pattern(text, regex, tuple(slots), anchor)


class TaughtParser:
    """The ``taught`` family: lines a user's patterns match, tried before every other family."""

    name = NAME

    def __init__(self, patterns: Iterable[Pattern]) -> None:
        self.patterns = tuple(patterns)

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        for pattern in self.patterns:
            if pattern.anchor not in text:
                continue
            m = pattern.regex.search(text)
            if m is not None:
                return self._records(pattern, m, ctx, now)
        return None

    def _records(self, pattern: Pattern, m: re.Match[str], ctx: Context, now: float) -> list[Record]:
        epoch = step = None
        pairs: list[tuple[str, float]] = []
        for slot, raw in zip(pattern.slots, m.groups(), strict=True):
            if slot.kind == "metric":
                pairs.append((slot.name, float(raw) * slot.scale))
            elif slot.kind in ("step", "epoch"):
                try:
                    number = int(raw)
                except ValueError:
                    return []  # "iter 1.5": not a counter, the line is this pattern's but gives nothing
                if slot.kind == "step":
                    step = number
                else:
                    epoch = ctx.epoch = number
        scope = "step" if step is not None else "epoch" if epoch is not None else "context"
        if scope == "context":
            epoch = ctx.epoch
        out: list[Record] = []
        emit(out, pairs, NAME, scope, ctx, now, epoch, step)
        return out

    def first(self, route: Route) -> Route:
        """``route`` with these patterns tried before it."""
        parse = self.parse

        def routed(text: str, ctx: Context, now: float) -> list[Record] | None:
            records = parse(text, ctx, now)
            return records if records is not None else route(text, ctx, now)

        return routed


@dataclass(frozen=True)
class Taught:
    """A pattern and where it applies: logs under ``where`` (a folder), on ``cluster``; both: all."""

    pattern: Pattern
    where: str | None = None
    cluster: str | None = None

    def applies(self, path: str | None, cluster: str | None) -> bool:
        if self.cluster is not None and self.cluster != cluster:
            return False
        if self.where is None:
            return True
        if path is None:
            return False
        folder = os.path.abspath(os.path.expanduser(self.where))
        return os.path.abspath(path).startswith(folder.rstrip(os.sep) + os.sep)


class Teaching:
    """The patterns in effect in this process (empty until the command line configures it)."""

    def __init__(self) -> None:
        self.taught: list[Taught] = []
        self.cluster: str | None = None

    def configure(self, taught: Iterable[Taught], cluster: str | None = None) -> None:
        self.taught, self.cluster = list(taught), cluster

    def add(self, taught: Taught) -> None:
        self.taught.insert(0, taught)  # the latest taught is tried first

    def parser_for(self, path: str | os.PathLike[str] | None) -> TaughtParser | None:
        where = os.fspath(path) if path is not None else None
        patterns = [t.pattern for t in self.taught if t.applies(where, self.cluster)]
        return TaughtParser(patterns) if patterns else None


TEACHING = Teaching()


def use(given: Iterable[Pattern], settings: Iterable[Any], cluster: str | None) -> None:
    """Put the patterns in effect: ``given`` (``--pattern``, every log) first, then the settings file's
    (:class:`gputui.config.PatternSetting`, already checked). ``cluster``: ``--cluster``/
    ``GPUTUI_CLUSTER``, else ``SLURM_CLUSTER_NAME`` (set inside a job)."""
    taught = [Taught(p) for p in given]
    taught += [Taught(compile_pattern(s.pattern), s.where, s.cluster) for s in settings]
    TEACHING.configure(taught, cluster or os.environ.get("SLURM_CLUSTER_NAME") or None)


def numbers_in(line: str) -> tuple[str, list[tuple[int, int]]]:
    """A line without its log prefix (timestamps, levels, ranks) and the spans of its numbers there."""
    m = PREFIX.match(line)
    body = line[m.end() :] if m is not None else line
    return body, [(n.start(), n.end()) for n in LINE_NUMBER.finditer(body)]


def pattern_from(line: str, names: list[str]) -> str:
    """The pattern of ``line`` with its numbers named in order (``""``: read past, ``{}``)."""
    body, spans = numbers_in(line)
    parts, at = [], 0
    for (start, end), name in zip(spans, names, strict=True):
        parts += [_braced(body[at:start]), "{" + name.strip() + "}"]
        at = end
    parts.append(_braced(body[at:]))
    return "".join(parts).strip()


def draft(line: str) -> str:
    """A pattern to start from: each number of the line a placeholder ``{n1}``, ``{n2}``, ..."""
    return pattern_from(line, [f"n{i}" for i in range(1, len(numbers_in(line)[1]) + 1)])


def _braced(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")
