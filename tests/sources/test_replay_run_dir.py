"""``gputui replay RUNDIR`` and ``gputui report RUNDIR``: a Lightning run directory (an event file and a
metrics.csv, as Lightning's two loggers write them) read once, through the event file (it has times)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gputui.cli import main

pytest.importorskip("tensorboardX")


def lightning_run(folder: Path) -> Path:
    from tensorboardX import SummaryWriter

    run_dir = folder / "lightning_logs" / "version_7"
    writer = SummaryWriter(logdir=str(run_dir))
    for epoch, (loss, at) in enumerate([(2.0, 100.0), (1.0, 130.0), (0.5, 145.0)]):
        writer.add_scalar("val_loss", loss, 10 * (epoch + 1), walltime=1_795_000_000 + at)
        writer.add_scalar("epoch", epoch, 10 * (epoch + 1), walltime=1_795_000_000 + at)
    writer.close()
    (run_dir / "metrics.csv").write_text("epoch,step,val_loss\n0,10,2.0\n1,20,1.0\n2,30,0.5\n")
    return run_dir


@pytest.mark.parametrize("which", ["run_dir", "work_dir"])
def test_replay_of_a_run_directory(tmp_path: Path, capsys, which: str) -> None:
    run_dir = lightning_run(tmp_path)
    assert main(["replay", "--headless", str(run_dir if which == "run_dir" else tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "training: 3 epoch(s)" in out  # not 6: metrics.csv holds the same values
    assert "epoch times s: 30.00 15.00" in out  # the event file's own times


def test_report_of_a_run_directory(tmp_path: Path, capsys) -> None:
    run_dir = lightning_run(tmp_path)
    assert main(["report", "--json", str(run_dir)]) == 0
    import json

    report = json.loads(capsys.readouterr().out)
    assert report["epochs"] == 3 and report["final"] == {"val_loss": 0.5}
    assert [r["metrics"]["val_loss"] for r in report["epoch_rows"]] == [2.0, 1.0, 0.5]


def test_a_directory_without_metric_files_is_one_line(tmp_path: Path, capsys) -> None:
    assert main(["replay", "--headless", str(tmp_path)]) != 0
    err = capsys.readouterr()
    assert "a directory without metrics.csv, event files, lightning_logs/ or nccl-inspector-*/" in (
        err.out + err.err
    )


def test_a_log_without_times_gives_no_epoch_times(tmp_path: Path, capsys) -> None:
    """metrics.csv has no times and neither do these lines: the replay orders them on its timeline but
    measures no epoch time from that (it would be the replay's spacing, not the run's)."""
    log = tmp_path / "train.log"
    log.write_text("".join(f"Epoch {e}/3 - loss: {1 / e:.3f} - val_loss: {2 / e:.3f}\n" for e in (1, 2, 3)))
    csv = tmp_path / "metrics.csv"
    csv.write_text("epoch,step,val_loss\n0,10,2.0\n1,20,1.0\n")
    for path, epochs in ((log, 3), (csv, 2)):
        assert main(["replay", "--headless", str(path)]) == 0
        out = capsys.readouterr().out
        assert f"training: {epochs} epoch(s)" in out and "epoch times s:" not in out, out
