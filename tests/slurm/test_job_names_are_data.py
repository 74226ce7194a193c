"""A job name is data: never a line, path or option of the batch script, and never a broken row.

* ``gputui run`` and the launch form refuse exactly the same names (one rule,
  :data:`gputui.slurm.batch_script.JOB_NAME`); a refused name is one line and exit status 2, with nothing
  written or submitted (before: ``$'x\\ntouch pwned'`` became a line of the script and a real job ran it).
* Jobs whose names hold ``\\x1f``, ``|``, ``,``, newlines, escapes or ``Key=`` lookalikes (Slurm 22.05.8
  takes them all, measured here with plain sbatch) are each listed once by ``gputui jobs``, with the name
  shown safe, and ``scontrol`` detail reads them right (before: ``\\x1f`` and newline names hid the job,
  and detail said UNKNOWN).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gputui.cli import main
from gputui.home.launch import LaunchForm, validate_form
from gputui.slurm.answers import read_sacct, read_squeue
from gputui.slurm.batch_script import LaunchSpec, write_script
from gputui.slurm.commands import SlurmError
from gputui.slurm.fields import FIELD_END, stray_lines
from gputui.slurm.jobs import SQUEUE_FIELDS, parse_squeue, squeue_argv
from gputui.slurm.scontrol import job_detail
from gputui.textsafe import printable

REPO = Path(__file__).resolve().parents[2]
INJECTION = "x\ntouch pwned"
ODD_NAMES = [
    "a\x1fb",
    "pipe|name",
    "comma,name",
    "two\nlines",
    "with spaces",
    "red\x1b[31mtext\x1b[0m",
    "title\x1b]0;PWNED\x07set",
    "rs\x1egs\x1dfs\x1c",
    "bidi\u202eevil",
    "x StdOut=/etc/passwd JobState=FAILED UserId=nobody(65534) GroupId=x(1)",
]


def gputui_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    return subprocess.run(
        [sys.executable, "-m", "gputui", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def state(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("GPUTUI_STATE_DIR", str(folder))
    return folder


# --------------------------------------------------------------------------- gputui run and the form


@pytest.mark.parametrize("name", [INJECTION, "../../outside", "a/b", "with space", "a%j", "x" * 65, "a\rb"])
def test_run_refuses_a_bad_name_in_one_line_before_writing(name, state, tmp_path) -> None:
    env = {**os.environ, "GPUTUI_STATE_DIR": str(state), "PATH": "/nonexistent"}  # no sbatch reachable
    for extra in (["--dry-run"], ["--no-attach"]):
        res = gputui_cli("run", f"--job-name={name}", *extra, "--", "true", env=env, cwd=tmp_path)
        assert res.returncode == 2, res
        assert res.stdout == "" and res.stderr.count("\n") == 1
        assert res.stderr.startswith("gputui: error: job name ") and "Traceback" not in res.stderr
        assert repr(name) in res.stderr  # shown escaped: the newline is \n, never a line
    assert not state.exists()  # nothing written
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_write_script_never_leaves_the_scripts_folder(state) -> None:
    with pytest.raises(SlurmError, match="job name"):
        write_script(LaunchSpec(cmd=["true"], job_name="../../escaped"))
    assert not state.exists()


def _run_accepts(name: str) -> bool:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["run", "--dry-run", f"--job-name={name}", "--", "python", "train.py"])
    assert status in (0, 2), err.getvalue()
    if status == 0 and name != "--":  # an accepted name is one word of its #SBATCH line (argparse drops "--")
        assert f"#SBATCH --job-name={name or 'train.py'}\n" in out.getvalue()
    return status == 0


def _form_accepts(name: str) -> bool:
    _spec, errors = validate_form(LaunchForm(command="python train.py", job_name=name))
    assert set(errors) <= {"job_name"}
    return not errors


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=70) | st.from_regex(r"[A-Za-z0-9_.+-]{0,66}", fullmatch=True))
def test_run_and_the_form_refuse_the_same_names(name: str) -> None:
    if "\x00" in name:
        name = name.replace("\x00", "")  # argv cannot carry NUL
    assert _run_accepts(name) == _form_accepts(name), name


# --------------------------------------------------------------------------- rows no name can break


def _squeue_row(job_id: int, name: str) -> str:
    values = dict.fromkeys((attr for _, attr in SQUEUE_FIELDS), "N/A")
    values.update(raw_job_id=str(job_id), name=name, user="me", state="PENDING", work_dir="/w")
    values.update(stdout_raw="/w/%x-%j.out", time_limit="5:00", num_nodes="1")
    return "".join(values[attr] + FIELD_END for _, attr in SQUEUE_FIELDS) + "\n"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=4))
def test_any_names_keep_their_rows(names: list[str]) -> None:
    names = [n.replace("\r", "\n") for n in names]  # what reading squeue's output as text gives
    jobs = parse_squeue("".join(_squeue_row(100 + i, n) for i, n in enumerate(names)))
    assert [j.job_id for j in jobs] == [str(100 + i) for i in range(len(names))]
    assert [j.name for j in jobs] == [printable(n) for n in names]
    assert [j.stdout for j in jobs] == [f"/w/{n}-{100 + i}.out" for i, n in enumerate(names)]  # raw path


def test_stray_lines_are_what_no_row_holds() -> None:
    text = _squeue_row(1, "two\nlines") + "squeue: warning\n" + _squeue_row(2, "b") + "3" + FIELD_END
    assert [j.job_id for j in parse_squeue(text)] == ["1", "2"]
    assert stray_lines(text, len(SQUEUE_FIELDS)) == ["squeue: warning", "3" + FIELD_END]


def test_answers_count_no_odd_name_as_an_unreadable_row() -> None:
    ok = subprocess.CompletedProcess(["x"], 0, "", "")
    ok.stdout = "".join(_squeue_row(100 + i, n) for i, n in enumerate(ODD_NAMES))
    answer = read_squeue(ok)
    assert (len(answer.jobs), answer.unreadable, answer.note) == (len(ODD_NAMES), 0, "")
    values = ["7", "two\nlines\x1fx", "me", "FAILED", "gpu", "", "1", "n1", "00:01:00", "01:00:00"]
    values += ["2027-01-15T07:00:00", "2027-01-15T07:00:01", "2027-01-15T07:01:01", "/w", "1:0"]
    ok.stdout = "".join(v + FIELD_END for v in values) + "\n"  # sacct -p --delimiter=FIELD_END
    answer = read_sacct(ok)
    assert [(j.job_id, j.name, j.state) for j in answer.jobs] == [("7", "two\\nlines\\x1fx", "FAILED")]
    assert answer.unreadable == 0


def test_every_squeue_field_ends_with_the_unguessable_separator() -> None:
    fields = squeue_argv()[-1].split(",")
    assert fields == [f"{name}:{FIELD_END}" for name, _ in SQUEUE_FIELDS]
    assert len(FIELD_END) == 17 and FIELD_END.startswith("\x1f")


# --------------------------------------------------------------------------- the real cluster


@pytest.mark.slurm
def test_the_injection_name_runs_nothing_on_the_cluster(slurm_cluster, tmp_path) -> None:
    env = {**slurm_cluster.env, "GPUTUI_STATE_DIR": str(tmp_path / "state")}
    options = ["--nodes", "2", "--time", "2", "--no-attach", "--", "true"]
    res = gputui_cli("run", "--job-name", INJECTION, *options, env=env, cwd=tmp_path)
    assert res.returncode == 2 and "job name 'x\\ntouch pwned'" in res.stderr, res
    assert "submitted" not in res.stdout
    res = gputui_cli("run", "--job-name", "names-are-data", *options, env=env, cwd=tmp_path)
    assert res.returncode == 0, res
    job_id = res.stdout.split()[2]
    detail = subprocess.run(
        ["scontrol", "show", "job", "-o", job_id], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert re.search(r"\bNumNodes=2\b", detail) and "TimeLimit=00:02:00" in detail, detail  # all held
    assert not (tmp_path / "pwned").exists()


@pytest.mark.slurm
def test_odd_names_never_hide_a_job(slurm_cluster, tmp_path) -> None:
    env = slurm_cluster.env
    ids = {}
    try:
        for name in ODD_NAMES:  # held: pending, listed by squeue, no node taken
            out = str(tmp_path / "%x-%j.out")
            res = subprocess.run(
                ["sbatch", "--parsable", "--hold", f"--job-name={name}", "-o", out, "--wrap", "true"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            ids[res.stdout.strip()] = name  # Slurm 22.05.8 takes every one of them
        listed = gputui_cli("jobs", "--all", env=env)
        assert listed.returncode == 0, listed
        assert "\x1b" not in listed.stdout and "\u202e" not in listed.stdout
        as_json = {j["job_id"]: j for j in json.loads(gputui_cli("jobs", "--json", env=env).stdout)}
        for job_id, name in ids.items():
            assert as_json[job_id]["name"] == printable(name)
            assert as_json[job_id]["state"] == "PENDING"
            assert as_json[job_id]["stdout"] == str(tmp_path / f"{name}-{job_id}.out")  # the real path
            assert any(line.startswith(f"{job_id} ") for line in listed.stdout.splitlines()), job_id
            detail = job_detail(job_id, env=env)
            assert (detail.name, detail.state, detail.uid) == (printable(name), "PENDING", os.getuid())
            assert detail.stdout == str(tmp_path / f"{name}-{job_id}.out")
    finally:
        subprocess.run(["scancel", *ids], env=env, check=False)
