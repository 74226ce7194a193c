"""Telling a Slurm answer from garbage: an empty list only when Slurm really answered with nothing.

``squeue`` (and ``sacct``) answered when the exit status is 0 and the output is job rows. An empty output
is a real answer: no jobs. A non-zero exit, JSON that does not parse (or is not squeue's document), or an
output in which no row is a job (a proxy's HTML page, a header alone, random text) is a failure, raised
as one-line :class:`SlurmError`, never "no jobs". Some unreadable rows among good ones: the good rows,
and the count of the others for a note (:attr:`Answer.note`).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass

from gputui.slurm import sacct
from gputui.slurm.commands import SlurmError, last_line
from gputui.slurm.fields import FIELD_END, split_rows, stray_lines
from gputui.slurm.jobs import SEP, SQUEUE_FIELDS, Job, jobs_from_json, parse_squeue

#: What a row that is not a job raises in the parsers (a garbage job id, a field of the wrong type).
PARSE_ERRORS = (ValueError, TypeError, AttributeError, KeyError, IndexError)


@dataclass
class Answer:
    """The jobs of one answer, and how many of its non-blank rows were not jobs."""

    jobs: list[Job]
    rows: int = 0
    unreadable: int = 0

    @property
    def note(self) -> str:
        """One line when rows were skipped, else empty."""
        if not self.unreadable:
            return ""
        return f"{self.unreadable} of {self.rows} rows unreadable, skipped (the others are shown)"


def _failed(command: str, res: subprocess.CompletedProcess) -> SlurmError:
    why = last_line(res.stderr) or f"exit status {res.returncode}"
    return SlurmError(why if why.startswith(f"{command}: ") else f"{command}: {why}")


def _unreadable(command: str, rows: list[str]) -> SlurmError:
    """Output of which no row is a job: one line quoting the start of the first (escaped)."""
    first = rows[0].replace(SEP, "|")
    sample = f"{first[:24]}…" if len(first) > 24 else first
    lines = f"{len(rows)} line{'s' if len(rows) != 1 else ''}"
    return SlurmError(f"{command} output unreadable (no job row in {lines}; first: {sample!r})")


def read_squeue(
    res: subprocess.CompletedProcess, *, use_json: bool = False, user: str | None = None
) -> Answer:
    """My jobs from one ``squeue -O`` (or ``squeue --json``) answer; :class:`SlurmError` when it is none."""
    if res.returncode != 0:
        raise _failed("squeue", res)
    if use_json:
        return Answer(_squeue_json(res.stdout, user))
    rows = [line for line in res.stdout.splitlines() if line.strip()]
    try:
        jobs = parse_squeue(res.stdout)
    except PARSE_ERRORS:  # a row with the right fields but garbage in one (a job id): row by row
        jobs = _row_by_row(res.stdout)
    if rows and not jobs:
        raise _unreadable("squeue", rows)
    unreadable = _unreadable_rows(res.stdout, len(jobs))
    return Answer(jobs, len(jobs) + unreadable, unreadable)


def _unreadable_rows(text: str, parsed: int) -> int:
    """Lines that are in no row (a header, an error page, a row cut short), plus rows that did not read as
    a job. Counted by :func:`gputui.slurm.fields.stray_lines`: a job name's newline is inside its row."""
    count = len(SQUEUE_FIELDS)
    return len(stray_lines(text, count)) + max(0, len(split_rows(text, count)) - parsed)


def _row_by_row(text: str) -> list[Job]:
    """The jobs of the rows that read, each row parsed alone."""
    end = FIELD_END if FIELD_END in text else SEP
    jobs: list[Job] = []
    for parts in split_rows(text, len(SQUEUE_FIELDS)):
        try:
            jobs += parse_squeue("".join(part + end for part in parts))
        except PARSE_ERRORS:
            continue
    return jobs


def _squeue_json(text: str, user: str | None) -> list[Job]:
    if not text.strip():
        raise SlurmError("squeue --json printed nothing")
    try:
        doc = json.loads(text)
        if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
            raise ValueError("not squeue's document: no list of jobs")
        return jobs_from_json(doc, user=user)
    except PARSE_ERRORS as exc:  # json.JSONDecodeError is a ValueError
        raise SlurmError(f"squeue output unreadable ({type(exc).__name__}: {str(exc)[:80]})") from None


def read_sacct(res: subprocess.CompletedProcess) -> Answer:
    """Ended jobs from one :func:`gputui.slurm.sacct.recent_argv` answer; :class:`SlurmError` when it is
    none (:class:`~gputui.slurm.jobs.AccountingDisabled` when the cluster keeps no accounting)."""
    jobs = sacct.parse_recent(res.stdout, res.stderr, res.returncode)
    rows = [line for line in res.stdout.splitlines() if line.strip()]
    count = len(sacct.SACCT_FIELDS)  # rows of `sacct -p` ended by FIELD_END: a name never breaks one
    bad = len(stray_lines(res.stdout, count, old_lines_ended=False))
    good = len(split_rows(res.stdout, count, old_lines_ended=False))
    if rows and not good:
        raise _unreadable("sacct", rows)
    return Answer(jobs, good + bad, bad)
