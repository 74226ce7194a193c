"""Job id validation: done before any Slurm command runs.

Accepted: a plain id ``123``, an array task ``123_4``, a heterogeneous component ``123+1``. Anything
else (``123;rm``, ``-1``, ``123_``, ``abc``) is rejected with a one-line :class:`JobIdError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_JOBID = re.compile(r"^(\d{1,12})(?:_(\d{1,9})|\+(\d{1,4}))?$")


class JobIdError(ValueError):
    """Not a Slurm job id; ``str()`` is one line for the user."""


@dataclass(frozen=True, slots=True)
class JobId:
    base: int
    array_task: int | None = None
    het_offset: int | None = None

    def __str__(self) -> str:
        if self.array_task is not None:
            return f"{self.base}_{self.array_task}"
        if self.het_offset is not None:
            return f"{self.base}+{self.het_offset}"
        return str(self.base)


def parse_jobid(text: str) -> JobId:
    """Parse and validate a job id, or raise :class:`JobIdError`."""
    raw = str(text).strip()
    match = _JOBID.match(raw)
    if match is None or int(match.group(1)) == 0:
        shown = raw if len(raw) <= 40 else raw[:40] + "..."
        raise JobIdError(f"{shown!r} is not a Slurm job id (expected 123, array 123_4 or het 123+1)")
    task, het = match.group(2), match.group(3)
    return JobId(int(match.group(1)), int(task) if task else None, int(het) if het else None)


def validate_jobid(text: str) -> str:
    """The canonical text of a valid job id, or :class:`JobIdError`."""
    return str(parse_jobid(text))
