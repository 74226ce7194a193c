"""The one rule for the log parsers' memo caches: a bounded dict, emptied whole when full.

The parsers remember what they worked out per line *shape* (:data:`DIGITS`: the line with its digits
1-9 read as 0), per printed name or per printed second. Such a cache is a plain dict read with
``cache.get(key)`` (the hot path stays one C-level lookup); a miss stores its value with
:func:`remember`, which keeps the dict to ``bound`` entries by emptying it when it is full. Emptying,
not evicting one entry: a log's lines of metrics repeat, so the shapes in use come back at once, and
nothing is paid per hit to track recency (``functools.lru_cache`` is keyed by the arguments of the
function it wraps, and a shape's reading is worked out from the line, not from its shape).
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")

DIGITS = bytes.maketrans(b"123456789", b"000000000")  # line.encode().translate(DIGITS): its shape


def remember(cache: dict[K, V], key: K, value: V, bound: int) -> V:
    """``value``, stored under ``key`` in ``cache``; a cache already holding ``bound`` entries is
    emptied first, so it never holds more than ``bound``."""
    if len(cache) >= bound:
        cache.clear()
    cache[key] = value
    return value
