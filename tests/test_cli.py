"""The command line as a person types it (the real console script in a subprocess)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gputui import __version__, cli
from gputui.stream import records
from gputui.stream.io import RecordWriter

GPUTUI = [sys.executable, "-m", "gputui"]


def run(*argv: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GPUTUI, *argv], capture_output=True, text=True, timeout=60, **kwargs)


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"gputui {__version__}"


def test_help_lists_every_command() -> None:
    out = run("--help").stdout
    for command in (
        "attach",
        "run",
        "probe",
        "replay",
        "report",
        "scale",
        "demo",
        "jobs",
        "cancel",
        "hold",
        "release",
        "parse",
        "check",
    ):
        assert f"    {command} " in out
    assert "--log FILE" in out


def test_console_script_is_installed() -> None:
    script = shutil.which("gputui", path=os.path.dirname(sys.executable))
    assert script is not None
    assert subprocess.run([script, "--version"], capture_output=True, text=True, timeout=60).returncode == 0


def test_every_command_has_an_implementation() -> None:
    """Every sub-command of ``--help`` resolves to a function (no command is left unbuilt)."""
    commands = cli.build_parser()._subparsers._group_actions[0].choices
    for command in commands:
        assert callable(cli._resolve(command)), command


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--interval", "0", "probe"], "must be from 0.001 to 86400 s"),
        (["probe", "--count", "x"], "not a whole number"),
        (["frobnicate"], "invalid choice"),
        (["--log", "x", "jobs"], "takes no command"),
    ],
)
def test_bad_arguments_are_usage_errors(argv: list[str], message: str) -> None:
    result = run(*argv)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_check_reports_what_a_reader_skips(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with RecordWriter(path) as writer:
        writer.write(records.metric("loss", 1.0, time=1.0))
        writer.write(records.host_sample(host="n1", time=1.0, cpu_pct=3.0))
    assert run("check", str(path)).stdout.strip() == f"{path}: read 2 records (1 host, 1 metric)"
    with open(path, "ab") as f:
        f.write(b'garbage\n{"v":1')
    result = run("check", str(path))
    assert result.returncode == 1
    assert "skipped 2 lines (1 malformed, 1 truncated)" in result.stdout


def test_check_of_a_missing_file_is_one_line(tmp_path: Path) -> None:
    result = run("check", str(tmp_path / "nope.jsonl"))
    assert result.returncode == 1
    assert (
        result.stderr.strip()
        == f"gputui: error: cannot read {tmp_path / 'nope.jsonl'}: No such file or directory"
    )


def test_record_files_are_plain_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with RecordWriter(path) as writer:
        writer.write(records.event("probe_started", message="hi", time=3.0))
    assert json.loads(path.read_text()) == {
        "v": 1,
        "kind": "event",
        "time": 3.0,
        "event": "probe_started",
        "message": "hi",
    }


def test_parse_into_a_closed_pipe_stops_quietly() -> None:
    """``gputui parse --json big.log | head -1``: exit 0, no 'cannot read' error, no traceback."""
    log = Path(__file__).parent / "logs" / "data" / "hf_deepspeed_oom_nccl_watchdog.log"
    proc = subprocess.Popen(
        [*GPUTUI, "parse", "--json", str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b'{"v":1')
    proc.stdout.close()  # the reader goes away with most of the ~500 kB of records unread
    with proc.stderr:
        stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert stderr == ""
