"""The corpus of real logs (``corpus/README.md``) as a measure: its scores may not drop below the figures
recorded in ``corpus/figures.json``. The logs themselves are not in the repository (the workplace keeps
what its ``fetch`` brings out of developers' commits): where they are not on the machine the test says so
and skips; ``python corpus/corpus.py materialize`` writes them from repository snapshots."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
sys.path.insert(0, str(CORPUS))

import score  # noqa: E402

import corpus  # noqa: E402

FIGURES = json.loads((CORPUS / "figures.json").read_text(encoding="utf-8"))


def _present(round_: int) -> bool:
    names = [e["name"] for e in corpus.entries() if e.get("round", 1) == round_]
    return bool(names) and all((corpus.logs_dir() / f"{n}.log").exists() for n in names)


@pytest.mark.parametrize("round_", sorted(int(r) for r in FIGURES["rounds"]))
def test_scores_hold(round_: int) -> None:
    if not _present(round_):
        pytest.skip(f"the corpus logs of round {round_} are not on this machine (corpus/README.md)")
    got = score.total(score.score_all(round_=round_))
    want = FIGURES["rounds"][str(round_)]
    assert got["values"] == want["values"], "the entries changed: record the figures again"
    assert got["recall_by_name_pct"] >= want["recall_by_name_pct"], got
    assert got["with_position_pct"] >= want["with_position_pct"], got
    assert got["outcomes_right"] >= want["outcomes_right"], got
    assert got["invented"] <= want["invented"], got


def test_entries_are_well_formed() -> None:
    """Every entry names its source byte for byte, and every checked one was read twice."""
    for entry in corpus.entries():
        source = entry["source"]
        assert len(source["commit"]) == 40 and len(source["sha256"]) == 64, entry["name"]
        assert entry["outcome"]["status"] in score.OUTCOMES, entry["name"]
        if entry.get("values"):
            assert len({c["by"] for c in entry["checks"]}) >= 2, entry["name"]
