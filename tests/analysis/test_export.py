"""``gputui export RUN... --to csv DIR``: the record stream as metrics, GPU-sample and epoch CSV files,
read back with the csv module; the targets not built yet and unreadable runs are one line."""

from __future__ import annotations

import csv
from pathlib import Path

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
    assert "metrics.csv 9 rows, gpus.csv 7 rows, epochs.csv 3 rows" in capsys.readouterr().out
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


def test_targets_not_built_and_bad_runs_are_one_line(tmp_path: Path, capsys) -> None:
    run = tmp_path / "r.jsonl"
    _write_records(run, _fixture())
    assert main(["export", str(run), "--to", "tensorboard", str(tmp_path / "tb")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not built yet" in err
    assert main(["export", str(tmp_path / "missing.log"), str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gputui: error: ") and "no such file" in err and err.count("\n") == 1
