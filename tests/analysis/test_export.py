"""``gputui export RUN... --to csv DIR``: the record stream as metrics, GPU-sample and epoch CSV files,
read back with the csv module; the targets not built yet and unreadable runs are one line."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from test_report_cli import _write_records
from test_run_report import _fixture

from gputui.cli import main


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_csv_export_reads_back(tmp_path: Path, capsys) -> None:
    run = tmp_path / "gputui-5-n1.jsonl"
    records = _fixture()
    _write_records(run, records)
    assert main(["export", str(run), "--to", "csv", str(tmp_path / "out")]) == 0
    folder = tmp_path / "out" / "gputui-5-n1.jsonl"
    assert "metrics.csv: 9, gpus.csv: 7, epochs.csv: 3" in capsys.readouterr().out
    metrics = _rows(folder / "metrics.csv")
    assert [(m["name"], float(m["value"]), m["epoch"]) for m in metrics[:3]] == [
        ("epoch_time_s", 40.0, "1"),
        ("val_accuracy", 0.5, "1"),
        ("loss", 1.0, "1"),
    ]
    gpus = _rows(folder / "gpus.csv")
    assert [(g["gpu_id"], g["util_gpu_pct"]) for g in gpus[:4]] == [
        ("GPU-A", "0"),
        ("GPU-A", "50"),
        ("GPU-A", "100"),
        ("GPU-A", "90"),
    ]
    assert gpus[4]["energy_j"] == "1000.0" and gpus[0]["power_w"] == "100"
    epochs = _rows(folder / "epochs.csv")
    assert [(e["epoch"], e["epoch_time_s"], e["val_accuracy"]) for e in epochs] == [
        ("1", "40.0", "0.5"),
        ("2", "20.0", "0.7"),
        ("3", "30.0", "0.8"),
    ]
    assert epochs[1]["images_per_s"] == "300.0"  # 6000 samples in 20 s


def test_tensorboard_export_reads_back_with_tensorboards_reader(tmp_path: Path, capsys) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run = tmp_path / "gputui-6-n1.jsonl"
    _write_records(run, _fixture())
    assert main(["export", str(run), "--to", "tensorboard", str(tmp_path / "tb")]) == 0
    assert "metric values: 9, GPU samples: 7" in capsys.readouterr().out
    events = EventAccumulator(str(tmp_path / "tb" / "gputui-6-n1.jsonl"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"val_accuracy", "loss", "epoch_time_s", "system/n1/gpuGPU-A/util_gpu_pct"} <= tags
    accuracy = events.Scalars("val_accuracy")
    assert [(e.step, round(e.value, 6)) for e in accuracy] == [(1, 0.5), (2, 0.7), (3, 0.8)]
    util = events.Scalars("system/n1/gpuGPU-A/util_gpu_pct")
    assert [e.value for e in util] == [0, 50, 100, 90] and [e.step for e in util] == [0, 1, 2, 3]
    energy = events.Scalars("system/n1/gpuGPU-B/energy_j")
    assert [e.value for e in energy] == [1000.0, 1600.0, 250.0]
    assert accuracy[0].wall_time == pytest.approx(records_time(run, "val_accuracy"))


def records_time(path: Path, name: str) -> float:
    from gputui.recordio import read_file

    return next(r.time for r in read_file(path) if r.kind == "metric" and r["name"] == name)


def test_targets_not_built_and_bad_runs_are_one_line(tmp_path: Path, capsys) -> None:
    run = tmp_path / "r.jsonl"
    _write_records(run, _fixture())
    assert main(["export", str(run), "--to", "mlflow", str(tmp_path / "ml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not built yet" in err
    assert main(["export", str(tmp_path / "missing.log"), str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gputui: error: ") and "no such file" in err and err.count("\n") == 1
