"""Unit tests of gputui.slurm without a cluster: parsers on captured Slurm 22.05.8 output
(``data/*-22.05*``), the 23.11+ ``--json`` shape on a fixture **written from Slurm's documentation**
(``data/squeue-23.11.json``: only 22.05 can run here), the filename-pattern expander, job ids, the batch
script (golden files) and the local launcher."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gputui import distenv
from gputui.cli import main as cli_main
from gputui.slurm import jsonshape
from gputui.slurm.batch_script import PATTERNS, LaunchSpec, render
from gputui.slurm.cancel import normalize_signal
from gputui.slurm.commands import SlurmError, SlurmNotFound, run_slurm, slurm_env
from gputui.slurm.jobid import JobIdError, parse_jobid, validate_jobid
from gputui.slurm.jobs import check_mine, jobs_from_json, parse_duration, parse_gres_idx, parse_squeue
from gputui.slurm.launch_local import launch_local
from gputui.slurm.sacct import parse_sacct
from gputui.slurm.scontrol import parse_scontrol_job, split_scontrol
from gputui.slurm.stdout_path import NO_ARRAY_TASK, PatternContext, expand_pattern, resolve_stdout
from gputui.slurm.version import SlurmVersion, overlap_problem, overlap_warning, parse_version
from gputui.stream.io import parse_prefixed

DATA = Path(__file__).parent / "data"


# --------------------------------------------------------------------------- job ids


@pytest.mark.parametrize("text,canonical", [("123", "123"), (" 42_7 ", "42_7"), ("900+1", "900+1")])
def test_valid_job_ids(text: str, canonical: str) -> None:
    assert validate_jobid(text) == canonical


@pytest.mark.parametrize(
    "text", ["", "abc", "12;rm -rf /", "-1", "0", "12_", "12+", "12_3_4", "1 2", "$(id)", "12.0"]
)
def test_invalid_job_ids_are_one_line_errors(text: str) -> None:
    with pytest.raises(JobIdError) as err:
        parse_jobid(text)
    assert "\n" not in str(err.value)


# --------------------------------------------------------------------------- filename patterns


def _ctx(**kw) -> PatternContext:
    base = dict(job_id=42, job_name="train", user="alice", first_node="gpu07.cluster", work_dir="/w")
    base.update(kw)
    return PatternContext(**base)


@pytest.mark.parametrize(
    "pattern,expected",
    [
        ("slurm-%j.out", "/w/slurm-42.out"),
        ("%x-%j.out", "/w/train-42.out"),
        ("/abs/%u/%N-%n-%t-%s.log", "/abs/alice/gpu07-0-0-batch.log"),
        ("%4j-%10j", "/w/0042-0000000042"),
        ("%12j", "/w/0000000042"),  # width is capped at 10
        ("100%%-%J", "/w/100%-42"),
        ("%A_%a", f"/w/42_{NO_ARRAY_TASK}"),
        ("%b", f"/w/{NO_ARRAY_TASK % 10}"),
        ("a\\\\%j", "/w/a%j"),  # \\ disables every replacement
        ("%q%j", "/w/%q42"),  # unknown symbols stay
        ("%r", "/w/0"),
    ],
)
def test_expand_pattern(pattern: str, expected: str) -> None:
    assert expand_pattern(pattern, _ctx()) == expected


def test_expand_pattern_arrays_and_steps() -> None:
    ctx = _ctx(job_id=1007, array_job_id=1000, array_task_id=7)
    assert expand_pattern("slurm-%A_%a.out", ctx) == "/w/slurm-1000_7.out"
    assert expand_pattern("%3a-%b-%j", ctx) == "/w/007-7-1007"
    assert expand_pattern("%J", _ctx(step=3)) == "/w/42.3"
    assert resolve_stdout("N/A", ctx) == "/w/slurm-1000_7.out"
    assert resolve_stdout("", _ctx()) == "/w/slurm-42.out"


# --------------------------------------------------------------------------- squeue / scontrol / sacct


def test_parse_squeue_captured_22_05() -> None:
    jobs = {j.job_id: j for j in parse_squeue((DATA / "squeue-22.05-O.txt").read_text())}
    assert set(jobs) >= {"26", "22", "25_0", "25_1"}
    held, running, task = jobs["26"], jobs["22"], jobs["25_1"]
    assert held.state == "PENDING" and held.reason == "JobHeldUser" and held.nodes == []
    assert (
        running.nodes == ["node1", "node2"]
        and running.num_tasks == 4
        and running.tres_per_node == "gres:gpu:2"
    )
    assert running.time_used_s == 26 and running.time_limit_s is None
    assert task.name == "arr name|x" and task.array_job_id == 25 and task.array_task_id == 1
    assert task.stdout == "/tmp/s5/arr-25_1.out"  # raw %A_%a pattern expanded by us
    assert jobs["24"].time_limit_s == 300


def test_parse_squeue_skips_lines_that_do_not_split_exactly() -> None:
    good = (DATA / "squeue-22.05-O.txt").read_text().splitlines()[0]
    assert len(parse_squeue(good + "\n" + "garbage\x1fline\n" + good[:-5])) == 1


def test_parse_scontrol_gres_and_names_with_spaces() -> None:
    job = parse_scontrol_job((DATA / "scontrol-22.05-job-gres.txt").read_text())
    assert job.job_id == "3" and job.name == "my job|x" and job.state == "RUNNING"
    assert job.gpus == {"node1": [0, 1], "node2": [0, 1]}
    assert job.stdout == "/tmp/s5/out-my job|x-3.out" and job.work_dir == "/tmp/s5"
    assert job.uid == 0 and job.batch_host == "node1" and job.nodes == ["node1", "node2"]


def test_parse_scontrol_array_task() -> None:
    job = parse_scontrol_job((DATA / "scontrol-22.05-array-task.txt").read_text())
    assert job.job_id == "4_1" and job.raw_job_id == 6 and job.stdout == "/tmp/s5/arr-4_1.out"


def test_split_scontrol_keeps_key_lookalikes_inside_free_text() -> None:
    line = (
        "JobId=5 JobName=a b=c UserId=me(1000) Nodes=n[1-2] CPU_IDs=0 Mem=0 GRES=gpu:1(IDX:3) "
        "Nodes=n3 CPU_IDs=1 Mem=0 GRES=gpu:2(IDX:0,2) WorkDir=/x y Power="
    )
    fields, details = split_scontrol(line)
    assert fields["JobName"] == "a b=c" and fields["WorkDir"] == "/x y" and fields["UserId"] == "me(1000)"
    assert [d["Nodes"] for d in details] == ["n[1-2]", "n3"]
    job = parse_scontrol_job(line)
    assert job.gpus == {"n1": [3], "n2": [3], "n3": [0, 2]}


@pytest.mark.parametrize(
    "gres,idx",
    [("gpu:2(IDX:0-1)", [0, 1]), ("gpu:a100:3(IDX:0,2-3)", [0, 2, 3]), ("", []), ("gpu:1(IDX:N/A)", [])],
)
def test_gres_idx(gres: str, idx: list[int]) -> None:
    assert parse_gres_idx(gres) == idx


@pytest.mark.parametrize(
    "text,seconds",
    [
        ("0:09", 9),
        ("5:00", 300),
        ("01:02:03", 3723),
        ("1-02:03:04", 93784),
        ("UNLIMITED", None),
        ("", None),
        ("30", 1800),
    ],
)
def test_parse_duration(text: str, seconds: int | None) -> None:
    assert parse_duration(text) == seconds


def test_someone_elses_job_is_refused() -> None:
    job = parse_scontrol_job(
        (DATA / "scontrol-22.05-job-gres.txt").read_text().replace("UserId=root(0)", "UserId=bob(1234)")
    )
    with pytest.raises(SlurmError, match="belongs to bob"):
        check_mine(job, uid=1000)
    check_mine(job, uid=1234)


def test_sacct_parse_and_disabled_message_captured() -> None:
    assert "accounting storage is disabled" in (DATA / "sacct-22.05-disabled.txt").read_text()
    sep = "\x1f"
    line = sep.join(
        [
            "12",
            "train",
            "alice",
            "COMPLETED",
            "gpu",
            "p",
            "2",
            "gpu[1-2]",
            "00:10:00",
            "01:00:00",
            "2024-01-01T10:00:00",
            "2024-01-01T10:00:05",
            "2024-01-01T10:10:05",
            "/home/a",
            "0:0",
        ]
    )
    step = line.replace("12", "12.batch", 1)
    jobs = parse_sacct(f"{line}\n{step}\n")
    assert len(jobs) == 1 and jobs[0].nodes == ["gpu1", "gpu2"] and jobs[0].time_used_s == 600


# --------------------------------------------------------------------------- --json shapes


def test_json_22_05_captured() -> None:
    doc = json.loads((DATA / "squeue-22.05.json").read_text())
    assert jsonshape.release(doc) == "22.05.8"
    jobs = {j.job_id: j for j in jobs_from_json(doc)}
    job = jobs["3"]
    assert job.state == "RUNNING" and job.time_limit_s is None and job.name == "my job|x"
    assert job.stdout == "/tmp/s5/out-my job|x-3.out"  # raw pattern in --json, expanded here
    assert job.gpus == {"node1": [0, 1], "node2": [0, 1]}


def test_json_23_11_shape_from_docs() -> None:
    """The fixture is written from Slurm's documentation of data_parser v0.0.40 (not captured)."""
    doc = json.loads((DATA / "squeue-23.11.json").read_text())
    assert jsonshape.release(doc) == "23.11.4"
    jobs = {j.job_id: j for j in jobs_from_json(doc)}
    run = jobs["812345"]
    assert run.state == "RUNNING" and run.num_nodes == 2 and run.num_tasks == 8 and run.time_limit_s == 3600
    assert run.nodes == ["gpu07", "gpu08"] and run.tres_per_node == "gres:gpu:4"
    assert run.stdout == "/home/alice/run dir/train|resnet-812345.out"
    assert run.gpus == {"gpu07": [0, 1, 2, 3], "gpu08": [0, 1, 2, 3]}
    task = jobs["812300_7"]
    assert (
        task.state == "PENDING"
        and task.time_limit_s is None
        and task.stdout == "/home/alice/slurm-812300_7.out"
    )
    assert jobs["900+1"].user == "bob"
    assert [j.job_id for j in jobs_from_json(doc, user="alice")] == ["812345", "812300_7"]  # filtered here


@pytest.mark.parametrize(
    "value,expected",
    [
        (7, 7),
        ({"set": True, "infinite": False, "number": 7}, 7),
        ({"set": False, "number": 7}, None),
        ({"set": True, "infinite": True, "number": 0}, None),
        (None, None),
        ("12", 12),
        (True, None),
    ],
)
def test_json_number(value, expected) -> None:
    assert jsonshape.number(value) == expected


def test_json_state() -> None:
    assert jsonshape.state("RUNNING") == ("RUNNING", ())
    assert jsonshape.state(["PENDING", "REQUEUED"]) == ("PENDING", ("REQUEUED",))
    assert jsonshape.state(None) == ("UNKNOWN", ())


# --------------------------------------------------------------------------- version, commands, signals


def test_version_gates() -> None:
    assert parse_version("slurm-wlm 22.05.8") == SlurmVersion(22, 5, 8)
    assert parse_version("slurm 23.11.4\n") == SlurmVersion(23, 11, 4)
    old, mid, new = SlurmVersion(20, 2), SlurmVersion(21, 8), SlurmVersion(22, 5, 8)
    assert overlap_problem(old) and not overlap_problem(mid) and not overlap_problem(new)
    assert overlap_warning(mid) and not overlap_warning(new)
    assert not new.json_filters_work and SlurmVersion(23, 11).has_scontrol_json
    with pytest.raises(SlurmError):
        parse_version("no version here")


def test_env_hygiene_strips_job_variables() -> None:
    env = slurm_env(
        {
            "SLURM_JOB_ID": "9",
            "SLURM_NTASKS": "4",
            "SRUN_CPUS_PER_TASK": "2",
            "SLURM_CONF": "/c",
            "HOME": "/h",
        }
    )
    assert env == {"SLURM_CONF": "/c", "HOME": "/h", "SLURM_TIME_FORMAT": "standard"}


def test_missing_slurm_command_says_which(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SlurmNotFound, match="'squeue' not found"):
        run_slurm(["squeue", "--me"])


def test_cli_missing_slurm_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert cli_main(["jobs"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "gputui: error: Slurm command 'squeue' not found (is Slurm installed and on PATH?)"


@pytest.mark.parametrize(
    ("argv", "code"), [(["attach", "12;id"], 2), (["cancel", "abc"], 2), (["attach", "$(id)"], 2)]
)
def test_cli_bad_job_id_is_one_line(argv: list[str], code: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(argv) == code  # a usage error (tests/slurm/test_cli_hold_release.py)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a Slurm job id" in err and "Traceback" not in err


@pytest.mark.parametrize("text,name", [("usr1", "USR1"), ("SIGTERM", "TERM"), ("10", "USR1")])
def test_normalize_signal(text: str, name: str) -> None:
    assert normalize_signal(text) == name


def test_unknown_signal() -> None:
    with pytest.raises(SlurmError):
        normalize_signal("NOPE")


# --------------------------------------------------------------------------- batch scripts

GOLDEN_CMD = ["python", "train.py", "--epochs", "3", "a b", "it's", '"q"', "$HOME", "x;y", "`id`"]


def _golden_spec(pattern: str) -> LaunchSpec:
    return LaunchSpec(
        cmd=GOLDEN_CMD,
        nodes=2,
        gpus_per_node=4,
        cpus_per_task=8,
        time="01:00:00",
        partition="gpu",
        account="proj42",
        mem="64G",
        env_setup="/home/me/env setup.sh",
        pattern=pattern,
    )


@pytest.mark.parametrize("pattern", PATTERNS)
def test_dry_run_golden(pattern: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "run",
        "-N",
        "2",
        "--gpus-per-node",
        "4",
        "--cpus-per-task",
        "8",
        "--time",
        "01:00:00",
        "--partition",
        "gpu",
        "--account",
        "proj42",
        "--mem",
        "64G",
        "--env-setup",
        "/home/me/env setup.sh",
        "--pattern",
        pattern,
        "--dry-run",
        "--",
        *GOLDEN_CMD,
    ]
    assert cli_main(argv) == 0
    out = capsys.readouterr().out
    assert out == render(_golden_spec(pattern))
    golden = DATA / f"golden-{pattern}.sh"
    if os.environ.get("GPUTUI_UPDATE_GOLDEN"):
        golden.write_text(out)
    assert out == golden.read_text()


@pytest.mark.parametrize("pattern", PATTERNS)
def test_user_command_survives_the_shell_byte_exact(pattern: str) -> None:
    """The srun line of the script, evaluated by bash, yields the user's argv unchanged."""
    tricky = ["prog", "a b", "it's", '"q"', "$HOME", "x;y", "`id`", "$(id)", "\\n", "*", ""]
    text = render(LaunchSpec(cmd=tricky, pattern=pattern))
    cmd_line = next(ln for ln in text.splitlines() if ln.lstrip().startswith(("srun prog", "prog")))
    words = cmd_line.strip().removeprefix("srun ")
    out = subprocess.run(["bash", "-c", f"printf '%s\\0' {words}"], capture_output=True, check=True)
    assert out.stdout.split(b"\0")[:-1] == [w.encode() for w in tricky]


@pytest.mark.parametrize("job_id", ["1", "42", "22767", "22768", "123456", "987654321"])
def test_script_port_agrees_with_distenv(job_id: str) -> None:
    text = render(LaunchSpec(cmd=["true"]))
    port_lines = [ln for ln in text.splitlines() if ln.startswith(("job_number=", "export MASTER_PORT="))]
    script = "\n".join(port_lines) + '\necho "$MASTER_PORT"'
    out = subprocess.run(
        ["bash", "-c", script], env={"SLURM_JOB_ID": job_id}, capture_output=True, text=True, check=True
    )
    assert int(out.stdout) == distenv.master_port_for_job(job_id)


def test_bad_launch_values_are_refused() -> None:
    with pytest.raises(SlurmError):
        render(LaunchSpec(cmd=["x"], time="1:00; rm -rf ~"))
    with pytest.raises(SlurmError):
        render(LaunchSpec(cmd=[]))


def test_gpu_log_step_is_optional() -> None:
    assert "gputui --log" not in render(LaunchSpec(cmd=["x"]))
    text = render(LaunchSpec(cmd=["x"], gpu_log=True, python="/opt/py/bin/python"))
    assert "/opt/py/bin/python -m gputui --log - --interval 2 &" in text and text.endswith('exit "$status"\n')
    assert 'srun --overlap -N "$SLURM_NNODES" -n "$SLURM_NNODES" --ntasks-per-node=1' in text
    assert 'kill -INT "$gputui_log_step"' in text
    text = render(LaunchSpec(cmd=["x"], gpu_log=True, gpu_log_backend="sim", gpu_log_interval=0.5))
    assert "-m gputui --log - --interval 0.5 --backend sim &" in text
    with pytest.raises(SlurmError):
        render(LaunchSpec(cmd=["x"], gpu_log=True, gpu_log_backend="sim; rm -rf ~"))


def test_attach_reads_node_failures_from_srun(monkeypatch: pytest.MonkeyPatch) -> None:
    """srun's stderr lines as Slurm 22.05.8 printed them on the local cluster."""
    from gputui.slurm import attach

    monkeypatch.setattr(
        attach, "node_state", lambda node, env=None: ("DOWN+NOT_RESPONDING", "Not responding")
    )
    seen: list = []
    att = attach.Attacher("12", seen.append)
    att.job = parse_scontrol_job("JobId=12 JobName=x JobState=RUNNING NodeList=node[1-2] NumNodes=2")
    assert "--no-kill" in attach.probe_argv(att.job, attach.AttachOptions())
    tail: list[str] = []
    att._handle_stderr(b"srun: error: Node failure on node2\n", tail)
    att._handle_stderr(b"srun: error: Node failure on node2\n", tail)  # reported once
    (lost,) = [r for r in seen if r.get("event") == "node_lost"]
    assert (
        lost["host"] == "node2" and lost["cause"] == "node_failure" and lost["state"] == "DOWN+NOT_RESPONDING"
    )
    assert lost["message"] == (
        "node node2: node failure: Slurm marked it DOWN+NOT_RESPONDING (Not responding); "
        "other nodes keep streaming"
    )
    att._handle_stderr(b"srun: error: node1: task 0: Killed\n", tail)  # a probe task died: lost
    att._handle_stderr(b"srun: error: node1: task 0: Killed\n", tail)
    att._handle_stderr(b"srun: error: Node failure on node1\n", tail)  # later, Slurm says why: told
    att._handle_stderr(b"srun: error: Node failure on node1\n", tail)
    lost = [(r["host"], r["cause"]) for r in seen if r.get("event") == "node_lost"]
    assert lost == [("node2", "node_failure"), ("node1", "task_exit"), ("node1", "node_failure")]

    seen.clear()
    att = attach.Attacher("12", seen.append)
    att.job = parse_scontrol_job("JobId=12 JobName=x JobState=RUNNING NodeList=node[1-2] NumNodes=2")
    line = (
        b"slurmstepd-node1: error: *** STEP 12.1 ON node1 CANCELLED AT 2026-11-21T06:06:47 DUE TO NODE "
        b"FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***\n"
    )
    att._handle_stderr(line, tail)
    att._handle_stderr(b"srun: error: node1: task 0: Terminated\n", tail)  # the whole step is ending
    assert not seen and att.step_ending == "node failure"


# --------------------------------------------------------------------------- --local

LOCAL_PROBE = """
import json, os, sys
from gputui import distenv
e = distenv.from_environ()
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_NODEID", "SLURM_NTASKS",
        "MASTER_ADDR", "MASTER_PORT", "SLURM_JOB_ID"]
seen = {k: os.environ.get(k) for k in keys}
print(json.dumps({"argv": sys.argv[1:], "env": seen, "rank": e.rank, "world": e.world_size,
                  "node": e.node_rank, "port": e.master_port}))
"""


def test_local_launch_environment_contract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUTUI_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("SLURM_JOB_ID", "777")  # inherited from an allocation: must not leak
    spec = LaunchSpec(cmd=[sys.executable, "-c", LOCAL_PROBE, "a b", "$x"], nodes=2, ntasks_per_node=2)
    run = launch_local(spec)
    assert run.wait(timeout=60) == [0, 0, 0, 0]
    assert run.folder.parent == tmp_path / "local"
    seen = [json.loads(p.read_text()) for p in run.outputs]
    assert [s["rank"] for s in seen] == [0, 1, 2, 3] and [s["node"] for s in seen] == [0, 0, 1, 1]
    for rank, s in enumerate(seen):
        assert s["argv"] == ["a b", "$x"] and s["world"] == 4 and s["port"] == run.port
        assert s["env"]["MASTER_ADDR"] == "127.0.0.1" and s["env"]["SLURM_PROCID"] == str(rank)
        assert s["env"]["SLURM_JOB_ID"] is None


def test_local_launch_stops_the_others_when_a_rank_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUTUI_STATE_DIR", str(tmp_path))
    code = "import os, time, sys\nif os.environ['RANK'] == '1': sys.exit(3)\ntime.sleep(60)"
    run = launch_local(LaunchSpec(cmd=[sys.executable, "-c", code], nodes=1, ntasks_per_node=2))
    codes = run.wait(timeout=30, grace_s=0.5)
    assert codes[1] == 3 and codes[0] != 0


def test_docs_examples_match_dry_run(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/slurm.md shows exactly what `gputui run --dry-run` prints (except the --gpu-log example,
    which embeds the python path of the machine that generated it)."""
    import shlex

    doc = (Path(__file__).resolve().parents[2] / "docs" / "slurm.md").read_text()
    examples = re.findall(r"```console\n\$ gputui (run .*?)\n```\n\n```bash\n(.*?)```", doc, re.S)
    assert len(examples) >= 6
    checked = 0
    for command, script in examples:
        if "--gpu-log" in command:
            continue
        assert cli_main(shlex.split(command)) == 0
        assert capsys.readouterr().out == script, command
        checked += 1
    assert checked >= 5


RANK_SCRIPT = """
import os, sys
from gputui.stream.io import format_prefixed
from gputui.stream.records import metric
keys = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS",
        "MASTER_ADDR", "MASTER_PORT", "SLURM_JOB_ID")
print(" ".join(f"{k}={os.environ.get(k)}" for k in keys))
rank = int(os.environ["RANK"])
print(format_prefixed(metric("rank_check", float(rank), rank=rank)), flush=True)
sys.exit(int(sys.argv[1]) if rank == 1 else 0)
"""
SLURM_COMMANDS = ("srun", "sbatch", "squeue", "scontrol", "scancel", "sacct", "sinfo", "salloc")


def test_run_local_from_the_command_line_needs_no_slurm(tmp_path: Path) -> None:
    """`gputui run --local` as a user runs it: per-rank output files in the state dir, the exit status, and
    no Slurm command at all (each one on PATH is a tripwire that records being called; SLURM_CONF points
    nowhere)."""
    tripwires, called = tmp_path / "bin", tmp_path / "slurm-called"
    tripwires.mkdir()
    for name in SLURM_COMMANDS:
        shim = tripwires / name
        shim.write_text(f'#!/bin/sh\necho "{name} $*" >> {called}\nexit 1\n')
        shim.chmod(0o755)
    (tmp_path / "rank.py").write_text(RANK_SCRIPT)
    state = tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SRUN_", "SBATCH_"))}
    env.update(
        GPUTUI_STATE_DIR=str(state),
        SLURM_CONF=str(tmp_path / "no-such-slurm.conf"),
        SLURM_JOB_ID="777",  # as inside an allocation: must not reach the ranks
        PATH=os.pathsep.join([str(tripwires), str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
    )

    def local_run(exit_code: int) -> tuple[subprocess.CompletedProcess[str], Path]:
        argv = ["run", "--local", "-N", "1", "--ntasks-per-node", "2", "--", "python", "rank.py"]
        res = subprocess.run(
            [sys.executable, "-m", "gputui", *argv, str(exit_code)],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        folder = Path(re.search(r"output per rank: (.+)/rank-<N>\.out", res.stdout).group(1))
        return res, folder

    res, folder = local_run(0)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "all ranks finished" in res.stdout
    port = re.search(r"MASTER_ADDR=127\.0\.0\.1 MASTER_PORT=(\d+)", res.stdout).group(1)
    assert folder.parent == state / "local"
    assert sorted(p.name for p in folder.iterdir()) == ["rank-0.out", "rank-1.out"]
    for rank in (0, 1):
        text = (folder / f"rank-{rank}.out").read_text()
        assert (
            f"RANK={rank} LOCAL_RANK={rank} WORLD_SIZE=2 SLURM_PROCID={rank} SLURM_LOCALID={rank} "
            f"SLURM_NTASKS=2 MASTER_ADDR=127.0.0.1 MASTER_PORT={port} SLURM_JOB_ID=None"
        ) in text, text
        records = [r for line in text.splitlines() if (rs := parse_prefixed(line)) for r in rs]
        assert [(r["name"], r["value"], r["rank"]) for r in records] == [("rank_check", float(rank), rank)]

    res, folder = local_run(3)  # rank 1 fails
    assert res.returncode == 1 and "rank 1 exited 3" in res.stdout, res.stdout + res.stderr
    assert "rank 0 exited" not in res.stdout
    assert (folder / "rank-1.out").exists()
    assert not called.exists(), called.read_text()
