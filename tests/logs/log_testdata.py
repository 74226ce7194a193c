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
