"""The label of a number: the words before it on its line, and what they make it (a counter or a name).

Rules (``docs/log-formats.md``, *The extractor*):

- the label is the text between the previous number and this one, without the ``:``/``=`` and
  brackets that lead to the value, cut at the last separator (``|``, tab, ``;``, ``,``, two spaces,
  `` - ``, ``=>``, a closing bracket followed by a space); words that only state it (``is``, ``was``,
  ``=``) end it, little words that start it (``with``, ``and``, ``the``) are dropped;
- a label that ends in a little word (``5 of 10``, ``started with 4``, ``Validity over 64 molecules``) is
  prose: its number is part of a phrase, and the words before the little word may name the value
  that follows (``Score at iteration 0 is 1.6`` → ``score``); ``in``, ``took``, ``after`` before a
  duration name a time (``done in 12.3s``);
- ``head: name`` — a split word in the head applies (``Test set: Average loss`` → ``test_average_loss``), a
  short head that is no split word is a section of the names (``LOC: precision`` → ``loc_precision``);
- several words before a value are one name (``train loss 3.4`` → ``train_loss``); a split word
  (train, val, test, …) shared by neighbours is spelled out (``loss train: 0.5, val: 0.6`` gives
  ``train_loss`` and ``val_loss``) and a split word standing alone at a part's head names the values
  after it (``val: loss 0.6 acc 0.8``);
- the last word of a label says whether the number is a counter: ``epoch``, ``ep`` → epoch; ``step``,
  ``steps``, ``iter``, ``iteration``, ``it``, ``batch``, ``update``, ``episode``, ``round`` … → step.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from gputui.logs.naming import SPLIT_WORDS, TIME_UNITS, full_name

EPOCH_WORDS = frozenset({"epoch", "ep"})
STEP_WORDS = frozenset(
    {
        "step",
        "steps",
        "iter",
        "iters",
        "iteration",
        "iterations",
        "it",
        "global_step",
        "gstep",
        "batch",
        "update",
        "updates",
        "episode",
        "round",
        "tick",
        "generation",
    }
)
SPLITS = frozenset(
    {"train", "training", "val", "valid", "validation", "eval", "evaluation", "test", "testing", "dev"}
)
PROSE_END = frozenset(
    {"of", "on", "to", "for", "from", "with", "by", "and", "or", "per", "over", "than", "into", "the", "a"}
    | {"at", "across", "among", "using"}
)
QUANTITY_WORDS = frozenset(
    {"of", "per", "skipped", "nan", "total", "num", "number", "max", "remaining", "warmup", "decay"}
)
TIME_WORDS = frozenset({"in", "took", "after", "within"})
STATE_VERBS = frozenset({"is", "was", "are", "were", "equals", "reached", "becomes", "now"})
LEADING = frozenset({"with", "and", "the", "a", "an", "got", "has", "have", "had"})
#: Separators inside the text before a number; what follows the last one is the label.
CUT = re.compile(
    r"\s*(?:\||\t|;|,|\s{2,}|\s-\s|=>|->|\]\s*|\)\s+|\}|\*+|(?<=[a-z]{4})\.\s+(?=[A-Z])|[=:][^\s=:]+\s+)\s*"
)  # "phase=dense reward": a key's text value
PAIRS = {"(": ")", "[": "]", "{": "}"}
CLOSES = {v: k for k, v in PAIRS.items()}
FLAG = re.compile(r"--[\w-]+|-[A-Za-z]{1,2}")
PUNCTUATION = re.compile(r"[^\w]+")
WORD = re.compile(r"[(\[]?[^\W\d_][\w.@/%()\[\]'-]*|\d+[\w.@%-]*")
PROSE_WORDS_MAX = 3  # a part of the text before a number with more words than this is a sentence
LABEL_WORDS_MAX = 5
HEAD_WORDS_MAX = 2  # "LOC: precision": a head of at most this many words is a section of the names


class Label(NamedTuple):
    """What the text before a number says of it: ``kind`` is ``name`` (``text`` its label, ``""``: none),
    ``time`` (a duration: ``done in``), or ``prose`` (part of a phrase; ``text``: the words before the
    phrase, which may name the next value). ``head``: a section heading before it (``LOC:``)."""

    text: str
    opened: bool  # the text opens a bracket right before the number
    kind: str = "name"
    head: str = ""


def counter_kind(label: str) -> str | None:
    """``epoch`` or ``step`` when the label's last word names that counter, else ``None``."""
    words = label.lower().replace("_", " ").split()
    last = words[-1].strip(":#[(") if words else ""
    if any(word in QUANTITY_WORDS for word in words[:-1]):
        return None  # "number of skipped iterations: 0": a quantity, not the counter
    if len(words) > 1 and words[-2] == "best":
        return None  # "best epoch 22": which one was best, not where the run is
    if last in EPOCH_WORDS:
        return "epoch"
    if last in STEP_WORDS or label.lower().strip() == "global_step":
        return "step"
    return None


def head_of(words: list[str]) -> str:
    """The words of a label before its first little word (``Score at iteration`` → ``Score``)."""
    for i, word in enumerate(words):
        if word.lower() in PROSE_END:
            return " ".join(words[:i])
    return ""


@lru_cache(maxsize=8192)
def label_of(gap: str) -> Label | None:
    """The label at the end of the text before a number; ``None`` when the text is a sentence."""
    stripped = gap.rstrip()
    opened = stripped[-1:] in "([{"
    text = stripped.rstrip(" :=[({#@>\t")
    if not text.strip():
        return Label("", opened)
    inner = text.rfind("(")
    if inner >= 0 and ")" not in text[inner:] and text[inner + 1 :].lstrip()[:1].isalpha():
        text = text[inner + 1 :]  # "New best model saved (Dice: 0.0378)": the words inside the bracket
    pieces = CUT.split(text)
    for piece in pieces[:-1]:
        if len(piece.strip(" )]}>*#:=").split()) > PROSE_WORDS_MAX:
            return None
    last, head = _headed(_trim(pieces[-1]))
    words = [w.strip(":='\"") for w in last.split()]
    if any(FLAG.fullmatch(w) for w in words):
        return None  # "--nnodes 2", "#BSUB -n 20": a command line's settings
    words = [w.lstrip("-") for w in words]  # "-Autoencoder Loss": a separator glued to the label
    words = [w for w in words if w and not PUNCTUATION.fullmatch(w)]
    while words and words[-1].lower() in STATE_VERBS:
        words.pop()
    while len(words) > 1 and words[0].lower() in LEADING:
        words.pop(0)
    if not words:
        return Label("", opened)
    if any(WORD.fullmatch(w) is None for w in words):
        return None
    if words[-1] in PROSE_END:  # lower case only: "OR" is a name
        return Label(head_of(words), opened, "prose")
    if words[-1].lower() in TIME_WORDS:
        return Label("", opened, "time")  # "done in 12.3s": a time, if the value has a time unit
    if len(words) > LABEL_WORDS_MAX:
        return None
    return Label(" ".join(words), opened, "name", head)


def _trim(piece: str) -> str:
    """A piece without the brackets and marks around it; a bracket it closes stays (``time(ms)``)."""
    piece = piece.strip(" *#:=,")
    while piece and piece[0] in PAIRS and piece.count(piece[0]) > piece.count(PAIRS[piece[0]]):
        piece = piece[1:].lstrip(" *#:=,")
    while piece and piece[-1] in CLOSES and piece.count(piece[-1]) > piece.count(CLOSES[piece[-1]]):
        piece = piece[:-1].rstrip(" *#:=,")
    return piece


def _headed(last: str) -> tuple[str, str]:
    """``head: name`` → (the label, a section heading): the head's split word kept in the label, a short
    head of words (``LOC: precision``) a section of the names that follow."""
    head, colon, tail = last.rpartition(":")
    if not colon or not head.strip() or not tail.strip():
        return last, ""
    head_words = head.split()
    splits = [w for w in head_words if w.lower() in SPLITS]
    if splits:  # "Test set: Average loss", "val: loss", "Evaluating train: L1": a split heading
        return f"{splits[-1]} {tail}", splits[-1]
    if tail.split()[-1].lower() in SPLITS:  # "Loss: train" (0.5, val: 0.6)
        return f"{head} {tail}", ""
    if (
        len(head_words) <= HEAD_WORDS_MAX
        and len(tail.split()) == 1
        and head_words[-1].lower() != "set"
        and all(w.isalpha() for w in head_words)
    ):
        return tail, head  # "LOC: precision"
    return tail, ""  # "Model training: loss": a heading


def named(label: str, unit: str | None, section: str | None, noun: str) -> tuple[str, float, str, str | None]:
    """(name, scale, the noun neighbours may share, the section's split prefix) of a value's label."""
    words = label.split()
    low = [w.lower() for w in words]
    if len(words) >= 2 and low[-1] in SPLITS and low[0] not in SPLITS:  # "loss train"
        noun = " ".join(words[:-1])
        label = f"{words[-1]} {noun}"
        section = SPLIT_WORDS[low[-1]]
    elif len(words) >= 2 and low[0] in SPLITS:  # "train loss", "val: loss" (a heading sets the section)
        noun = " ".join(words[1:])
    elif len(words) == 1 and low[0] in SPLITS:  # "val" after "loss train"; "valid (3.2 sec)"
        section = SPLIT_WORDS[low[0]]
        if noun:
            label = f"{words[0]} {noun}"
        elif unit is not None and unit.lower() in TIME_UNITS:
            label = f"{words[0]} time"
    else:
        noun = ""
    name, scale = full_name(label, unit, section)
    return name, scale, noun, section
