"""``--plot FILE``: the figure as a file with matplotlib; without matplotlib a terminal chart and one line
saying the file was not written; a bad file name is a one-line usage error."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_report_cli import _write_records
from test_run_report import _fixture

from gputui.analysis import plots
from gputui.cli import main
from gputui.stream.records import event, metric


def _runs(folder: Path) -> list[str]:
    paths = []
    for gpus, seconds in ((1, 45.0), (2, 24.0), (4, 12.0)):  # BSC's course figures
        records = [event("train_started", time=1.0, world_size=gpus)]
        for epoch in (1, 2, 3):
            records.append(
                metric("epoch_time_s", seconds, epoch=epoch, scope="epoch", samples=50000, time=9.0 + epoch)
            )
        path = folder / f"run{gpus}.jsonl"
        _write_records(path, records)
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_scale_plot_is_written_as_an_image(tmp_path: Path, capsys, suffix: str) -> None:
    out = tmp_path / f"scaling{suffix}"
    assert main(["scale", "--plot", str(out), "--from", *_runs(tmp_path)]) == 0
    data = out.read_bytes()
    assert len(data) > 10_000
    assert data.startswith(b"\x89PNG") if suffix == ".png" else b"<svg" in data[:2000]
    if suffix == ".svg":
        text = data.decode()
        for title in ("epoch time (s)", "images/s", "speedup", "strong scaling"):
            assert title in text
    assert "strong scaling" in capsys.readouterr().out  # the table is still printed


def test_report_plot_is_written(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _write_records(path, _fixture())
    out = tmp_path / "run.svg"
    assert main(["report", "--plot", str(out), str(path)]) == 0
    assert "epoch time (s)" in out.read_text()


def test_without_matplotlib_a_terminal_chart(tmp_path: Path, capsys, monkeypatch) -> None:
    def unavailable():
        raise plots.PlotUnavailable("matplotlib is not installed (pip install 'gputui[plot]')")

    monkeypatch.setattr(plots, "_pyplot", unavailable)
    out = tmp_path / "scaling.png"
    assert main(["scale", "--plot", str(out), "--from", *_runs(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert not out.exists()
    assert captured.err.count("\n") == 1 and "gputui[plot]" in captured.err and "not written" in captured.err
    assert "speedup" in captured.out and "ideal" in captured.out and "\x1b[" not in captured.out


@pytest.mark.parametrize(
    ("name", "words"), [("chart.txt", ".png, .svg or .pdf"), ("nodir/x.png", "no such directory")]
)
def test_a_bad_plot_file_is_a_usage_error(tmp_path: Path, capsys, name: str, words: str) -> None:
    assert main(["scale", "--plot", str(tmp_path / name), "--from", *_runs(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gputui: error: --plot") and words in err and err.count("\n") == 1
