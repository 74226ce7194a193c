"""The one naming rule of the format-agnostic extractor: printed label + unit → metric name, scale.

Rule (``docs/log-formats.md``, *The extractor*):

1. the label is the literal text before the number (or its header column, or its entry in a list of
   names); a unit in brackets at its end (``time(ms)``, ``Mem [GiB]``, ``acc (%)``) is read as the unit;
2. the label is lower-cased; ``@`` before a digit is dropped (``Acc@1`` → ``acc1``); every run of other
   characters than letters, digits, ``/`` and ``-`` becomes one ``_`` (``Test. Acc.`` → ``test_acc``,
   ``max mem`` → ``max_mem``), trimmed at both ends;
3. the unit (glued to the value, or from the label): ``%`` adds ``_pct``; a time unit (``us``, ``ms``,
   ``s``, ``min``, ``h``, or a clock ``H:MM:SS``) gives seconds and adds ``_s``; memory (``M``/``MB``/
   ``MiB``, ``G``/``GB``/``GiB``, ``K``…) on a memory label (``mem``, ``memory``, ``alloc``, ``reserved``)
   adds ``_mib`` / ``_gib`` / ``_kib`` with the value as printed; elsewhere ``k``/``K``, ``M``, ``B``/``G``
   multiply (counts: ``tok/s 12.3k`` → 12300); no unit suffix is added twice (``step_time_s``);
4. a leading split word of the line (``Train``, ``Val``/``Valid``/``Validation``/``Eval``, ``Test``)
   prefixes every name that has no split word of its own (``Test: … Loss: 0.5`` → ``test_loss``);
5. the alias table (:mod:`gputui.stream.names`) then maps the result (``acc1`` → ``accuracy``).
"""

from __future__ import annotations

import re
from functools import lru_cache

TIME_UNITS = {
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "seconds": 1.0,
    "min": 60.0,
    "mins": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hours": 3600.0,
}
MEMORY_UNITS = {
    "k": "_kib",
    "kb": "_kb",
    "kib": "_kib",
    "m": "_mib",
    "mb": "_mb",
    "mib": "_mib",
    "g": "_gib",
    "gb": "_gb",
    "gib": "_gib",
}
ENERGY_UNITS = frozenset({"wh", "kwh", "j", "kj", "mj", "w", "kw"})
COUNT_SCALE = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9}
MEMORY_WORDS = ("mem", "memory", "alloc", "reserved", "vram")
SPLIT_WORDS = {
    "train": "",
    "training": "",
    "val": "val_",
    "valid": "val_",
    "validation": "val_",
    "eval": "val_",
    "evaluation": "val_",
    "evaluating": "val_",
    "dev": "val_",
    "test": "test_",
    "testing": "test_",
}
KNOWN_SPLITS = ("train", "val", "valid", "eval", "test", "dev")
LABEL_UNIT = re.compile(r"\s*[(\[]\s*(%|[a-zA-Zµ]{1,7})\s*[)\]]\s*$")
SEPARATORS = re.compile(r"[^a-z0-9/-]+")
AT_DIGIT = re.compile(r"@(?=\d)")
PER_SECOND = re.compile(r"(?<=[a-z])/(?:s|sec|second)$")  # a rate's name: "tokens/s" → "tokens_per_s"


@lru_cache(maxsize=4096)
def label_name(label: str) -> str:
    """Rule 2: ``Test. Acc.`` → ``test_acc``, ``Acc@1`` → ``acc1``, ``GPU Mem`` → ``gpu_mem``."""
    name = PER_SECOND.sub("_per_s", AT_DIGIT.sub("", label.strip().lower()))  # "Global Tokens/s"
    return SEPARATORS.sub("_", name).strip("_-")


def split_label(label: str) -> tuple[str, str | None]:
    """Rule 1: a label without its bracketed unit, and that unit (``time(ms)`` → ``time``, ``ms``)."""
    m = LABEL_UNIT.search(label)
    if m is None:
        return label, None
    unit = m.group(1)
    if unit == "%" or unit.lower() in TIME_UNITS or unit.lower() in MEMORY_UNITS:
        return label[: m.start()], unit
    return label, None


def is_memory(name: str) -> bool:
    return any(word in name for word in MEMORY_WORDS)


@lru_cache(maxsize=4096)
def unit_rule(name: str, unit: str | None) -> tuple[str, float]:
    """Rule 3: ``(name, unit)`` → ``(name with its unit suffix, factor to multiply the value by)``."""
    if not unit:
        return name, 1.0
    if unit == "%":
        return _suffixed(name, "_pct"), 1.0
    low = unit.lower()
    if low in TIME_UNITS and unit not in ("M", "G", "K", "B"):
        return _suffixed(name, "_s"), TIME_UNITS[low]
    if is_memory(name) and low in MEMORY_UNITS:
        return _suffixed(name, MEMORY_UNITS[low]), 1.0
    if unit in COUNT_SCALE:
        return name, COUNT_SCALE[unit]
    if low in ENERGY_UNITS:  # "Energy=31.67 Wh (114005.4 J)", "Avg Power=624.7 W"
        return _suffixed(name, "_" + low), 1.0
    return name, 1.0


def _suffixed(name: str, suffix: str) -> str:
    return name if name.endswith(suffix) else name + suffix


def line_split(body: str) -> str | None:
    """Rule 4: the name prefix a line's own leading label gives (``Test:`` → ``test_``), if any."""
    word = body.lstrip(" *#=-[(|>").split(None, 1)[:1]
    if not word:
        return None
    head = word[0].rstrip(":,]).|").lower()
    return SPLIT_WORDS.get(head)


def full_name(label: str, unit: str | None, split: str | None) -> tuple[str, float]:
    """Rules 1-4 together: printed label and unit → (name, scale)."""
    label, label_unit = split_label(label)
    name, scale = unit_rule(label_name(label), unit or label_unit)
    if split and not name.startswith(KNOWN_SPLITS):
        name = split + name
    return name, scale
