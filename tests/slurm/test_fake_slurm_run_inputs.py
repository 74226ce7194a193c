"""A job id as a RUN (:mod:`gputui.sources.inputs`) through the fake ``scontrol``/``sacct``: its files in
the current directory first (no Slurm call); else where Slurm says its output went (a job slurmctld
still knows: ``StdOut`` and ``WorkDir``; an ended one: accounting's ``WorkDir``); else one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_slurm import FakeSlurm, job, job_line, replaced, response

from gputui.cli import main
from gputui.slurm.jobs import SEP
from gputui.slurm.sacct import SACCT_FIELDS
from gputui.sources.inputs import RunError, run_files
from gputui.stream.io import RecordWriter
from gputui.stream.records import gpu_sample

KERAS_LOG = b"Epoch 1/2\n50/50 [====] - 4s - loss: 0.9\nEpoch 2/2\n50/50 [====] - 3s - loss: 0.5\n"


def sacct_line(work_dir: str) -> str:
    values = ["3", "train", "root", "COMPLETED", "debug", "", "2", "node[1-2]", "00:10:00", "01:00:00"]
    values += ["2026-11-21T05:40:11", "2026-11-21T05:40:12", "2026-11-21T05:50:12", work_dir, "0:0"]
    assert len(values) == len(SACCT_FIELDS)
    return SEP.join(values) + "\n"


def write_job_files(folder: Path, out_name: str = "slurm-3.out") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / out_name).write_bytes(KERAS_LOG)
    for node in ("node1", "node2"):
        with RecordWriter(folder / f"gputui-3-{node}.jsonl") as writer:
            for t in range(3):
                writer.write(
                    gpu_sample(
                        host=node,
                        gpu_id="GPU-0",
                        index=0,
                        vendor="nvidia",
                        source="nvml",
                        util_gpu_pct=80.0,
                        time=t,
                    )
                )


def names(files) -> list[tuple[str, str]]:
    return [(Path(f.path).name, f.kind) for f in files]


@pytest.fixture
def slurm(tmp_path, monkeypatch) -> Iterator[FakeSlurm]:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)  # the job's files are not in the current directory
    fake = FakeSlurm(tmp_path, monkeypatch)
    yield fake
    fake.close()


def test_a_job_slurm_knows_is_read_from_where_its_output_went(slurm, tmp_path, capsys) -> None:
    work = tmp_path / "work"
    write_job_files(work, "train-3.out")
    line = replaced(job_line(stdout=str(work / "train-3.out")), ("WorkDir=/tmp/s5", f"WorkDir={work}"))
    slurm.set("scontrol show job", response(stdout=line))
    assert names(run_files("3")) == [
        ("train-3.out", "log"),
        ("gputui-3-node1.jsonl", "records"),
        ("gputui-3-node2.jsonl", "records"),
    ]
    assert main(["report", "--json", "3"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["epochs"] == 2 and got["final"] == {"loss": 0.5} and len(got["per_gpu"]) == 2
    assert slurm.calls("sacct") == []


def test_an_ended_job_is_found_through_accounting(slurm, tmp_path) -> None:
    work = tmp_path / "work"
    write_job_files(work)
    slurm.set("scontrol show job", job("GONE")).set("sacct", response(stdout=sacct_line(str(work))))
    assert names(run_files("3")) == [
        ("slurm-3.out", "log"),
        ("gputui-3-node1.jsonl", "records"),
        ("gputui-3-node2.jsonl", "records"),
    ]
    (argv,) = slurm.calls("sacct")
    assert argv[argv.index("-j") + 1] == "3"


def test_files_here_are_read_without_asking_slurm(slurm, tmp_path) -> None:
    write_job_files(Path.cwd())
    assert [kind for _name, kind in names(run_files("3"))] == ["log", "records", "records"]
    assert slurm.entries() == []


def test_a_job_unknown_to_slurm_is_one_line(slurm, capsys) -> None:
    slurm.set("scontrol show job", job("GONE")).set("sacct", response(stdout=""))
    with pytest.raises(RunError) as raised:
        run_files("3")
    here = Path.cwd()
    assert str(raised.value) == (
        f"job 3: no slurm-3.out or gputui-3-*.jsonl in {here}; Slurm: job 3 is not known to Slurm accounting"
    )
    assert main(["report", "3"]) == 1
    assert capsys.readouterr().err == f"gputui: error: {raised.value}\n"


def test_a_job_whose_files_are_gone_is_one_line(slurm, tmp_path) -> None:
    gone = tmp_path / "gone"
    slurm.set("scontrol show job", job("GONE")).set("sacct", response(stdout=sacct_line(str(gone))))
    with pytest.raises(RunError) as raised:
        run_files("3")
    assert str(raised.value) == (
        f"job 3: no slurm-3.out or gputui-3-*.jsonl in {Path.cwd()}, nor where Slurm says its output went"
        f" ({gone})"
    )
