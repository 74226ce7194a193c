"""The run inputs (:mod:`gputui.sources.inputs`): every kind of RUN resolved to its files with their kinds
and read as records once; a RUN that cannot be resolved or read is one line. The job id through Slurm
is in ``tests/slurm/test_fake_slurm_run_inputs.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gputui.cli import main
from gputui.sources.inputs import RunError, RunFile, run_files, run_records
from gputui.stream.io import RecordWriter
from gputui.stream.records import event, metric

KERAS_LOG = b"Epoch 1/2\n50/50 [====] - 4s - loss: 0.9\nEpoch 2/2\n50/50 [====] - 3s - loss: 0.5\n"


def write_records(path: Path) -> Path:
    with RecordWriter(path) as writer:
        writer.write(event("train_started", time=1.0, world_size=2))
        writer.write(metric("loss", 0.7, epoch=1, scope="epoch", time=2.0))
    return path


def mlflow_run(folder: Path) -> Path:
    """An MLflow file-store run as MLflow writes it: ``meta.yaml`` (status 3: FINISHED) and one metric."""
    (folder / "metrics").mkdir(parents=True)
    (folder / "meta.yaml").write_text("run_name: r\nstatus: 3\n")
    (folder / "metrics" / "loss").write_text("1795000000000 0.25 1\n1795000001000 0.125 2\n")
    return folder


def kinds(run: str, folder: str = ".") -> list[tuple[str, str]]:
    return [(Path(f.path).name, f.kind) for f in run_files(run, folder)]


def test_each_kind_of_file_and_run_directory(tmp_path: Path) -> None:
    records = write_records(tmp_path / "run.jsonl")
    (tmp_path / "train.log").write_bytes(KERAS_LOG)
    version = tmp_path / "work" / "lightning_logs" / "version_3"
    version.mkdir(parents=True)
    (version / "metrics.csv").write_text("epoch,step,loss\n0,10,2.0\n1,20,1.0\n")
    events = tmp_path / "tb" / "events.out.tfevents.1.host"
    events.parent.mkdir()
    events.write_bytes(b"\x18\x00\x00\x00")
    wandb_run = tmp_path / "wandb" / "offline-run-20260101_000000-abc"
    wandb_run.mkdir(parents=True)
    (wandb_run / "run-abc.wandb").write_bytes(b":W&B\xe1\xbe\x00")
    mlflow = mlflow_run(tmp_path / "mlruns" / "1" / "0123abcd")

    assert kinds(str(records)) == [("run.jsonl", "records")]
    assert kinds(str(tmp_path / "train.log")) == [("train.log", "log")]
    assert kinds(str(tmp_path / "work")) == [("metrics.csv", "csv")]  # a job's working directory
    assert kinds(str(events.parent)) == [(events.name, "tensorboard")]
    assert kinds(str(wandb_run)) == [("run-abc.wandb", "wandb")]
    assert kinds(str(mlflow)) == [("meta.yaml", "mlflow")]


def test_each_file_is_read_as_records_by_its_kind(tmp_path: Path) -> None:
    records = write_records(tmp_path / "run.jsonl")
    (tmp_path / "train.log").write_bytes(KERAS_LOG)
    version = tmp_path / "lightning_logs" / "version_0"
    version.mkdir(parents=True)
    (version / "metrics.csv").write_text("epoch,step,val_loss\n0,10,2.0\n1,20,1.0\n")
    mlflow = mlflow_run(tmp_path / "mlruns" / "1" / "0123abcd")

    assert [r.get("event") or r.get("name") for r in run_records(str(records))] == ["train_started", "loss"]
    losses = [r["value"] for r in run_records(str(tmp_path / "train.log")) if r.get("name") == "loss"]
    assert losses[-2:] == [0.9, 0.5]
    csv_values = [r["value"] for r in run_records(str(tmp_path)) if r.get("name") == "val_loss"]
    assert csv_values == [2.0, 1.0]
    read = list(run_records(str(mlflow)))
    assert [r["value"] for r in read if r.get("name") == "loss"] == [0.25, 0.125]
    assert read[-1]["event"] == "outcome"


def test_a_job_id_is_its_output_and_record_files_here(tmp_path: Path) -> None:
    write_records(tmp_path / "gputui-77-node1.jsonl")
    write_records(tmp_path / "gputui-77-node2.jsonl")
    write_records(tmp_path / "gputui-777-node1.jsonl")  # another job
    (tmp_path / "slurm-77.out").write_bytes(KERAS_LOG)
    assert kinds("77", str(tmp_path)) == [
        ("slurm-77.out", "log"),
        ("gputui-77-node1.jsonl", "records"),
        ("gputui-77-node2.jsonl", "records"),
    ]


def test_a_file_is_never_taken_for_a_job_id_where_they_are_not_runs(tmp_path: Path) -> None:
    (tmp_path / "slurm-12.out").write_bytes(KERAS_LOG)
    with pytest.raises(RunError) as raised:
        run_files("12", str(tmp_path), job_ids=False)  # replay: a file or a run directory only
    assert str(raised.value) == "12: no such file"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("nope.log", "{path}: no such file"),
        (
            "empty-dir",
            "{path}: a directory without metrics.csv, event files, lightning_logs/ or nccl-inspector-*/",
        ),
    ],
)
def test_a_run_that_cannot_be_resolved_is_one_line(tmp_path: Path, name: str, message: str) -> None:
    (tmp_path / "empty-dir").mkdir()
    path = str(tmp_path / name)
    with pytest.raises(RunError) as raised:
        run_records(path)  # resolved at once, before a record is taken
    assert str(raised.value) == message.format(path=path)


def test_a_file_that_cannot_be_read_is_one_line(tmp_path: Path) -> None:
    """A file that exists and fails when read (/proc/self/mem answers EIO at offset 0)."""
    with pytest.raises(RunError) as raised:
        list(run_records("/proc/self/mem"))
    assert str(raised.value) == "cannot read /proc/self/mem: Input/output error"


def test_a_reader_that_cannot_be_had_is_one_line(tmp_path: Path, monkeypatch) -> None:
    run_file = tmp_path / "run-abc.wandb"
    run_file.write_bytes(b":W&B\xe1\xbe\x00")
    for module in ("wandb", "wandb.proto", "wandb.proto.wandb_internal_pb2"):
        monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    with pytest.raises(RunError) as raised:
        list(run_records(str(run_file)))
    assert str(raised.value).startswith(f"{run_file}: ") and "pip install" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_check_reads_every_file_as_records_whatever_its_first_line(tmp_path: Path, capsys) -> None:
    """check is for record files: a log given to it is lines skipped, never a clean file."""
    log = tmp_path / "train.log"
    log.write_bytes(KERAS_LOG)
    assert RunFile.of(str(log)).kind == "log"
    assert main(["check", str(log)]) == 1
    assert f"{log}: read 0 records; skipped 4 lines (4 malformed)" in capsys.readouterr().out


def test_export_of_a_run_that_cannot_be_resolved_writes_nothing(tmp_path: Path, capsys) -> None:
    assert main(["export", str(tmp_path / "nope.log"), "--to", "csv", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == f"gputui: error: {tmp_path / 'nope.log'}: no such file\n"
    assert not (tmp_path / "out").exists()
