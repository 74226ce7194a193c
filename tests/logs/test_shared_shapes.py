"""One line shape, one reading: the extractor and the generic parser share it, and so do a log's ranks
(issue 22.7: the extractor made full parsing slower by working out each line's shape twice per rank)."""

from __future__ import annotations

import pytest

from gputui.logs import LogParser, tokens
from gputui.logs.formats import extract, generic

LINES = [
    "step 10 | loss: 2.5000 | lr 6.0000e-05 | dt: 312.50ms",
    "[2024-05-01 12:00:00,123] INFO epoch 3, train loss = 0.7000, acc: 91.5%",
    "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default",
    "Validation accuracy: 0.27",
]


def _labelled(ranks: int, copies: int) -> bytes:
    """``srun --label`` output: every rank prints every line ``copies`` times with other numbers."""
    out = []
    for copy in range(copies):
        for rank in range(ranks):
            for line in LINES:
                out.append(f"{rank}: {line.replace('0', str(copy % 10))}\n")
    return "".join(out).encode()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    calls = {"plan_of": 0, "read_line": 0}

    def count(name: str, module: object, real: object) -> None:
        def wrapper(*args: object) -> object:
            calls[name] += 1
            return real(*args)  # type: ignore[operator]

        monkeypatch.setattr(module, name, wrapper)

    count("plan_of", generic, generic.plan_of)
    count("read_line", extract, tokens.read_line)
    return calls


def test_each_shape_is_planned_once_for_all_ranks(counted: dict[str, int]) -> None:
    parser = LogParser()
    records = parser.feed(_labelled(ranks=4, copies=5)) + parser.finish()
    assert any(r.kind == "metric" and r.get("rank") == 3 for r in records)
    # four line shapes, whatever the ranks and the numbers: each read once by each parser at most
    assert counted["read_line"] <= len(LINES)
    assert counted["plan_of"] <= len(LINES)


def test_shared_reading_gives_what_separate_parsers_give() -> None:
    data = _labelled(ranks=3, copies=4)
    shared = LogParser().feed(data)
    per_rank = []
    for rank in range(3):  # each rank alone, in a fresh parser: no shape seen before
        lines = [line for line in data.splitlines(keepends=True) if line.startswith(f"{rank}: ".encode())]
        per_rank.append(LogParser().feed(b"".join(lines)))
    key = [(r["name"], r["value"], r.get("step"), r.get("epoch"), r.get("scope")) for r in shared]
    for rank, alone in enumerate(per_rank):
        mine = [k for k, r in zip(key, shared, strict=True) if r.get("rank") == rank]
        assert mine == [(r["name"], r["value"], r.get("step"), r.get("epoch"), r.get("scope")) for r in alone]
