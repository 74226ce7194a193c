"""Fixtures of the log-parser tests: the peer logs and their golden files (copies in ``data/``)."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).parent / "data"
NAMES = sorted(p.stem for p in DATA.glob("*.json"))


def golden(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def log_bytes(name: str) -> bytes:
    return (DATA / f"{name}.log").read_bytes()


def parse_text(text: str, *, thin: bool = False):
    """(records, epoch rows, the one outcome event) of a log given as text."""
    from gputui.logs import parse_bytes
    from gputui.logs.epochs import EpochTable

    records = parse_bytes(text.encode(), thin=thin)
    table = EpochTable()
    table.add_all(records)
    outcome = [r for r in records if r.kind == "event" and r.get("event") == "outcome"]
    assert len(outcome) == 1
    return records, table.rows(), outcome[0]


def metrics_where(records, **match):
    """The metric records whose fields equal ``match``."""
    return [r for r in records if r.kind == "metric" and all(r.get(k) == v for k, v in match.items())]
