"""Helpers for the reference-trainer tests: run a trainer, pick its records out of stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence

from gputui.stream.io import STDOUT_PREFIX
from gputui.stream.records import Record, record_from_json_dict

PYTHON = sys.executable
TORCH_DDP = [PYTHON, "-m", "gputui.trainers.torch_ddp"]
TF_KERAS = [PYTHON, "-m", "gputui.trainers.tf_keras"]
QUIET = {"OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1", "TF_CPP_MIN_LOG_LEVEL": "2"}


def records_from(stdout: str, kind: str = "metric") -> list[Record]:
    """The gputui records of ``kind`` a trainer printed (``@gputui {json}`` lines), validated."""
    out = []
    for line in stdout.splitlines():
        if line.startswith(STDOUT_PREFIX):
            record = record_from_json_dict(json.loads(line[len(STDOUT_PREFIX) :]))
            if record.kind == kind:
                out.append(record)
    return out


def values(records: list[Record], name: str, rank: int | None = None) -> list[float]:
    return [r["value"] for r in records if r["name"] == name and (rank is None or r.get("rank") == rank)]


def run(
    argv: Sequence[str], env: dict[str, str] | None = None, timeout: float = 240
) -> subprocess.CompletedProcess:
    full = {**os.environ, **QUIET, **(env or {})}
    return subprocess.run(
        list(argv), env=full, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )
