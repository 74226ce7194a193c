"""MLflow's file store (``mlruns/``) read like TensorBoard event files: runs written by MLflow's own client
(the real ``FileStore``), read back by ``gputui parse``, ``report``, ``replay --headless`` and the
follower ``attach`` uses: every value at its step, epoch and time, and the run's end state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gputui.cli import main
from gputui.logs.files.metric_files import MetricFileFollower, metric_paths, run_dir_files, runs_of

pytest.importorskip("mlflow", reason="MLflow's client writes the runs these tests read (the test extra)")

T0 = 1_795_000_000_000  # ms
STEPS_PER_EPOCH = 4


def client_for(store: Path, monkeypatch):
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    return MlflowClient(tracking_uri=f"file:{store}")


def logged(epochs: int = 3) -> list[tuple[str, float, int, int]]:
    """(name, value, step, ms) as a Lightning-like training logs them: ``epoch`` at every logged step,
    the training loss (a nested name) per step, ``val_loss`` at each epoch's last step."""
    out = []
    for step in range(epochs * STEPS_PER_EPOCH):
        epoch, ms = step // STEPS_PER_EPOCH, T0 + 1000 * step + 7
        out += [("epoch", float(epoch), step, ms), ("train/loss", 4.0 / (step + 1), step, ms)]
        if step % STEPS_PER_EPOCH == STEPS_PER_EPOCH - 1:
            out.append(("val_loss", 1.5 - 0.25 * epoch, step, ms + 3))
    return out


def write_run(client, experiment: str, name: str, status: str | None, values) -> Path:
    from mlflow.entities import Metric

    try:
        exp_id = client.create_experiment(experiment)
    except Exception:  # it exists
        exp_id = client.get_experiment_by_name(experiment).experiment_id
    run = client.create_run(exp_id, run_name=name, start_time=T0)
    client.log_param(run.info.run_id, "lr", "0.1")
    client.log_batch(run.info.run_id, metrics=[Metric(k, v, ms, s) for k, v, s, ms in values])
    if status is not None:
        client.set_terminated(run.info.run_id, status=status, end_time=T0 + 99_000)
    return Path(run.info.artifact_uri.removeprefix("file://")).parent


def records(capsys, *paths: str) -> list[dict]:
    assert main(["parse", "--json", *paths]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_parse_reads_every_value_with_its_step_epoch_and_time(tmp_path: Path, capsys, monkeypatch) -> None:
    values = logged()
    run_dir = write_run(client_for(tmp_path / "mlruns", monkeypatch), "e", "r1", "FINISHED", values)
    out = records(capsys, str(run_dir))
    metrics = [r for r in out if r["kind"] == "metric"]
    got = sorted((r["name"], r["value"], r["step"], r["epoch"], round(r["time"] * 1000)) for r in metrics)
    canonical = {"train/loss": "loss", "val_loss": "val_loss"}
    want = sorted((canonical[n], v, s, s // STEPS_PER_EPOCH, ms) for n, v, s, ms in values if n != "epoch")
    assert got == want
    assert {r["time_source"] for r in metrics} == {"emitted"} and {r["source"] for r in metrics} == {"mlflow"}
    assert {r["scope"] for r in metrics if r["name"] == "val_loss"} == {"epoch"}
    assert {r["scope"] for r in metrics if r["name"] == "loss"} == {"step"}
    (outcome,) = [r for r in out if r.get("event") == "outcome"]
    assert outcome["outcome"] == "completed" and "r1 ended FINISHED" in outcome["evidence"]
    assert outcome["time"] == (T0 + 99_000) / 1000


def test_parse_table_report_and_replay_of_a_store(tmp_path: Path, capsys, monkeypatch) -> None:
    client = client_for(tmp_path / "mlruns", monkeypatch)
    finished = write_run(client, "e", "good", "FINISHED", logged())
    failed = write_run(client, "e", "bad", "FAILED", logged(epochs=1))
    killed = write_run(client, "other", "stopped", "KILLED", logged(epochs=2))

    assert main(["parse", str(finished)]) == 0
    table = capsys.readouterr().out
    assert "val_loss" in table and "outcome: completed" in table
    assert [line.split()[0] for line in table.splitlines()[2:5]] == ["0", "1", "2"]  # three epoch rows

    assert main(["report", "--json", str(tmp_path / "mlruns")]) == 0  # each run its own RUN
    reports = {Path(r["run"]).name: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert {name: r["outcome"] for name, r in reports.items()} == {
        finished.name: "completed",
        failed.name: "crashed",
        killed.name: "cancelled",
    }
    assert reports[finished.name]["epochs"] == 3 and reports[finished.name]["final"]["val_loss"] == 1.0
    assert [r["metrics"]["val_loss"] for r in reports[finished.name]["epoch_rows"]] == [1.5, 1.25, 1.0]
    assert len(metric_paths([str(tmp_path / "mlruns")])) == 3

    assert main(["replay", "--headless", str(finished)]) == 0
    out = capsys.readouterr().out
    assert "training: 3 epoch(s); loss 4.0000 → 0.3333" in out
    assert "epoch times s: 4.00 4.00" in out  # from the file's own times (val_loss 4 s apart)
    assert "outcome: completed: MLflow run good ended FINISHED" in out


def test_attach_follows_the_jobs_run_as_it_is_written(tmp_path: Path, monkeypatch) -> None:
    """The job's working directory holds ``mlruns/``: the newest run is found and followed; values come
    once each, the outcome when the run ends; a run still RUNNING at the job's end is ``unknown``."""
    client = client_for(tmp_path / "mlruns", monkeypatch)
    write_run(client, "e", "older", "FINISHED", logged(epochs=1))
    values = logged(epochs=2)
    run_dir = write_run(client, "e", "live", None, values[:5])
    import os

    os.utime(run_dir, (1e10, 1e10))  # the newest run
    (meta,) = run_dir_files(str(tmp_path), job_id="99", since=1e10 - 1)
    assert Path(meta).parent == run_dir and len(runs_of(str(tmp_path))) == 2
    follower = MetricFileFollower(meta, job="99")
    first = follower.poll() + follower.poll()
    assert [(r["name"], r["step"], r.get("epoch")) for r in first] == [("loss", 0, 0), ("loss", 1, 0)]

    from mlflow.entities import Metric

    run_id = run_dir.name
    client.log_batch(run_id, metrics=[Metric(k, v, ms, s) for k, v, s, ms in values[5:]])
    middle = follower.poll()
    client.set_terminated(run_id, status="FINISHED", end_time=T0 + 50_000)
    rest = follower.poll()
    got = first + middle + [r for r in rest if r.kind == "metric"]
    want = [(n.removeprefix("train/"), s, s // STEPS_PER_EPOCH) for n, _v, s, _ms in values if n != "epoch"]
    assert sorted((r["name"], r["step"], r["epoch"]) for r in got) == sorted(
        want
    )  # each once, with its epoch
    assert all(r["job"] == "99" for r in got) and [r.get("event") for r in rest][-1] == "outcome"
    assert follower.finish() == []  # told once

    still = write_run(client, "e", "cut", None, logged(epochs=1))
    (end,) = MetricFileFollower(str(still / "meta.yaml")).finish()[-1:]
    assert end["outcome"] == "unknown" and "cut is RUNNING" in end["evidence"]


def test_a_run_without_epochs_and_lines_of_other_versions(tmp_path: Path, capsys, monkeypatch) -> None:
    """No ``epoch`` logged: step values without an epoch; an old 2-field line is step 0 (as MLflow reads
    it); a line that is not a metric line is skipped, the others still read."""
    client = client_for(tmp_path / "mlruns", monkeypatch)
    run_dir = write_run(
        client, "e", "plain", "FINISHED", [("a/b/tokens_per_s", 10.0 * s, s, T0 + s) for s in (1, 2)]
    )
    with open(run_dir / "metrics" / "a" / "b" / "tokens_per_s", "a") as fh:
        fh.write(f"not a metric line\n{T0 + 9} 7.5\n")
    got = [r for r in records(capsys, str(run_dir)) if r["kind"] == "metric"]
    assert [(r["name"], r["value"], r["step"], r.get("epoch"), r["scope"]) for r in got] == [
        ("a/b/tokens_per_s", 7.5, 0, None, "step"),
        ("a/b/tokens_per_s", 10.0, 1, None, "step"),
        ("a/b/tokens_per_s", 20.0, 2, None, "step"),
    ]
