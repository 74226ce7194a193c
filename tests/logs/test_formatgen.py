"""Generality by construction (issue 22): 1,000 drawn log formats, their values recovered.

Each seed draws a format (:mod:`formatgen`) and writes a log with known values; the parser must give
at least 95 % of them with the right name, epoch and step, and no value from the non-metric lines
(config dumps, prose, model printouts, progress bars) around them.
"""

from __future__ import annotations

from collections import Counter

from formatgen import Log, make_log

from gputui.logs import parse_bytes

SEEDS = range(1000)


def _key(value: float) -> float:
    return float(f"{value:.9g}")


def score(log: Log) -> tuple[int, int, list]:
    """(values recovered, values printed, records whose value no metric line printed)."""
    got: Counter = Counter()
    foreign = []
    for record in parse_bytes(log.text):
        if record.kind != "metric":
            continue
        f = record.fields
        got[(f["name"], f.get("epoch"), f.get("step"), _key(f["value"]))] += 1
        if _key(f["value"]) not in {_key(v) for v in log.printed}:
            foreign.append((f["name"], f["value"]))
    found = 0
    for value in log.values:
        key = (value.name, value.epoch, value.step, _key(value.value))
        if got[key] > 0:
            got[key] -= 1
            found += 1
    return found, len(log.values), foreign


def measure(seeds=SEEDS) -> tuple[float, int, list]:
    found = total = 0
    foreign: list = []
    for seed in seeds:
        f, t, bad = score(make_log(seed))
        found, total = found + f, total + t
        foreign += [(seed, *b) for b in bad]
    return found / total, total, foreign


def test_generated_formats_are_read() -> None:
    rate, total, foreign = measure()
    assert total > 20_000
    assert rate >= 0.95, f"{rate:.3f} of {total} values recovered"
    assert foreign == [], foreign[:10]


def test_the_generator_is_deterministic() -> None:
    assert make_log(7).text == make_log(7).text
    assert make_log(7).values == make_log(7).values
    assert len({make_log(s).text for s in range(20)}) == 20
