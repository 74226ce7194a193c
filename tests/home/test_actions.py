"""gputui.home.actions: the shell and editor argv, the script lookup (gputui's copy first, else
``scontrol write batch_script``), editable copies and the files an ended job is replayed from; one test
against the local Slurm cluster."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest
from slurm_helpers import sbatch, scancel, wait_job_state

from gputui.home import actions
from gputui.home.actions import (
    batch_script,
    editable_copy,
    editor_argv,
    gputui_script,
    job_options,
    shell_argv,
)
from gputui.slurm.commands import SlurmError
from gputui.slurm.jobid import JobIdError
from gputui.slurm.jobs import Job
from gputui.sources.inputs import job_files as replay_files


@pytest.fixture
def state(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("GPUTUI_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


class FakeSlurm:
    """Stands in for run_slurm: records argv; ``reply`` answers (default: fail the test if called)."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.reply = None

    def __call__(self, argv, **kw) -> subprocess.CompletedProcess:
        self.calls.append(list(argv))
        if self.reply is None:
            raise AssertionError(f"no Slurm command expected, got {argv}")
        return self.reply(argv)


@pytest.fixture
def no_slurm(monkeypatch) -> FakeSlurm:
    fake = FakeSlurm()
    monkeypatch.setattr(actions, "run_slurm", fake)
    return fake


# --------------------------------------------------------------------------- shell


def test_shell_argv_exact() -> None:
    assert shell_argv("123", "node1") == [
        "srun",
        "--jobid=123",
        "--overlap",
        "--pty",
        "-N1",
        "-n1",
        "--nodelist=node1",
        "bash",
        "-l",
    ]
    assert shell_argv(" 812300_7 ", "gpu-07.cluster")[1] == "--jobid=812300_7"
    assert shell_argv("900+1", "cpu01")[1:2] == ["--jobid=900+1"]


@pytest.mark.parametrize("job_id", ["1;rm", "-1", "abc", "123_", "", "0", "1 2", "$(id)"])
def test_shell_argv_bad_job_id(job_id: str) -> None:
    with pytest.raises(JobIdError, match="is not a Slurm job id"):
        shell_argv(job_id, "node1")


@pytest.mark.parametrize("node", ["a b", "", "n1;id", "n[1-2]", "n1,n2", "$(id)", "n1\n"])
def test_shell_argv_bad_node(node: str) -> None:
    with pytest.raises(SlurmError, match="is not a node name"):
        shell_argv("123", node)


# --------------------------------------------------------------------------- editor


def test_editor_argv_editor_words_split() -> None:
    path = Path("/tmp/x y/job.sh")
    assert editor_argv(path, {"EDITOR": "code -w"}) == ["code", "-w", "/tmp/x y/job.sh"]
    assert editor_argv(path, {"EDITOR": "'/opt/my editor/bin/ed' --wait"}) == [
        "/opt/my editor/bin/ed",
        "--wait",
        "/tmp/x y/job.sh",
    ]


def test_editor_argv_visual_wins_default_vi() -> None:
    path = Path("/s/job.sh")
    assert editor_argv(path, {"VISUAL": "nano", "EDITOR": "code -w"}) == ["nano", "/s/job.sh"]
    assert editor_argv(path, {"VISUAL": "", "EDITOR": "emacs -nw"}) == ["emacs", "-nw", "/s/job.sh"]
    assert editor_argv(path, {}) == ["vi", "/s/job.sh"]
    assert editor_argv(path, {"VISUAL": "", "EDITOR": ""}) == ["vi", "/s/job.sh"]


def test_editor_argv_reads_os_environ_by_default(monkeypatch) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "micro --x")
    assert editor_argv(Path("/a.sh")) == ["micro", "--x", "/a.sh"]


# --------------------------------------------------------------------------- editable copy


def test_editable_copy_location_and_content(state) -> None:
    job = Job(job_id="123", name="my job|x")
    text = "#!/bin/bash\n#SBATCH --nodes=2\nsrun python 'a b.py'\n"
    path = editable_copy(job, text)
    assert path.parent == state / "scripts"
    assert re.fullmatch(rf"my_job_x-edit-of-123-\d{{8}}-\d{{6}}-{os.getpid()}\.sh", path.name), path.name
    assert path.read_text() == text
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    # the copy is not the job's own script
    assert gputui_script("123") is None


def test_editable_copy_of_a_script_without_sbatch_lines_gets_the_job_resources(state) -> None:
    job = Job(
        job_id="812300_7",
        name="wrap",
        num_nodes=2,
        num_tasks=8,
        tres_per_node="gres/gpu:a100:4",
        time_limit_s=3600,
        partition="gpu",
    )
    text = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\nsleep 30\n"
    path = editable_copy(job, text)
    assert path.name.startswith("wrap-edit-of-812300_7-")
    assert path.read_text() == (
        "#!/bin/sh\n"
        "# gputui: the original job's resources (it had them on sbatch's command line)\n"
        "#SBATCH --job-name=wrap\n"
        "#SBATCH --nodes=2\n"
        "#SBATCH --ntasks=8\n"
        "#SBATCH --gres=gpu:a100:4\n"
        "#SBATCH --time=01:00:00\n"
        "#SBATCH --partition=gpu\n"
        "# This script was created by sbatch --wrap.\n\nsleep 30\n"
    )


def test_job_options_skip_unknown_and_unsafe_values() -> None:
    assert job_options(Job(job_id="1")) == []
    job = Job(job_id="1", name="", tres_per_node="gres:gpu:2;id", partition="a b", time_limit_s=None)
    assert job_options(job) == []


def test_editable_copy_bad_job_id_writes_nothing(state) -> None:
    with pytest.raises(JobIdError):
        editable_copy(Job(job_id="1;rm", name="x"), "#!/bin/bash\n")
    assert list((state / "scripts").glob("*.sh")) == []


# --------------------------------------------------------------------------- the job's script


def test_gputui_script_prefers_gputui_copy(state, no_slurm) -> None:
    scripts = state / "scripts"
    scripts.mkdir(parents=True)
    own = scripts / "train-123.sh"
    own.write_text("#!/bin/bash\n#SBATCH --job-name=train\nsrun -u python train.py\n")
    (scripts / "train-1123.sh").write_text("other job\n")
    (scripts / "train-123_4.sh").write_text("other job\n")
    assert gputui_script("123") == own
    assert batch_script("123") == (own.read_text(), str(own))
    assert no_slurm.calls == []


def test_gputui_script_not_an_unsubmitted_script_whose_pid_suffix_is_the_id(state) -> None:
    """write_script() names a script ``<name>-<YYYYmmdd-HHMMSS>-<pid>.sh`` until sbatch gives the id (and an
    edited copy ``...-edit-of-J-<date>-<time>-<pid>.sh``); one whose submission failed keeps that name. It
    is not the script of job ``<pid>``."""
    scripts = state / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "train-20261123-203900-4567.sh").write_text("never submitted\n")
    (scripts / "train-edit-of-12-20261123-203900-4567.sh").write_text("never submitted\n")
    assert gputui_script("4567") is None


def test_gputui_script_renamed_edit_copy_is_found(state) -> None:
    scripts = state / "scripts"
    scripts.mkdir(parents=True)
    resubmitted = scripts / "train-edit-of-12-99.sh"  # submit() renamed it <name>-<new id>.sh
    resubmitted.write_text("x\n")
    assert gputui_script("99") == resubmitted
    assert gputui_script("12") is None


def test_gputui_script_validates_the_id(state) -> None:
    with pytest.raises(JobIdError):
        gputui_script("*")


def test_batch_script_falls_back_to_scontrol(state, no_slurm) -> None:
    no_slurm.reply = lambda argv: subprocess.CompletedProcess(argv, 0, "#!/bin/sh\nsleep 1\n", "")
    assert batch_script("77") == ("#!/bin/sh\nsleep 1\n", "scontrol write batch_script 77")
    assert no_slurm.calls == [["scontrol", "write", "batch_script", "77", "-"]]


def test_batch_script_none_is_one_line_error(state, no_slurm) -> None:
    # scontrol 22.05 exits 0 here and says why on stderr (checked on the local cluster)
    no_slurm.reply = lambda argv: subprocess.CompletedProcess(
        argv, 0, "", "job script retrieval failed: Invalid job id specified\n"
    )
    with pytest.raises(SlurmError) as err:
        batch_script("99999999")
    assert str(err.value) == (
        "no batch script for job 99999999: job script retrieval failed: Invalid job id specified "
        "(jobs started with srun or salloc have none)"
    )
    no_slurm.reply = lambda argv: subprocess.CompletedProcess(argv, 1, "", "")
    with pytest.raises(SlurmError, match=r"^no batch script for job 5: no script \(jobs started"):
        batch_script("5")


def test_batch_script_bad_id_runs_nothing(state, no_slurm) -> None:
    with pytest.raises(JobIdError):
        batch_script("1;rm -rf /")
    assert no_slurm.calls == []


# --------------------------------------------------------------------------- replay files


def touch(path: Path, text: str = "x\n") -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_replay_files_stdout_stderr_and_records(tmp_path) -> None:
    out = touch(tmp_path / "logs" / "train-42.out")
    err = touch(tmp_path / "logs" / "train-42.err")
    work = tmp_path / "work"
    rec2 = touch(work / "gputui-42-node2.jsonl")
    rec1 = touch(work / "gputui-42-node1.jsonl")
    touch(work / "gputui-420-node1.jsonl")
    touch(work / "gputui-42-node1.err")
    touch(work / "slurm-42.out")
    job = Job(job_id="42", stdout=out, stderr=err, work_dir=str(work))
    assert replay_files(job) == [out, err, rec1, rec2]


def test_replay_files_stdout_and_stderr_same_file_once(tmp_path) -> None:
    out = touch(tmp_path / "slurm-7.out")
    job = Job(job_id="7", stdout=out, stderr=out)
    assert replay_files(job) == [out]


def test_replay_files_missing_stdout_file_skipped_records_beside_it(tmp_path) -> None:
    rec = touch(tmp_path / "gputui-8-n1.jsonl")
    job = Job(job_id="8", stdout=str(tmp_path / "gone.out"), stderr="")
    assert replay_files(job) == [rec]


def test_replay_files_default_slurm_out_when_stdout_unknown(tmp_path) -> None:
    """sacct does not say where the output went: the default ``slurm-<id>.out`` in the work dir."""
    default = touch(tmp_path / "slurm-240.out")
    job = Job(job_id="240", state="COMPLETED", work_dir=str(tmp_path))
    assert replay_files(job) == [default]
    task = Job(job_id="253_0", state="FAILED", work_dir=str(tmp_path))
    task_out = touch(tmp_path / "slurm-253_0.out")
    assert replay_files(task) == [task_out]


def test_replay_files_default_slurm_out_kept_beside_records(tmp_path) -> None:
    """A job run with ``gputui run --gpu-log`` and listed by sacct (no stdout known): its output
    ``slurm-<id>.out`` is replayed as well as its record files (the output holds the loss lines)."""
    default = touch(tmp_path / "slurm-240.out")
    rec = touch(tmp_path / "gputui-240-node1.jsonl")
    job = Job(job_id="240", state="COMPLETED", work_dir=str(tmp_path))
    assert replay_files(job) == [default, rec]


def test_replay_files_nothing(tmp_path) -> None:
    assert replay_files(Job(job_id="9", work_dir=str(tmp_path))) == []
    assert replay_files(Job(job_id="9")) == []


def test_replay_files_glob_characters_in_folder(tmp_path) -> None:
    folder = tmp_path / "run[1]*"
    rec = touch(folder / "gputui-5-n1.jsonl")
    touch(tmp_path / "run1" / "gputui-5-n1.jsonl")
    assert replay_files(Job(job_id="5", work_dir=str(folder))) == [rec]


# --------------------------------------------------------------------------- real cluster


@pytest.mark.slurm
def test_batch_script_from_scontrol_on_the_cluster(slurm_cluster, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GPUTUI_STATE_DIR", str(tmp_path / "state"))  # no gputui copy there
    text = "#!/bin/bash\n#SBATCH --job-name=home-view\necho \"a b $HOME\" 'x'\nsleep 60\n"
    env = slurm_cluster.env
    job = sbatch(text, env, tmp_path, ["-o", str(tmp_path / "out-%j.txt")])
    try:
        wait_job_state(job, {"RUNNING", "PENDING"}, 30, env)
        assert batch_script(job, env=env) == (text, f"scontrol write batch_script {job}")
        with pytest.raises(SlurmError) as err:
            batch_script("99999999", env=env)
        assert str(err.value).startswith("no batch script for job 99999999: ")
        assert "\n" not in str(err.value)
    finally:
        scancel(job, env)
