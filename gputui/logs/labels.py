"""The label of a number: the words before it on its line, and what they make it (a counter or a name).

Rules (``docs/log-formats.md``, *The extractor*):

- the label is the text between the previous number and this one, without the ``:``/``=`` and
  brackets that lead to the value, cut at the last separator (``|``, tab, ``;``, ``,``, two spaces,
  `` - ``, ``=>``, a closing bracket followed by a space); words that only state it (``is``, ``was``,
  ``=``) end it, little words that start it (``with``, ``and``, ``the``) are dropped;
- a label that ends in a little word (``5 of 10``, ``started with 4``) is prose: no label; ``in``,
  ``took``, ``after`` before a duration name a time (``done in 12.3s``);
- several words before a value are one name (``train loss 3.4`` → ``train_loss``); a split word
  (train, val, test, …) shared by neighbours is spelled out (``loss train: 0.5, val: 0.6`` gives
  ``train_loss`` and ``val_loss``) and a split word standing alone at a part's head names the values
  after it (``val: loss 0.6 acc 0.8``);
- the last word of a label says whether the number is a counter: ``epoch``, ``ep`` → epoch; ``step``,
  ``iter``, ``iteration``, ``it``, ``batch``, ``update``, ``episode``, ``round`` … → step.
"""

from __future__ import annotations

import re
from functools import lru_cache

from gputui.logs.naming import SPLIT_WORDS, full_name

EPOCH_WORDS = frozenset({"epoch", "ep"})
STEP_WORDS = frozenset(
    {
        "step",
        "iter",
        "iters",
        "iteration",
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
    | {"at"}
)
TIME_WORDS = frozenset({"in", "took", "after", "within"})
STATE_VERBS = frozenset({"is", "was", "are", "were", "equals", "reached", "becomes", "now"})
LEADING = frozenset({"with", "and", "the", "a", "an", "current", "got", "has", "have", "had"})
#: Separators inside the text before a number; what follows the last one is the label.
CUT = re.compile(r"\s*(?:\||\t|;|,|\s{2,}|\s-\s|=>|->|\]\s*|\)\s+|\}|\*+)\s*")
PUNCTUATION = re.compile(r"[^\w]+")
WORD = re.compile(r"[^\W\d_][\w.@/%()\[\]'-]*|\d+[\w.@%-]*")
PROSE_WORDS_MAX = 3  # a part of the text before a number with more words than this is a sentence
LABEL_WORDS_MAX = 5


def counter_kind(label: str) -> str | None:
    """``epoch`` or ``step`` when the label's last word names that counter, else ``None``."""
    words = label.lower().replace("_", " ").split()
    last = words[-1].strip(":#[(") if words else ""
    if last in EPOCH_WORDS:
        return "epoch"
    if last in STEP_WORDS or label.lower().strip() == "global_step":
        return "step"
    return None


@lru_cache(maxsize=8192)
def label_of(gap: str) -> tuple[str, bool] | None:
    """The label at the end of the text before a number and whether that text opens a bracket;
    ``None`` when the text is prose (words that are no label stand before the number)."""
    stripped = gap.rstrip()
    opened = stripped[-1:] in "([{"
    text = stripped.rstrip(" :=[({#@>\t")
    if not text.strip():
        return "", opened
    pieces = CUT.split(text)
    for piece in pieces[:-1]:
        if len(piece.strip(" )]}>*#:=").split()) > PROSE_WORDS_MAX:
            return None
    last = pieces[-1].strip(" ()[]{}*#:=,")
    head, colon, tail = last.rpartition(":")
    if colon and head.strip() and tail.strip():
        if head.split()[0].lower() in SPLITS:  # "Test set: Average loss", "val: loss"
            last = f"{head.split()[0]} {tail}"
        elif tail.split()[-1].lower() in SPLITS:  # "Loss: train" (0.5, val: 0.6)
            last = f"{head} {tail}"
        else:  # "Model: loss": the head is a heading
            last = tail
    words = [w.strip(":=") for w in last.split()]
    words = [w for w in words if w and not PUNCTUATION.fullmatch(w)]
    while words and words[-1].lower() in STATE_VERBS:
        words.pop()
    while len(words) > 1 and words[0].lower() in LEADING:
        words.pop(0)
    if not words:
        return "", opened
    if len(words) > LABEL_WORDS_MAX or any(WORD.fullmatch(w) is None for w in words):
        return None
    if words[-1].lower() in PROSE_END:
        return None
    if words[-1].lower() in TIME_WORDS:
        return "@time", opened  # "done in 12.3s": a time, if the value has a time unit
    return " ".join(words), opened


def named(label: str, unit: str | None, section: str | None, noun: str) -> tuple[str, float, str, str | None]:
    """(name, scale, the noun neighbours may share, the section's split prefix) of a value's label."""
    words = label.split()
    low = [w.lower() for w in words]
    if len(words) >= 2 and low[-1] in SPLITS and low[0] not in SPLITS:  # "loss train"
        noun = " ".join(words[:-1])
        label = f"{words[-1]} {noun}"
        section = SPLIT_WORDS[low[-1]]
    elif len(words) >= 2 and low[0] in SPLITS:  # "train loss", "val: loss"
        noun = " ".join(words[1:])
        section = SPLIT_WORDS[low[0]]
    elif len(words) == 1 and low[0] in SPLITS and noun:  # "val" after "loss train"
        label = f"{words[0]} {noun}"
        section = SPLIT_WORDS[low[0]]
    else:
        noun = ""
    name, scale = full_name(label, unit, section)
    return name, scale, noun, section
