"""The parsers' memo caches share one rule (gputui.logs.bounded): at most ``bound`` entries, emptied
whole when full (not evicted one by one, and not left full with new shapes uncached)."""

from __future__ import annotations

import pytest

from gputui.logs.base import Context
from gputui.logs.bounded import remember
from gputui.logs.formats import extract, generic

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]


def test_a_full_cache_is_emptied_before_the_new_entry_is_stored() -> None:
    cache: dict[str, int] = {}
    assert [remember(cache, key, n, bound=3) for n, key in enumerate("abc")] == [0, 1, 2]
    assert cache == {"a": 0, "b": 1, "c": 2}
    assert remember(cache, "d", 3, bound=3) == 3
    assert cache == {"d": 3}


def _metric_line(word: str, step: int) -> str:
    return f"{word} step {step} loss: 0.{step}5"  # one shape per word, whatever the step


def test_the_extractor_shape_cache_is_emptied_at_its_bound_and_reading_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(extract, "MAX_SHAPES", 4)
    ctx = Context(rank=None)
    for step, word in enumerate(WORDS[:4], start=1):
        assert extract.FALLBACK.parse(_metric_line(word, step), ctx, 0.0)
    assert len(ctx.shapes) == 4
    records = extract.FALLBACK.parse(_metric_line(WORDS[4], 7), ctx, 0.0)
    assert len(ctx.shapes) == 1  # emptied, then the new shape stored
    assert [(r.get("name"), r.get("value"), r.get("step")) for r in records or []] == [("loss", 0.75, 7)]
    again = extract.FALLBACK.parse(_metric_line(WORDS[0], 8), ctx, 0.0)  # a forgotten shape is read again
    assert again and again[0].get("value") == 0.85 and len(ctx.shapes) == 2


def test_the_generic_plan_cache_is_emptied_at_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generic, "MAX_PLANS", 3)
    ctx = Context(rank=None)
    sizes = []
    for step, word in enumerate(WORDS, start=1):
        assert generic.PARSER.parse(_metric_line(word, step), ctx, 0.0)
        sizes.append(len(ctx.plans))
    assert sizes == [1, 2, 3, 1, 2, 3]
