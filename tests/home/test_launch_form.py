"""gputui.home.launch: per-field validation, the preview (= batch_script.render of the spec), the
per-cluster memory and cluster presets.

Which time and memory values are good was checked against the local Slurm 22.05 cluster with
``sbatch --test-only``: ``--time`` 30, 1:00:00, 2-00:00:00, 2-12, 1:30 are accepted and ``1 0``, ``1h``,
``1:2:3:4`` refused ("Invalid --time specification"); ``--mem`` 32G, 32GB, 32g, 32k, 100 are accepted and
``1.5G`` and ``32b`` refused ("Invalid --mem specification")."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import asdict, replace

import pytest

from gputui.config import ClusterPreset
from gputui.home.launch import FIELD_NAMES, LaunchForm, preview, remember, remembered, validate_form
from gputui.slurm.batch_script import LaunchSpec, render


def good_form(**changes) -> LaunchForm:
    form = LaunchForm(
        command="python train.py --epochs 3",
        job_name="bert",
        nodes="2",
        gpus_per_node="4",
        ntasks_per_node="",
        cpus_per_task="8",
        mem="32G",
        time="01:30:00",
        partition="gpu",
        account="proj_1",
        pattern="per-gpu",
        setup="module load cuda\nsource ~/venv/bin/activate",
    )
    return replace(form, **changes)


def errors_of(**changes) -> dict[str, str]:
    spec, errors = validate_form(good_form(**changes))
    assert (spec is None) == bool(errors)
    return errors


def test_good_form_gives_the_spec() -> None:
    spec, errors = validate_form(good_form(), python="/opt/py/bin/python3")
    assert errors == {}
    assert spec == LaunchSpec(
        cmd=["python", "train.py", "--epochs", "3"],
        nodes=2,
        gpus_per_node=4,
        ntasks_per_node=None,
        cpus_per_task=8,
        time="01:30:00",
        partition="gpu",
        account="proj_1",
        mem="32G",
        pattern="per-gpu",
        job_name="bert",
        setup_lines=["module load cuda", "source ~/venv/bin/activate"],
        python="/opt/py/bin/python3",
    )


# --------------------------------------------------------------------------- per field


@pytest.mark.parametrize("value", ["30", "1:00:00", "2-00:00:00", "2-12", "1:30", "2-1:2", " 45 ", ""])
def test_time_good(value: str) -> None:
    assert errors_of(time=value) == {}


@pytest.mark.parametrize("value", ["1h", "25:61:xx", "1 0", "1:2:3:4", "1-", ":30", "01:30:00;ls"])
def test_time_bad(value: str) -> None:
    assert errors_of(time=value) == {"time": "time as MM, HH:MM:SS or D-HH:MM:SS (e.g. 01:30:00)"}


@pytest.mark.parametrize(
    ("key", "label", "low"),
    [("nodes", "nodes", 1), ("ntasks_per_node", "tasks per node", 1), ("cpus_per_task", "CPUs per task", 1)],
)
@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5", "2 nodes"])
def test_counts_bad(key: str, label: str, low: int, value: str) -> None:
    assert errors_of(**{key: value}) == {key: f"{label} must be a whole number ≥ {low}"}


@pytest.mark.parametrize("value", ["-1", "abc", "1.5"])
def test_gpus_per_node_bad(value: str) -> None:
    assert errors_of(gpus_per_node=value) == {"gpus_per_node": "GPUs per node must be a whole number ≥ 0"}


def test_counts_empty_and_too_large() -> None:
    assert errors_of(nodes="") == {"nodes": "nodes is needed"}
    assert errors_of(nodes="  ") == {"nodes": "nodes is needed"}
    assert errors_of(gpus_per_node="", ntasks_per_node="", cpus_per_task="") == {}
    assert errors_of(gpus_per_node="0") == {}
    assert errors_of(cpus_per_task="100001") == {"cpus_per_task": "CPUs per task is too large"}
    spec, _ = validate_form(good_form(gpus_per_node="", ntasks_per_node=" 2 ", cpus_per_task=""))
    assert spec is not None
    assert (spec.gpus_per_node, spec.ntasks_per_node, spec.cpus_per_task) == (0, 2, None)


@pytest.mark.parametrize("value", ["²", "³2", "١٢x"])
def test_counts_unicode_digits_are_a_message_not_a_crash(value: str) -> None:
    """``str.isdigit()`` is true for "²" while ``int("²")`` raises: the form must answer with a message."""
    errors = errors_of(nodes=value)
    assert errors == {"nodes": "nodes must be a whole number ≥ 1"}


@pytest.mark.parametrize("value", ["32G", "32GB", "32g", "32k", "100", "512M", "1T"])
def test_mem_good(value: str) -> None:
    assert errors_of(mem=value) == {}


@pytest.mark.parametrize("value", ["32 GB", "lots", "G", "32X", "-1G"])
def test_mem_bad(value: str) -> None:
    assert errors_of(mem=value) == {"mem": "memory per node as a number with K/M/G/T (e.g. 32G)"}


@pytest.mark.parametrize("value", ["1.5G", "32b", "32B"])
def test_mem_values_sbatch_refuses_are_refused(value: str) -> None:
    """sbatch 22.05 answers ``Invalid --mem specification`` for these; the form must not accept them."""
    assert errors_of(mem=value) == {"mem": "memory per node as a number with K/M/G/T (e.g. 32G)"}


@pytest.mark.parametrize("key", ["partition", "account"])
@pytest.mark.parametrize("value", ["gpu a100", "gpu;rm -rf ~", "gpu$X", "'gpu'"])
def test_partition_and_account_one_word(key: str, value: str) -> None:
    assert errors_of(**{key: value}) == {key: f"{key} is one word of letters, digits, _ . + -"}


def test_partition_and_account_good_or_empty() -> None:
    assert errors_of(partition="small-g", account="project_465000000") == {}
    spec, _ = validate_form(good_form(partition=" ", account=""))
    assert spec is not None and spec.partition is None and spec.account is None


@pytest.mark.parametrize("value", ["my job", "a/b", "x" * 65, "名前", "job;ls"])
def test_job_name_bad(value: str) -> None:
    assert errors_of(job_name=value) == {"job_name": "job name: up to 64 letters, digits, _ . + -"}


def test_job_name_good_or_empty() -> None:
    assert errors_of(job_name="x" * 64) == {}
    spec, _ = validate_form(good_form(job_name=""))
    assert spec is not None and spec.job_name is None and spec.name == "train.py"


def test_command_that_shlex_cannot_split() -> None:
    errors = errors_of(command='python train.py --msg "unterminated')
    assert errors == {"command": "cannot split the command: No closing quotation"}


def test_command_missing() -> None:
    msg = "a command or script to run is needed (e.g. python train.py --epochs 3)"
    assert errors_of(command="") == {"command": msg}
    assert errors_of(command="   ") == {"command": msg}


def test_pattern_unknown() -> None:
    expected = "launch pattern is one of per-gpu, torchrun, per-node, lightning"
    assert errors_of(pattern="mpi") == {"pattern": expected}


def test_local_run_has_one_node() -> None:
    assert errors_of(where="local", nodes="2") == {"nodes": "a local run has one node"}
    assert errors_of(where="local", nodes="1") == {}
    assert errors_of(where="slurm", nodes="2") == {}


def test_several_bad_fields_each_named() -> None:
    errors = errors_of(nodes="0", time="1h", mem="lots", partition="a b", job_name="a b")
    assert sorted(errors) == ["job_name", "mem", "nodes", "partition", "time"]


# --------------------------------------------------------------------------- preview


def srun_line(script: str) -> list[str]:
    lines = [ln for ln in script.splitlines() if ln.startswith("srun ")]
    assert len(lines) == 1, script
    return shlex.split(lines[0])


def test_preview_is_render_of_the_spec_with_every_value() -> None:
    form = good_form(command="python train.py --msg 'a b $HOME' --lr=1e-3", pattern="per-gpu")
    text, errors = preview(form)
    spec, _ = validate_form(form)
    assert errors == {} and spec is not None
    assert text == render(spec)
    lines = text.splitlines()
    assert lines[0] == "#!/bin/bash"
    sbatch = [ln for ln in lines if ln.startswith("#SBATCH")]
    assert sbatch == [
        "#SBATCH --job-name=bert",
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks-per-node=4",
        "#SBATCH --gres=gpu:4",
        "#SBATCH --cpus-per-task=8",
        "#SBATCH --mem=32G",
        "#SBATCH --time=01:30:00",
        "#SBATCH --partition=gpu",
        "#SBATCH --account=proj_1",
    ]
    # the set-up lines, as typed and in order, before the rendezvous lines
    load, source, master = (
        lines.index("module load cuda"),
        lines.index("source ~/venv/bin/activate"),
        next(i for i, ln in enumerate(lines) if ln.startswith("export MASTER_ADDR=")),
    )
    assert load < source < master
    # the command reaches the program unchanged: the argument with a space and a $ is one word
    assert srun_line(text) == ["srun", "python", "train.py", "--msg", "a b $HOME", "--lr=1e-3"]


def test_preview_torchrun_and_tasks_per_node() -> None:
    form = good_form(pattern="torchrun", ntasks_per_node="2", command="train.py --x 'y z'")
    text, errors = preview(form)
    assert errors == {}
    assert "#SBATCH --ntasks-per-node=1" in text.splitlines()
    assert "    --nproc_per_node=2 \\" in text.splitlines()
    assert shlex.split(text.splitlines()[-1]) == ["train.py", "--x", "y z"]


def test_preview_blank_setup_lines_dropped() -> None:
    spec, _ = validate_form(good_form(setup="\n  \nmodule load a\n\nmodule load b\n"))
    assert spec is not None and spec.setup_lines == ["module load a", "module load b"]


def test_preview_without_command_or_with_errors() -> None:
    text, errors = preview(good_form(command=""))
    assert text == "# type a command (or a script) to see the batch script\n"
    assert list(errors) == ["command"]
    text, errors = preview(good_form(time="1h"))
    assert text == "# fix the fields marked in red to see the batch script\n"
    assert list(errors) == ["time"]


def test_preview_local_run_has_a_head_and_the_same_script() -> None:
    form = good_form(where="local", nodes="1")
    text, errors = preview(form)
    spec, _ = validate_form(form)
    assert errors == {} and spec is not None
    head = "# local run: 4 process(es) on this machine, no Slurm; the script below is\n"
    assert text == head + "# what the same settings would submit to Slurm\n" + render(spec)


def test_spec_uses_this_python_by_default() -> None:
    spec, _ = validate_form(good_form())
    assert spec is not None and spec.python == sys.executable


# --------------------------------------------------------------------------- memory per cluster


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUTUI_STATE_DIR", str(tmp_path))
    return tmp_path


def test_remember_round_trip_per_cluster(state) -> None:
    lumi = good_form(partition="small-g", account="project_465000000", command="python a.py")
    ci = good_form(partition="debug", nodes="1", command="python b.py --x 'y z'", where="local")
    remember("lumi", lumi)
    remember("ci", ci)
    assert remembered("lumi") == lumi
    assert remembered("ci") == ci
    assert sorted(p.name for p in (state / "launch").iterdir()) == ["ci.json", "lumi.json"]
    assert json.loads((state / "launch" / "ci.json").read_text()) == asdict(ci)
    assert remembered("other") == LaunchForm()


def test_remember_overwrites(state) -> None:
    remember("ci", good_form(nodes="2"))
    remember("ci", good_form(nodes="3"))
    assert remembered("ci").nodes == "3"
    assert [p.name for p in (state / "launch").iterdir()] == ["ci.json"]


def test_cluster_name_is_made_a_safe_file_name(state) -> None:
    remember("../evil cluster", good_form())
    assert [p.name for p in (state / "launch").iterdir()] == [".._evil_cluster.json"]
    assert remembered("") == LaunchForm()
    remember("", good_form(nodes="5"))
    assert (state / "launch" / "default.json").is_file()
    assert remembered("").nodes == "5"


PRESET = ClusterPreset(
    partition="small-g",
    account="project_465000000",
    time="01:00:00",
    setup=("module load LUMI", "source ~/venvs/torch/bin/activate"),
)


def test_preset_fills_empty_fields(state) -> None:
    form = remembered("lumi", PRESET)
    assert (form.partition, form.account, form.time) == ("small-g", "project_465000000", "01:00:00")
    assert form.setup == "module load LUMI\nsource ~/venvs/torch/bin/activate"
    assert form.command == "" and form.nodes == "1"
    spec, errors = validate_form(replace(form, command="python x.py"))
    assert errors == {} and spec is not None
    assert spec.setup_lines == ["module load LUMI", "source ~/venvs/torch/bin/activate"]


def test_remembered_values_win_over_the_preset(state) -> None:
    remember("lumi", LaunchForm(command="python x.py", partition="standard-g", time="", setup=""))
    form = remembered("lumi", PRESET)
    assert form.command == "python x.py"
    assert form.partition == "standard-g"  # typed before: wins
    assert form.account == "project_465000000"  # never typed: the preset's
    assert form.time == "01:00:00"
    assert form.setup == "module load LUMI\nsource ~/venvs/torch/bin/activate"


@pytest.mark.parametrize("content", ["{not json", "", "[1, 2, 3]", '"text"', '{"nodes": 3, "command": null}'])
def test_corrupt_memory_gives_defaults(state, content: str) -> None:
    (state / "launch").mkdir()
    (state / "launch" / "ci.json").write_text(content, encoding="utf-8")
    assert remembered("ci") == LaunchForm()
    form = remembered("ci", PRESET)
    assert form == replace(
        LaunchForm(),
        partition="small-g",
        account="project_465000000",
        time="01:00:00",
        setup="module load LUMI\nsource ~/venvs/torch/bin/activate",
    )


def test_memory_file_not_utf8_gives_defaults(state) -> None:
    (state / "launch").mkdir()
    (state / "launch" / "ci.json").write_bytes(b'{"nodes": "\xff\xfe"}')
    assert remembered("ci") == LaunchForm()


def test_memory_ignores_unknown_and_non_text_values(state) -> None:
    (state / "launch").mkdir()
    (state / "launch" / "ci.json").write_text(json.dumps({"nodes": "4", "gpus_per_node": 2, "evil": "x"}))
    form = remembered("ci")
    assert form == replace(LaunchForm(), nodes="4")
    assert not hasattr(form, "evil")
    assert "evil" not in FIELD_NAMES


def test_remember_on_a_read_only_place_is_silent(tmp_path, monkeypatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("GPUTUI_STATE_DIR", str(blocker))  # a file: launch/ cannot be made under it
    remember("ci", good_form())
    assert remembered("ci") == LaunchForm()
