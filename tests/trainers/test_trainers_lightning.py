"""The PyTorch Lightning reference trainer against real Lightning (CPU): its records (gputui's
``LightningReporter`` callback), Lightning's own output (tqdm bars, CSVLogger, TensorBoardLogger) read
back by gputui, one process here and 2 nodes on the local Slurm cluster through ``gputui run``."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from trainer_helpers import PYTHON, records_from, run, values

from gputui.cli import main as cli_main

pytest.importorskip("pytorch_lightning")
pytestmark = pytest.mark.slow
LIGHTNING = [PYTHON, "-m", "gputui.trainers.lightning_ddp", "--accelerator", "cpu", "--batch-size", "32"]


def csv_epochs(run_dir: Path) -> list[dict[str, float]]:
    """metrics.csv's epoch rows (the val_* and *_epoch cells), one per epoch, as Lightning wrote them."""
    rows: dict[int, dict[str, float]] = {}
    with open(run_dir / "metrics.csv", newline="") as f:
        for row in csv.DictReader(f):
            cells = {
                k: float(v) for k, v in row.items() if v and (k.startswith("val_") or k.endswith("_epoch"))
            }
            if cells:
                rows.setdefault(int(row["epoch"]), {}).update(cells)
    return [rows[e] for e in sorted(rows)]


def tensorboard_epochs(run_dir: Path) -> dict[str, list[float]]:
    """The event file's end-of-epoch values per metric, from the rows gputui reads out of it."""
    (events,) = run_dir.glob("events.out.tfevents.*")
    out: dict[str, list[float]] = {}
    for row in epoch_rows(events)[None]:
        for name, value in row.values.items():
            out.setdefault(name, []).append(value)
    return out


def epoch_rows(path: Path) -> dict[int | None, list]:
    """The end-of-epoch rows gputui reads from a file (``gputui parse``'s table), per rank stream (None:
    the unlabelled stream, Lightning's bars)."""
    from gputui.logs.epochs import EpochTable
    from gputui.sources.inputs import file_records

    table = EpochTable()
    table.add_all(list(file_records(str(path))))
    rows: dict[int | None, list] = {}
    for row in table.rows():
        rows.setdefault(row.rank, []).append(row)
    return rows


def test_one_process_run(tmp_path: Path) -> None:
    res = run([*LIGHTNING, "--epochs", "2", "--run-dir", str(tmp_path / "logs")])
    assert res.returncode == 0, res.stderr[-3000:]
    (run_dir,) = (tmp_path / "logs").iterdir()
    assert run_dir.name == "version_0"  # both loggers in one run directory
    assert {p.name.split(".")[0] for p in run_dir.iterdir()} >= {"metrics", "events", "hparams"}
    # the callback's records: start, one epoch_end per epoch with Lightning's metrics, finish
    started = [e for e in records_from(res.stdout, "event") if e["event"] == "train_started"]
    assert [(e["epochs"], e["world_size"], e["steps_per_epoch"]) for e in started] == [(2, 1, 47)]
    metrics = records_from(res.stdout)
    assert [r["epoch"] for r in metrics if r["name"] == "val_loss"] == [1, 2]
    # Lightning's per-step values at its logging cadence (log_every_n_steps 10): steps 10..90
    steps = [r for r in metrics if r["name"] == "loss_step" and r.get("scope") != "epoch"]
    assert [r["step"] for r in steps] == [10, 20, 30, 40, 50, 60, 70, 80, 90]
    assert all(0 < r["epoch"] <= 2 for r in steps) and steps[0]["epoch"] == pytest.approx(10 / 47)
    # Lightning's per-step values at its logging cadence (log_every_n_steps 10): steps 10..90
    steps = [r for r in metrics if r["name"] == "loss_step" and r.get("scope") != "epoch"]
    assert [r["step"] for r in steps] == [10, 20, 30, 40, 50, 60, 70, 80, 90]
    assert all(0 < r["epoch"] <= 2 for r in steps) and steps[0]["epoch"] == pytest.approx(10 / 47)
    losses = values(metrics, "loss_epoch", rank=0)
    assert len(losses) == 2 and losses[1] < losses[0]
    assert all(v > 0 for v in values(metrics, "global_images_per_s"))
    assert len(values(metrics, "epoch_time_s")) == 2 and all(v > 0 for v in values(metrics, "epoch_time_s"))
    finished = [e for e in records_from(res.stdout, "event") if e["event"] == "train_finished"]
    assert [e["epochs"] for e in finished] == [2]
    # the callback's epoch values are Lightning's own (metrics.csv) ...
    written = csv_epochs(run_dir)
    assert values(metrics, "val_loss") == pytest.approx([row["val_loss"] for row in written])
    # ... and the TensorBoard event file holds the same values
    events = tensorboard_epochs(run_dir)
    assert events["val_loss"] == pytest.approx([row["val_loss"] for row in written])
    assert events["loss_epoch"] == pytest.approx([row["train_loss_epoch"] for row in written])
    assert events["val_accuracy"] == pytest.approx([row["val_acc"] for row in written])
    # Lightning's tqdm bars (validation bars, v_num) in its output
    out = tmp_path / "out.txt"
    out.write_text(res.stdout + res.stderr)
    assert "Validation DataLoader 0: 100%" in res.stdout and "v_num=" in res.stdout
    assert "`Trainer.fit` stopped: `max_epochs=2` reached." in res.stderr


def test_bars_alone_give_one_row_per_epoch_matching_metrics_csv(tmp_path: Path, capsys) -> None:
    """What Lightning itself writes (--no-report: no gputui records, no human lines), read by gputui."""
    argv = [*LIGHTNING, "--epochs", "3", "--no-report", "--run-dir", str(tmp_path / "logs")]
    res = run(argv)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "@gputui" not in res.stdout
    log = tmp_path / "slurm-1.out"
    log.write_text(res.stdout + res.stderr)
    (run_dir,) = (tmp_path / "logs").iterdir()
    written = csv_epochs(run_dir)
    rows = epoch_rows(log)
    assert list(rows) == [None]  # the unlabelled stream: Lightning's bars on rank 0
    assert [r.epoch for r in rows[None]] == [0, 1, 2]
    for row, expected in zip(rows[None], written, strict=True):
        # the bar prints 3 significant digits (val_loss=2.110)
        assert row.values["val_loss"] == pytest.approx(expected["val_loss"], rel=5e-3)  # 3 significant digits
        assert row.values["val_accuracy"] == pytest.approx(
            expected["val_acc"], rel=5e-3
        )  # 3 significant digits
    assert cli_main(["parse", str(log)]) == 0
    assert "outcome: completed" in capsys.readouterr().out
    # metrics.csv on its own: the same epochs, Lightning's full-precision values
    from_csv = epoch_rows(run_dir / "metrics.csv")[None]
    assert [r.values["val_loss"] for r in from_csv] == pytest.approx([w["val_loss"] for w in written])


def test_layout_mismatch_is_one_line(tmp_path: Path) -> None:
    env = {"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_NNODES": "1", "SLURM_NTASKS_PER_NODE": "2"}
    res = run([*LIGHTNING, "--devices", "4", "--run-dir", str(tmp_path)], env)
    assert res.returncode == 1
    assert res.stderr.strip().splitlines()[-1] == (
        "gputui.trainers.lightning_ddp: error: 2 processes were started but --devices 4 × --num-nodes 1 = 4: "
        "Lightning needs one task per device (#SBATCH --ntasks-per-node=4)"
    )


def test_lightning_pattern_refuses_a_job_named_bash(capsys) -> None:
    argv = ["run", "--pattern", "lightning", "--job-name", "bash", "--dry-run", "--", "python", "t.py"]
    assert cli_main(argv) == 2  # a usage error: nothing written or submitted
    assert "Lightning takes a job of that name for an interactive session" in capsys.readouterr().err


@pytest.mark.slurm
def test_two_nodes_on_the_cluster_through_gputui_run(
    cluster_env, tmp_path: Path, capsys, monkeypatch
) -> None:
    from slurm_helpers import wait_job_state

    for key, value in cluster_env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("GPUTUI_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    argv = [
        "run",
        "-N",
        "2",
        "--ntasks-per-node",
        "1",
        "--pattern",
        "lightning",
        "--time",
        "5",
        "--no-attach",
    ]
    argv += ["--setup", "export OMP_NUM_THREADS=1", "--", *LIGHTNING, "--epochs", "3"]
    assert cli_main(argv) == 0
    job = re.search(r"submitted job (\d+)", capsys.readouterr().out).group(1)
    assert (
        wait_job_state(job, {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}, 240, cluster_env) == "COMPLETED"
    )
    log = tmp_path / f"slurm-{job}.out"
    text = log.read_text()
    metrics = records_from(text)
    assert {r.get("rank") for r in metrics} == {0, 1}  # both ranks, on both nodes
    started = [e for e in records_from(text, "event") if e["event"] == "train_started"]
    assert [(e["world_size"], e["epochs"]) for e in started] == [(2, 3)]
    losses = values(metrics, "loss_epoch", rank=0)
    assert len(losses) == 3 and losses[-1] < losses[0]
    run_dir = tmp_path / "lightning_logs" / f"version_{job}"
    written = csv_epochs(run_dir)
    assert len(written) == 3
    rows = epoch_rows(log)
    assert sorted(rows, key=str) == [0, 1, None]  # each rank's records; Lightning's bars (rank 0's)
    for stream, rows_of in rows.items():  # one end-of-epoch row per epoch in each stream
        assert len(rows_of) == 3, stream
        for row, expected in zip(rows_of, written, strict=True):
            assert row.values["val_loss"] == pytest.approx(
                expected["val_loss"], rel=5e-3
            )  # 3 significant digits
    events = tensorboard_epochs(run_dir)
    assert events["val_loss"] == pytest.approx([w["val_loss"] for w in written])
    assert cli_main(["parse", str(log)]) == 0
    assert "outcome: completed" in capsys.readouterr().out
