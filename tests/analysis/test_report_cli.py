"""``gputui report`` and ``gputui scale --from`` through the real CLI: record files, training logs, job
ids, the three output forms, one-line errors; and a report of every peer log agrees with ``gputui parse``."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest
from test_run_report import _fixture

from gputui.cli import main
from gputui.commands.report import analyse
from gputui.logs import parse_bytes
from gputui.logs.epochs import EpochTable
from gputui.stream.io import encode_record

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "logs"))
from log_testdata import DATA, NAMES


def _write_records(path: Path, records) -> None:
    path.write_bytes(b"".join(encode_record(r) for r in records))


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


def test_report_of_a_record_file_as_json_csv_and_table(tmp_path: Path, capsys) -> None:
    path = tmp_path / "gputui-77-node1.jsonl"
    _write_records(path, _fixture())
    status, out, _ = _cli(capsys, "report", "--json", str(path))
    assert status == 0
    got = json.loads(out)
    assert got["gpus"] == 2 and got["epochs"] == 3 and got["epoch_time_s"] == pytest.approx(25.0)
    assert got["throughput"] == pytest.approx(250.0) and got["throughput_unit"] == "images/s"
    assert got["energy_j"] == pytest.approx(7850.0) and got["outcome"] == "completed"
    assert [g["gpu_id"] for g in got["per_gpu"]] == ["GPU-A", "GPU-B"]
    status, out, _ = _cli(capsys, "report", "--csv", str(path))
    rows = list(csv.DictReader(io.StringIO(out)))
    assert status == 0 and rows[0]["epochs"] == "3" and float(rows[0]["epoch_time_s"]) == 25.0
    status, out, _ = _cli(capsys, "report", str(path))
    assert status == 0
    assert "25.00 s (first epoch left out)" in out and "250.0 images/s" in out and "GPU-A" in out


def test_a_job_id_reads_its_output_and_record_files_together(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    records = _fixture()
    _write_records(tmp_path / "gputui-4242-node1.jsonl", [r for r in records if r.kind == "gpu"])
    (tmp_path / "slurm-4242.out").write_bytes(
        b"Epoch 1/2\n50/50 [====] - 4s - loss: 0.9 - accuracy: 0.5\nEpoch 2/2\n50/50 [====] - 3s - loss: 0.5"
        b" - accuracy: 0.8\n"
    )
    status, out, _ = _cli(capsys, "report", "--json", "4242")
    got = json.loads(out)
    assert status == 0 and got["epochs"] == 2 and len(got["per_gpu"]) == 2
    assert got["final"] == {"loss": 0.5, "accuracy": 0.8} and got["outcome"] == "completed"


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ("999999", "job 999999: no slurm-999999.out"),
        ("nope.log", "nope.log: no such file"),
        (".", "a directory without metrics.csv, event files, lightning_logs/ or nccl-inspector-*/"),
    ],
)
def test_a_run_that_cannot_be_read_is_one_line(
    tmp_path: Path, capsys, monkeypatch, run: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = _cli(capsys, "report", run)
    assert status == 1 and out == ""
    assert err.startswith("gputui: error: ") and message in err and err.count("\n") == 1


def test_scale_from_existing_runs(tmp_path: Path, capsys) -> None:
    paths = []
    for gpus, seconds in ((1, 40.0), (2, 22.0)):
        path = tmp_path / f"run{gpus}.jsonl"
        records = [r for r in _fixture() if r.kind != "metric" and r.get("event") != "train_started"]
        from gputui.stream.records import event, metric

        records.insert(0, event("train_started", time=1.0, world_size=gpus))
        for epoch in (1, 2, 3):
            records.append(metric("epoch_time_s", seconds, epoch=epoch, scope="epoch", time=10.0 * epoch))
        _write_records(path, records)
        paths.append(str(path))
    status, out, _ = _cli(capsys, "scale", "--json", "--from", *paths)
    got = json.loads(out)
    assert status == 0 and got["scaling"] == "strong"
    assert [p["gpus"] for p in got["points"]] == [1, 2]
    assert got["points"][1]["speedup"] == pytest.approx(40 / 22)
    assert got["points"][1]["efficiency"] == pytest.approx(40 / 22 / 2)
    status, out, _ = _cli(capsys, "scale", "--from", *paths)
    assert status == 0 and "strong scaling" in out and "1.82×" in out and "91 %" in out
    status, _, err = _cli(capsys, "scale")
    assert status == 2 and "--from" in err


@pytest.mark.parametrize("name", NAMES)
def test_every_peer_log_reports_what_parse_reads(name: str) -> None:
    path = DATA / f"{name}.log"
    report = analyse(str(path))
    records = parse_bytes(path.read_bytes())
    table = EpochTable()
    table.add_all(records)
    rows = table.rows()
    ranks = [r.rank for r in rows if r.rank is not None]
    expected = [r for r in rows if r.rank == min(ranks)] if ranks else rows
    assert [(r.run, r.epoch) for r in report.epochs] == [(r.run, r.epoch) for r in expected]
    outcome = [r for r in records if r.kind == "event" and r.get("event") == "outcome"][-1]
    assert report.outcome == outcome.get("outcome")


def test_the_idle_share_follows_the_alerts_idle_threshold(tmp_path: Path, capsys, monkeypatch) -> None:
    """The report's idle share, the dashboard's idle flag and the verdicts: one threshold, the settings'
    ``[alerts] idle_util_pct`` (GPU-A: util 0, 50, 100, 90; GPU-B: 2, 4, 80)."""
    path = tmp_path / "gputui-77-node1.jsonl"
    _write_records(path, _fixture())
    settings = tmp_path / "config.toml"
    settings.write_text("[alerts]\nidle_util_pct = 60\n")
    monkeypatch.setenv("GPUTUI_CONFIG", str(settings))
    status, out, _ = _cli(capsys, "report", "--json", str(path))
    assert status == 0
    assert [g["idle_share"] for g in json.loads(out)["per_gpu"]] == [pytest.approx(0.5), pytest.approx(2 / 3)]
    settings.write_text("[alerts]\nidle_util_pct = 3\n")
    status, out, _ = _cli(capsys, "report", "--json", str(path))
    assert [g["idle_share"] for g in json.loads(out)["per_gpu"]] == [
        pytest.approx(0.25),
        pytest.approx(1 / 3),
    ]
