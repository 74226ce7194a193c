"""A metric line cut into numbers and the text between them (the extractor's template of a line).

:func:`read_line` works out, for one line, which numbers are counters (epoch, step), which are metrics and
what each is called (:mod:`gputui.logs.naming`, :mod:`gputui.logs.labels`), or that the line is no metric
line. It depends only on the line's *shape* (digits read as 0), so :mod:`gputui.logs.formats.extract`
calls it once per shape. The rules are in ``docs/log-formats.md`` (*The extractor*).
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import NamedTuple

from gputui.logs.base import is_metric_name
from gputui.logs.labels import SPLITS, STATE_VERBS, Label, counter_kind, head_of, label_of, named
from gputui.logs.naming import COUNT_SCALE, SPLIT_WORDS, TIME_UNITS, full_name, line_split, split_label
from gputui.stream.names import canonical_metric_name

NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)"
#: A value: signed, with a fraction or an exponent, or grouped in thousands (``10,690,944``).
VALUE = (
    r"[-+]?(?:\d{1,3}(?:,\d{3})+(?!\d|,\d)|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?"
    r"|[-+]?\.\d+(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)(?!\s*[=:])"  # "nan=False": a key, not a value
)
UNIT = (
    r"%|(?:us|µs|ms|s|sec|secs|seconds|min|mins|minutes|h|hr|hrs|hours)(?![\w/])"
    r"|(?:[KMGT]i?B|k?Wh|[kM]?J|k?W|[GTP]F(?:LOPS)?|TFLOP/s)(?![\w/])|[kKMGTB](?![\w/])"
    r"|(?:us|ms|s|sec)\s?/\s?(?:it|iter|iteration|step|batch|img|image|sample)s?\b(?!/)"  # per item: seconds
)
TOKEN = re.compile(
    r"(?<![\w.@/#-])(?:(?:"
    r"(?P<date>\d{4}[-/]\d\d[-/]\d\d(?:[_T]\d\d[:_]\d\d(?:[:_]\d\d)?)?"  # a date, a time
    r"|\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?)(?![\w])"  # a month-day stamp: "06-06 05:03:01"
    r"|(?P<n>\d+)\s*/\s*(?P<m>\d+)(?![\w/]|\.\w)"  # a position "10/500", a fraction "9845/10000"
    r"|(?P<clock>(?:\d+ days?, )?\d{1,3}:\d\d(?::\d\d)?(?:\.\d+)?)(?![\w:])"  # a duration "0:13:11"
    r")(?![\w]|\.\w|-\d)"  # a full stop may end the sentence ("Inference done 11/3334.")
    r"|(?P<v>" + VALUE + r")"  # a value; with a unit, a full stop may end its sentence ("0.04 s/iter.")
    r"(?:/(?P<total>\d+(?:\.\d+)?)(?P<tu>\s?[KMGT]i?B)(?![\w]|\.\w)"  # memory of a total "9.8/15.9GB"
    r"|(?P<u>\s?(?:" + UNIT + r"))(?![\w]|\.\w|-\d)|(?![\w]|\.\w|\.\d|-\d))"
    r")",
    re.IGNORECASE,
)
#: Structural separators between the parts of a line (also :mod:`gputui.logs.labels`).
SEPARATOR = re.compile(r"\s*(?:\||\t|;|,\s*|\s{2,}|\s-\s)\s*")
LABEL = re.compile(r"[A-Za-z][\w.@/%()\[\]-]*(?: [A-Za-z(\[][\w.@/%()\[\]-]*){0,3}")
#: Durations an epoch's line states: the epoch's time (the generic parser's rule, docs/log-formats.md).
EPOCH_TIMES = frozenset(
    f"{name}_s"
    for name in (
        "time",
        "time_taken",
        "elapsed",
        "elapsed_time",
        "time_elapsed",
        "duration",
        "took",
        "epoch_time",
    )
)
SKIP_NAMES = frozenset({"eta", "remaining", "time_left", "left", "eta_s"})
#: What may follow the last number of a metric line: a rate or count unit (``850 img/s``, ``12 GB``).
RATE = re.compile(
    r"[A-Za-z]{1,12}/(?:s|sec|step|it|batch)|it|img|imgs|images|samples|tokens|tok|ex|[KMGT]i?B|x", re.I
)
#: What may follow the last number otherwise: a mark of the best value or of a checkpoint saved.
TAIL = re.compile(
    r"[\s)\]}|,;.*!<>=-]*(?:\(?best\)?|\*+|saved?|saving\b.*|new best\b.*|<-+.*|per [a-z]+)?[\s)\]}|,;.*!]*$",
    re.I,
)
LIST = re.compile(r"\[([A-Za-z][^\[\]]*)\]\s*[:=]\s*\[([^\[\]]*)\]")
#: ``p1v(min/mean/max/std)=(0.1, 0.2, 0.3, 0.05)``: a name, its parts' names, a tuple of their values
PARTS = re.compile(r"([A-Za-z][\w.-]*)\(([A-Za-z]\w*(?:/[A-Za-z]\w*)+)\)\s*[:=]\s*\(([^()]*)\)")
MODULE_PRINTOUT = re.compile(
    r"^\s*(?:\(\w+\):\s*)?[A-Z]\w*\((?:\w+=|\d+,|\))|Namespace\(|torch\.Size\(|\barray\(|\btensor\(|\bshape\b"
)
SETTING = re.compile(r"[=:] ?(?:True|False|None)\b")


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
    why: str = ""  # no metric line: the documented rule that says so (``gputui parse --unread``)

    @property
    def anchored(self) -> bool:
        """A line with its own step or epoch counter."""
        return self.slots is not None and any(s.kind in ("epoch", "step") for s in self.slots)


NOTHING = Reading(None, None)
#: The rules that make a line no metric line, as ``gputui parse --unread`` says them.
PRINTOUT = "a printout (a module, a tensor's shape, settings)"
LITERAL = "a line of a printed literal or a settings dump"
NO_NUMBER = "no number"
UNNAMED_LIST = "a list of values without as many names"
SENTENCE = "words that name no value (a sentence, a command line's flags)"
UNNAMED = "a number no word names"
PROSE = "words go on after its numbers (prose)"
COUNTERS = "two counters of one kind"
NO_VALUE = "no value beside its counters"


def unit_of(token: re.Match) -> str:
    """A value's unit as printed; a time per item (``0.0389 s/iter``, ``8 ms/step``) is its time unit."""
    unit = (token.group("u") or token.group("tu") or "").strip()
    return unit.split("/", 1)[0].strip() if "/" in unit and not unit.startswith("TFLOP") else unit


def no(why: str) -> Reading:
    return Reading(None, None, False, why)


def _cell(token: re.Match) -> tuple[int, int, str | None]:
    """A table cell: where its number is (without its unit), and the unit."""
    for group in ("v", "clock", "n"):
        if token.group(group) is not None:
            return token.start(group), token.end(group), unit_of(token) or None
    return token.start(), token.end(), None


def _named_lists(body: str) -> tuple[dict[int, str], list[tuple[int, int]]]:
    """``[Avg. Loss, Loss]: [10.4, 7.1]``: the name of each value of such a list, by its offset."""
    named_at: dict[int, str] = {}
    spans = []
    for m in PARTS.finditer(body) if "/" in body and "(" in body else ():
        names = [f"{m.group(1)} {part}" for part in m.group(2).split("/")]
        values = [t for t in TOKEN.finditer(m.group(3)) if t.group("v")]
        spans.append((m.start(3), m.end(3)))
        if len(names) == len(values):
            for name, value in zip(names, values, strict=True):
                named_at[m.start(3) + value.start()] = name
    for m in LIST.finditer(body):
        names = [n.strip() for n in m.group(1).split(",")]
        values = [t for t in TOKEN.finditer(m.group(2)) if t.group("v") or t.group("clock")]
        spans.append((m.start(2), m.end(2)))
        if len(names) == len(values):
            for name, value in zip(names, values, strict=True):
                named_at[m.start(2) + value.start()] = name
    return named_at, spans


def read_line(body: str) -> Reading:
    """The slots of one line (its text without the log prefix)."""
    if MODULE_PRINTOUT.search(body) or len(SETTING.findall(body)) >= 3:
        return no(PRINTOUT)
    if body.rstrip().endswith((",", "(", "[", "{")) or "...." in body:
        return no(LITERAL)  # a line of a literal (a config or a list printed), a setting with dot leaders
    if "<" in body and "|" in body:
        bar = BAR.search(body)
        if bar is not None:
            return _bar(body, bar)  # a progress bar: its postfix values at its position, nothing else
    tokens = [t for t in TOKEN.finditer(body) if t.group("date") is None]
    if not tokens:
        return no(NO_NUMBER)
    gaps = [body[a.end() : b.start()] for a, b in pairwise(tokens)]
    bare_ends = not body[: tokens[0].start()].strip() and not body[tokens[-1].end() :].strip()
    if len(tokens) > 1 and bare_ends and all(not SEPARATOR.sub("", gap).strip() for gap in gaps):
        return Reading(None, tuple(_cell(t) for t in tokens))
    named_at, lists = _named_lists(body)
    builder = _Builder(body)
    nesting = Nesting() if "{" in body else None
    previous = 0
    for token in tokens:
        if token.start() < previous:
            continue  # inside a note or a list already read past
        if nesting is not None and KEY_AFTER.match(body, token.end()):
            continue  # a dictionary's number key ("{0: 0.78}"): part of the next value's label
        gap = body[previous : token.start()]
        previous = token.end()
        if token.start() in named_at:
            label: Label | None = Label(named_at[token.start()], False)
        elif any(a <= token.start() < b for a, b in lists):
            return no(UNNAMED_LIST)
        elif nesting is not None and nesting.enter(gap):
            label = nesting.label(gap)
        else:
            label = label_of(gap)
        if label is None:
            return no(SENTENCE)
        skip_to = builder.add(token, gap, label)
        if skip_to is None:
            return no(UNNAMED)
        previous = max(previous, skip_to)
    return builder.finish(body[previous:])


#: A name printed after its value: ``113.4k tok/s``, ``1.2M tokens``, ``512 images``.
NAME_AFTER = re.compile(
    r"\s?((?:[A-Za-z]{1,12}/(?:s|sec|step|it|batch))|tokens|samples|images|examples|sequences|phrases|words"
    r"|sentences|frames|episodes)\b(?!\s*[:=])",
    re.IGNORECASE,
)
#: The name after a time that has its unit: ``0.2ms preprocess,`` (Ultralytics' and YOLOv5's ``Speed:``).
UNIT_NAME_AFTER = re.compile(r"\s+([A-Za-z][\w-]*)(?=\s*,|\s+per\b|\s*$)")
#: A counter printed after its value: ``(after 1 iterations)``, ``3 epochs``.
COUNTER_AFTER = re.compile(r"\s(iterations?|iters|steps?|epochs?|updates)\b", re.IGNORECASE)
PAIRED = re.compile(r"(.*[^\s(])\s+\(([A-Za-z][\w ]*)\)")  # "Accuracy (Loss)": two names, two values
REMARK = re.compile(r"\s*\(\s*[*×]\s*")  # "(* 0.008 = …)": a remark in brackets that opens with an operator
NESTED = re.compile(r"\[\s*[(\[]\s*$")  # "mom=[(0.9, 0.999), ...]": a list of tuples, settings


KEY_AFTER = re.compile(r"['\"]?\s*:(?!\d)")
KEY = re.compile(r"""['"]?([^'"{}:,\[\]]+?)['"]?\s*[:=]\s*['"]?$""")


class Nesting:
    """The dictionaries of a line (``loss: {'cls': 8.6, 'total': 20.0}``, ``{"step": 3, "loss": 0.5}``,
    ``iou: {0: 0.78, 1: 0.51}``): where the reading is, and the names their keys give."""

    def __init__(self) -> None:
        self.outer: list[str] = []  # the label of each open dictionary

    def enter(self, gap: str) -> bool:
        """Follow the braces in the text before a number; whether the number is inside a dictionary."""
        rest = gap
        while True:
            at = min((i for i in (rest.find("{"), rest.find("}")) if i >= 0), default=-1)
            if at < 0:
                break
            if rest[at] == "{":
                found = label_of(rest[:at].rstrip(" :="))
                self.outer.append(found.text if found is not None else "")
            elif self.outer:
                self.outer.pop()
            rest = rest[at + 1 :]
        self.rest = rest
        return bool(self.outer)

    def label(self, gap: str) -> Label | None:
        """The name of a value inside a dictionary: its key, with the dictionary's own label where the
        key needs it (``iou: {0: …}`` → ``iou 0``, ``loss: {'cls': …}`` → ``cls loss``)."""
        m = KEY.search(self.rest)
        if m is None:
            return None
        key = m.group(1).strip()
        outer = next((o for o in reversed(self.outer) if o), "")
        if outer and key.isdigit():
            key = f"{outer} {key}"
        elif outer.lower() in ("loss", "losses") and "loss" not in key.lower():
            key = f"{key} loss"
        elif outer.lower() in SPLITS:
            key = f"{outer} {key}"
        return Label(key, False)


class _Builder:
    """The slots of one line, number by number."""

    def __init__(self, body: str) -> None:
        self.body = body
        self.split = line_split(body)
        self.slots: list[Slot] = []
        self.bare: list[int] = []  # bare positions "[3/10]": step, or epoch then step
        self.last_name = ""
        self.last_label = ""
        self.last_unit: str | None = None
        self.noun = ""  # "loss train: 0.5, val: 0.6": the noun the split words share
        self.pending = ""  # a name waiting for its value: "accuracy: 2400/10042=0.239", "Score at it. 0 is"
        self.listed = ""  # "lr=[a, b]": the name of the list being read, and how many of it so far
        self.listed_count = 0
        self.category = ""  # "LOC: precision: 76.6%; recall: 71.2%": the heading of the names after it
        self.phrase = False  # the number before was part of a phrase ("over 64 molecules")
        self.paren_name = ""  # "Accuracy (Loss): 0.9 (1.3)": the name of the value in brackets
        self.setting = False  # the value before was a setting (left out)
        self.pair_names: tuple[str, str] | None = None  # "Reconstruction/K-Means Loss": two names
        self.timed_head = ""  # "Speed: 0.2ms preprocess, 6.2ms inference": the heading of times named after
        self.heading = ""  # the split of the latest label that opened with a split word ("Val loss")

    def add(self, token: re.Match, gap: str, label: Label) -> int | None:
        """Add one number; the offset to read on from (``None``: the line is no metric line)."""
        if REMARK.fullmatch(gap):  # Caffe's "loss = 9.27 (* 1 = 9.27 loss)": the weighted value, a remark
            close = self.body.find(")", token.end())
            return len(self.body) if close < 0 else close + 1
        if NESTED.search(gap):  # "mom=[(0.9, 0.999), (0.9, 0.999)]": a list of tuples, settings
            close = self.body.find("]", token.end())
            return len(self.body) if close < 0 else close + 1
        if label.opened and label.text and self.body[token.start() - 1 : token.start()] == "[":
            close = self.body.find("]", token.end())
            listed = "," in self.body[token.end() : close if close >= 0 else None]
            if listed and counter_kind(label.text) is not None:  # "STEPS: [40, 70]": a schedule's settings
                return len(self.body) if close < 0 else close + 1
            self.listed, self.listed_count = label.text, 0
            self.pair_names = _pair_names(label.text)
            if self.pair_names:
                return token.end() if self._metric(token, self.pair_names[0]) else None
        elif not label.text and self.listed and gap.strip() == ",":
            self.listed_count += 1
            return token.end() if self._metric(token, f"{self.listed} {self.listed_count}") else None
        elif not label.text and self.listed and gap.strip() == "/" and self.pair_names:
            return token.end() if self._metric(token, self.pair_names[1]) else None  # "A/B Loss: [a / b]"
        else:
            self.listed = ""
        phrase, self.phrase = self.phrase, False
        timed = UNIT_NAME_AFTER.match(self.body, token.end()) if token.group("u") else None
        if timed is not None and unit_of(token).lower() in TIME_UNITS and gap.rstrip()[-1:] in (":", ","):
            head = self.timed_head = (
                label.text or self.timed_head
            )  # "Speed: 0.2ms preprocess, 6.2ms inference"
            name = f"{head} {timed.group(1)}" if head else timed.group(1)
            return timed.end() if self._metric(token, name) else None
        if self.setting and gap.lstrip().startswith("("):  # a remark in brackets on a setting
            close = self.body.find(")", token.end())
            return len(self.body) if close < 0 else close + 1
        if label.head.lower() in SPLITS:  # "val: loss 0.6 acc 0.8": a split heading names what follows
            self.split = SPLIT_WORDS[label.head.lower()]
        elif label.head:
            self.category = label.head
        if label.kind == "prose":
            return self._in_phrase(token, label)
        if phrase and self.pending and label.kind == "name" and len(label.text.split()) == 1:
            pending, self.pending = self.pending, ""  # "Validity over 64 molecules: 1.56%"
            return self._named(token, pending)
        if label.kind == "time":
            unit = unit_of(token).lower()
            if unit in TIME_UNITS or token.group("clock") is not None:
                return token.end() if self._metric(token, "@time") else None
            return self._in_phrase(token, label)  # "(after 1 iterations)"
        if token.group("n") is not None:
            return self._position(token, label.text)
        if not label.text:
            return self._unlabelled(token, gap, label.opened)
        if label.text.lower() == "rank" and (token.group("v") or "").isdigit():
            self.slots.append(Slot(token.start(), token.end("v"), "rank", "", 1.0, False))  # "[rank 0]"
            return token.end()
        kind = counter_kind(label.text)
        if kind == "epoch" and label.text.lower() == "ep" and any(s.kind == "step" for s in self.slots):
            kind = None  # "step:400 ep:40": episodes, the step counts
        if kind == "step" and label.text.lower() == "batch" and any(s.kind == "step" for s in self.slots):
            return token.end()  # "[000500/50000] … | batch 16": after the line's position, a batch size
        if kind is not None and " " in label.text:
            first = label.text.split(None, 1)[0].lower()
            if first in SPLIT_WORDS:
                self.split = SPLIT_WORDS[first]  # "val step:0 loss: 3.27": the values after are val_
        if kind is not None:
            raw = token.group("v")
            if raw is None or not raw.isdigit():
                head = _head(label.text)  # "Learning Rate for this epoch: 0.001"
                if not head and raw is not None and "." in raw:
                    return self._named(token, label.text)  # "epoch: 10.0": a fractional position (HF)
                return self._named(token, head) if head else None
            scale = COUNT_SCALE.get(unit_of(token), 1.0)  # "step 12k"
            self.slots.append(Slot(token.start(), token.end("v"), kind, "", scale, False))
            self.pending = _head(label.text)  # "Score at iteration 0 is 1.6"
            return token.end()
        self.pending = ""
        paired = PAIRED.fullmatch(label.text)
        if (
            paired is not None
            and split_label(label.text)[1] is None
            and PAREN_VALUE.match(self.body, token.end())
        ):
            label = Label(paired.group(1), label.opened, label.kind, label.head)
            self.paren_name = paired.group(2)
        after = NAME_AFTER.match(self.body, token.end())
        if after is not None and not gap.rstrip().endswith((":", "=")):
            return after.end() if self._metric(token, after.group(1)) else None  # "processed 1098 tokens"
        if self.category and label.text.lower().split()[0] not in SPLITS:
            return self._named(token, f"{self.category} {label.text}")
        return self._named(token, label.text)

    def _named(self, token: re.Match, label: str) -> int | None:
        return token.end() if self._metric(token, label) else None

    def _in_phrase(self, token: re.Match, label: Label) -> int | None:
        """A number after a little word: a counter named after it (``(after 1 iterations)``), a count
        named after it (``with 3819 phrases``), else part of the phrase, skipped."""
        after = COUNTER_AFTER.match(self.body, token.end())
        raw = token.group("v")
        if after is not None and raw is not None and raw.isdigit():
            kind = "epoch" if after.group(1).lower().startswith("epoch") else "step"
            self.slots.append(Slot(token.start(), token.end("v"), kind, "", 1.0, False))
            return after.end()
        named = NAME_AFTER.match(self.body, token.end())
        if named is not None and raw is not None:
            return named.end() if self._metric(token, named.group(1)) else None
        if label.text:
            self.pending = label.text  # "Validity over 64 molecules: 1.56%"
            self.phrase = True
        return token.end()

    def _position(self, token: re.Match, label: str) -> int:
        kind = counter_kind(label) if label else None
        if kind is None and label:
            self.pending = label  # "Accuracy: 9845/10000 (98%)": counts; the value follows
            return token.end()
        if kind is None:
            self.bare.append(len(self.slots))
            kind = "step"
        self.slots.append(Slot(token.start("n"), token.end("n"), kind, "", 1.0, False))
        return token.end()

    def _unlabelled(self, token: re.Match, gap: str, opened: bool) -> int | None:
        body, last = self.body, self.last_name
        unit = unit_of(token) or None
        named = NAME_AFTER.match(body, token.end()) if token.group("v") is not None else None
        if named is not None:
            return named.end() if self._metric(token, named.group(1)) else None  # "113.4k tok/s"
        if self.pending and all(w in STATE_VERBS for w in gap.strip(" =(:").split()):
            label, self.pending = self.pending, ""
            return token.end() if self._metric(token, label) else None
        rest = body[token.end() :].strip()
        if gap.strip(" )") == "-" and unit is not None and unit.lower() in TIME_UNITS and not rest:
            return token.end()  # "loss: 0.03 (94.0 %) - 9.9 secs": the time so far, a progress counter
        if gap.replace(" ", "") == "]," and not rest:
            return token.end()  # "[Avg. Loss, Loss]: [10.4, 7.2], 0": a number after the named list
        if last and gap.strip() in ("+/-", "±", "+-"):  # "episode_reward=115.83 +/- 0.00": its spread
            return token.end() if self._metric(token, f"{self.last_label} std") else None
        closes = body[token.end() :].lstrip()[:1] == ")"
        if opened and last and gap.strip() == "(" and closes and self.paren_name:
            label, self.paren_name = self.paren_name, ""
            return token.end() if self._metric(token, label) else None
        if opened and last and gap.strip() == "(" and closes:
            if unit is not None and unit != self.last_unit:  # "Energy=31.67 Wh (114005.4 J)"
                timed = unit.lower() in TIME_UNITS and (self.last_unit or "").lower() not in TIME_UNITS
                label = "time" if timed else self.last_label  # "average loss: 0.6189  (78.2s)": a time
                return token.end() if self._metric(token, label) else None
            avg = canonical_metric_name(last) + "_avg"  # the running average of the value before
            self.slots.append(Slot(token.start(), token.end("v") or token.end(), "metric", avg, 1.0, False))
            return token.end()
        if opened and closes and unit is not None and unit.lower() in TIME_UNITS:
            return token.end() if self._metric(token, "time") else None  # "(2996.7 ms)"
        opener = gap.rstrip()[-1:]
        raw = token.group("v") or ""
        if opener == "[" and raw.isdigit() and POSITION_NEXT.match(body, token.end()):
            self.slots.append(Slot(token.start(), token.end("v"), "epoch", "", 1.0, False))  # "[1, 0/2562]"
            return token.end()
        if opened:
            close = body.find("]" if opener == "[" else ")", token.end())
            return close + 1 if close >= 0 else token.end()  # "(0.41 s / it)": a note in brackets
        return None

    def _metric(self, token: re.Match, label: str) -> bool:
        """Add a named value (or leave out a setting); False: the line is no metric line."""
        clock = token.group("clock") is not None
        unit = "s" if clock else unit_of(token) or None
        if label == "@time":  # "done in 12.3s": the epoch's time on an epoch's line (see finish)
            if unit is None or unit.lower() not in TIME_UNITS:
                return False
            label = "took time"
        before = self.split
        first = label.split(None, 1)[0].lower() if " " in label.strip() else ""
        name, scale, self.noun, self.split = named(label, unit, self.split, self.noun)
        if first in SPLIT_WORDS:
            self.heading = SPLIT_WORDS[first]  # "Val loss: …": the segment's split, for names seen before
            if self.slots and self.slots[-1].kind in ("epoch", "step"):
                self.split = self.heading  # "END epoch:1   val loss_avg: 3.6 top1_avg: 0.15": the line's
        elif self.heading and any(s.name == name for s in self.slots):  # "… | Val loss: 0.3, MAPE: 6.4"
            name, scale = full_name(label, unit, self.heading)
        if label.lower() in SPLIT_WORDS and not self.body[: token.start()].rstrip().endswith("("):
            self.split = before  # "Eval: 0.0002 s/iter. Total: …": that split's time, not a section
        if (
            not name
            or name.split("_")[0] in SKIP_NAMES
            or not is_metric_name(name)
            or not (is_metric_name(label) or unit == "%")  # "SLURM_PROCID: 0"; "GPU 92%" is a use
        ):
            self.last_name = ""
            self.setting = True  # "Effective batch size: 512 (ratio: 10)": a remark on it follows
            return True
        self.setting = False
        end = token.end("clock") if clock else token.end("v")
        self.slots.append(Slot(token.start(), end, "metric", name, scale, clock))
        self.last_name, self.last_label, self.last_unit = name, label, unit
        return True

    def finish(self, rest: str) -> Reading:
        slots = self.slots
        rest = SEPARATOR.sub(" ", rest).strip(" )]}|,;.")
        anchored = any(s.kind in ("epoch", "step") for s in slots)
        words_go_on = rest and RATE.fullmatch(rest) is None and TAIL.fullmatch(rest) is None
        if words_go_on and (not anchored or any(c.isdigit() or c in ":=" for c in rest)):
            return no(PROSE)  # (a counted line may end in a remark)
        if len(self.bare) == 2 and not any(s.kind == "epoch" for s in slots):
            slots[self.bare[0]] = slots[self.bare[0]]._replace(kind="epoch")
        epoch_line = any(s.kind == "epoch" for s in slots) and not any(s.kind == "step" for s in slots)
        for i, slot in enumerate(slots):
            if slot.name == "took_time_s":  # "epoch 7 done in 12 s"
                slots[i] = slot._replace(name="epoch_time_s" if epoch_line else "time_s")
            elif epoch_line and slot.name in EPOCH_TIMES:  # "Epoch 3 ... Time Taken: 214 sec": its time
                slots[i] = slot._replace(name="epoch_time_s")
        if sum(s.kind == "step" for s in slots) > 1 or sum(s.kind == "epoch" for s in slots) > 1:
            return no(COUNTERS)
        if not any(s.kind == "metric" for s in slots):
            return no(NO_VALUE)
        return Reading(tuple(slots), None, any(s.kind == "step" for s in slots))


PAREN_VALUE = re.compile(r"\s*\(\s*[-+]?[\d.]")  # "Accuracy (Loss): 0.9 (1.3)": the second value
#: ``, 0/2562`` after a bare number in brackets: that number is the epoch, the position its step.
POSITION_NEXT = re.compile(r",\s*\d+\s*/\s*\d+")
PAIR_LABEL = re.compile(r"([A-Za-z][\w-]*)/([A-Za-z][\w-]*)((?:\s+[A-Za-z][\w-]*)*)$")


def _pair_names(label: str) -> tuple[str, str] | None:
    """``Reconstruction/K-Means Loss`` → (``Reconstruction Loss``, ``K-Means Loss``); None otherwise."""
    m = PAIR_LABEL.search(label)
    if m is None or not m.group(3):
        return None
    return f"{m.group(1)}{m.group(3)}", f"{m.group(2)}{m.group(3)}"


#: A progress bar's frame (tqdm and its copies): ``desc: 45%|███ | 45/100 [00:02<00:03, 3.2it/s, loss=0.5]``.
BAR = re.compile(r"\|\s*(\d+)/([\d?]+)\s*\[[^\]]*<[^\]]*\]\s*$")
POSTFIX = re.compile(r"(?<![\w.])([A-Za-z][\w./@-]*)=\s*(" + NUMBER + r")(?![\w.])")


def _bar(body: str, bar: re.Match) -> Reading:
    """A bar's ``name=value`` postfix as values at the bar's position (its counters, percent, times and
    rate are the bar's own: no values)."""
    inside = body[bar.start() : bar.end()]
    slots = [Slot(bar.start(1), bar.end(1), "step", "", 1.0, False)]
    for m in POSTFIX.finditer(inside):
        name, scale = full_name(m.group(1), None, None)
        if name and is_metric_name(name) and counter_kind(m.group(1)) is None:
            start = bar.start() + m.start(2)
            slots.append(Slot(start, start + len(m.group(2)), "metric", name, scale, False))
    return Reading(tuple(slots), None, True) if len(slots) > 1 else no("a progress bar's own counters")


def _head(label: str) -> str:
    """The name in a counter's label, before its little word (``Score at iteration`` → ``Score``)."""
    return head_of(label.split())


__all__ = ["LABEL", "NUMBER", "SPLITS", "TOKEN", "Reading", "Slot", "counter_kind", "read_line"]
