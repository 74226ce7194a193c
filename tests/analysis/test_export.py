"""``gputui export RUN... --to csv|tensorboard|mlflow DIR``: metrics, GPU-sample and epoch CSV files,
TensorBoard event files and an MLflow store, each read back with its own tool's reader; unreadable runs
and a missing optional package are one line."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest
from test_report_cli import _write_records
from test_run_report import T0, _fixture

from gputui.cli import main
from gputui.stream.records import event


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
    from gputui.stream.io import read_file

    return next(r.time for r in read_file(path) if r.kind == "metric" and r["name"] == name)


def test_mlflow_export_reads_back_with_mlflows_client(tmp_path: Path, capsys) -> None:
    from mlflow.tracking import MlflowClient

    from gputui.export.mlflow import tracking_uri

    run = tmp_path / "gputui-7-n1.jsonl"
    records = _fixture()
    _write_records(run, records)
    crashed = tmp_path / "crashed.jsonl"
    _write_records(crashed, [*records[:-1], event("outcome", time=T0 + 400, outcome="oom", evidence="OOM")])
    store = tmp_path / "mlruns"
    assert main(["export", str(run), str(crashed), "--to", "mlflow", str(store)]) == 0
    out = capsys.readouterr().out
    assert out.count("metric values: 9, GPU samples: 7, MLflow run: ") == 2
    client = MlflowClient(tracking_uri=tracking_uri(str(store)))
    experiment = client.get_experiment_by_name("gputui")
    runs = {r.info.run_name: r for r in client.search_runs([experiment.experiment_id])}
    assert set(runs) == {"gputui-7-n1.jsonl", "crashed.jsonl"}
    ok, bad = runs["gputui-7-n1.jsonl"], runs["crashed.jsonl"]
    assert (ok.info.status, bad.info.status) == ("FINISHED", "FAILED")
    assert ok.data.tags["gputui.outcome"] == "completed" and bad.data.tags["gputui.outcome"] == "oom"
    assert ok.data.tags["gputui.world_size"] == "2"
    assert (ok.info.start_time, ok.info.end_time) == (int(T0 * 1000), int((T0 + 400) * 1000))
    accuracy = client.get_metric_history(ok.info.run_id, "val_accuracy")
    assert [(m.step, m.value) for m in accuracy] == [(1, 0.5), (2, 0.7), (3, 0.8)]
    assert accuracy[0].timestamp == int(records_time(run, "val_accuracy") * 1000)
    util = client.get_metric_history(ok.info.run_id, "system/n1/gpu_GPU-A_utilization_percentage")
    assert [(m.step, m.value) for m in util] == [(0, 0), (1, 50), (2, 100), (3, 90)]
    memory = client.get_metric_history(ok.info.run_id, "system/n1/gpu_GPU-A_memory_usage_megabytes")
    assert [m.value for m in memory][:2] == [(1 << 30) / 1e6, (3 << 30) / 1e6]
    energy = client.get_metric_history(ok.info.run_id, "system/n1/gpu_GPU-B_energy_joules")
    assert [m.value for m in energy] == [1000.0, 1600.0, 250.0]


def test_mlflow_missing_is_one_line(tmp_path: Path, capsys, monkeypatch) -> None:
    run = tmp_path / "r.jsonl"
    _write_records(run, _fixture())
    monkeypatch.setitem(sys.modules, "mlflow", None)
    monkeypatch.setitem(sys.modules, "mlflow.tracking", None)
    monkeypatch.setitem(sys.modules, "mlflow.entities", None)
    monkeypatch.setitem(sys.modules, "mlflow.exceptions", None)
    assert main(["export", str(run), "--to", "mlflow", str(tmp_path / "ml")]) == 1
    err = capsys.readouterr().err
    assert err == "gputui: error: --to mlflow needs MLflow's client: pip install 'gputui[mlflow]'\n"
    assert not (tmp_path / "ml").exists()


def test_bad_runs_are_one_line(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["export", str(empty), "--to", "mlflow", str(tmp_path / "ml")]) == 1
    assert capsys.readouterr().err == f"gputui: error: {empty}: no records to export\n"
    assert main(["export", str(tmp_path / "missing.log"), str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gputui: error: ") and "no such file" in err and err.count("\n") == 1


def test_dir_may_follow_the_format_after_several_runs(tmp_path: Path, capsys) -> None:
    runs = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for run in runs:
        _write_records(run, _fixture())
    assert main(["export", *map(str, runs), "--to", "csv", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.jsonl", "b.jsonl"]
    assert main(["export", "--to", "csv", str(runs[0]), str(tmp_path / "out2")]) == 0
    assert (tmp_path / "out2" / "a.jsonl" / "epochs.csv").is_file()
    capsys.readouterr()
    assert main(["export", str(runs[0])]) == 2
    assert (
        capsys.readouterr().err
        == "gputui: error: give RUN... then DIR: gputui export RUN... --to FORMAT DIR\n"
    )
    with pytest.raises(SystemExit):
        main(["export", str(runs[0]), "--to", "csv", "out", "--bogus"])
