"""gputui.slurm.answers: an empty list only when squeue/sacct really answered with none; garbage fails."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gputui.slurm.answers import read_sacct, read_squeue
from gputui.slurm.commands import SlurmError
from gputui.slurm.fields import FIELD_END
from gputui.slurm.jobs import SEP, AccountingDisabled

DATA = Path(__file__).parent / "data"
SQUEUE_OUT = (DATA / "squeue-22.05-O.txt").read_text()  # 5 jobs


def done(stdout: str = "", stderr: str = "", rc: int = 0) -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess(["squeue"], rc, stdout, stderr)


def test_empty_output_is_no_jobs() -> None:
    answer = read_squeue(done("\n"))
    assert (answer.jobs, answer.unreadable, answer.note) == ([], 0, "")
    assert read_squeue(done('{"jobs": []}'), use_json=True).jobs == []


def test_a_newline_in_a_name_breaks_no_row_and_stray_lines_are_counted() -> None:
    """squeue's real format (every field ended by FIELD_END): a name with a newline is one job; a header
    and a row cut short are counted, the others shown."""
    rows = [line.replace(SEP, FIELD_END) for line in SQUEUE_OUT.splitlines()]
    rows[0] = rows[0].replace(f"{FIELD_END}held{FIELD_END}", f"{FIELD_END}he\nld{FIELD_END}")
    answer = read_squeue(done("\n".join(rows) + "\n"))
    assert (len(answer.jobs), answer.unreadable) == (5, 0)
    assert answer.jobs[0].job_id == "26"
    cut = rows[1][: rows[1].index(FIELD_END) * 3]
    answer = read_squeue(done("JOBID NAME\n" + "\n".join(rows) + "\n" + cut))
    assert (len(answer.jobs), answer.rows, answer.unreadable) == (5, 7, 2)
    assert answer.note == "2 of 7 rows unreadable, skipped (the others are shown)"


def test_a_row_with_a_garbage_job_id_is_skipped_not_the_whole_answer() -> None:
    first, *rest = SQUEUE_OUT.splitlines(keepends=True)
    bad = "x" + first[first.index(SEP) :]  # JobID "x": no job id to read
    answer = read_squeue(done(bad + "".join(rest)))
    assert (len(answer.jobs), answer.unreadable) == (4, 1)


@pytest.mark.parametrize(
    ("res", "use_json", "message"),
    [
        (done("", "squeue: error: Invalid user\n", 1), False, "squeue: error: Invalid user"),
        (done("", "slurm_load_jobs error: x\n", 1), False, "squeue: slurm_load_jobs error: x"),
        (done("a\nb\n"), False, "squeue output unreadable (no job row in 2 lines; first: 'a')"),
        (done(""), True, "squeue --json printed nothing"),
        (done("{}"), True, "squeue output unreadable (ValueError: not squeue's document: no list of jobs)"),
        (done('{"jobs": ['), True, "squeue output unreadable (JSONDecodeError: Expecting value: line 1 "),
    ],
    ids=["exit-own-prefix", "exit", "garbage", "json-empty", "json-no-jobs", "json-cut"],
)
def test_failures_are_one_line_errors(res, use_json: bool, message: str) -> None:
    with pytest.raises(SlurmError) as err:
        read_squeue(res, use_json=use_json)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_sacct_garbage_fails_and_accounting_disabled_is_said() -> None:
    with pytest.raises(
        SlurmError, match=r"^sacct output unreadable \(no job row in 1 line; first: '<html>'\)$"
    ):
        read_sacct(done("<html>\n"))
    disabled = (DATA / "sacct-22.05-disabled.txt").read_text()
    with pytest.raises(AccountingDisabled):
        read_sacct(done("", disabled, 1))
    assert read_sacct(done("")).jobs == []


def test_a_garbage_job_id_in_the_real_format_skips_that_row_only() -> None:
    rows = [line.replace(SEP, FIELD_END) for line in SQUEUE_OUT.splitlines()]
    rows[0] = "x" + rows[0][rows[0].index(FIELD_END) :]
    answer = read_squeue(done("\n".join(rows) + "\n"))
    assert (len(answer.jobs), answer.unreadable) == (4, 1)
