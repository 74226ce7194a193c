"""A full disk, for real (issue 21, part 7): a 64 KiB tmpfs mounted for the test, and ``/dev/full`` as
standard output. Every writer says in one line which file could not be written ("standard output" for
stdout) and exits non-zero; ``--log`` never leaves a partial record; a terminal of 0 columns still
gets the tables.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ci_helpers import in_ci

from gputui.stream import records
from gputui.stream.io import ReadStats, RecordWriteError, RecordWriter, read_file

STDOUT_FULL = "gputui: error: cannot write to standard output: disk full"


def cli(*argv: str, stdout=subprocess.PIPE, env: dict[str, str] | None = None, cwd: Path | None = None):
    return subprocess.run(
        [sys.executable, "-m", "gputui", *argv],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs (mounting needs root: skipped without it, except in CI), unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode:
        why = f"cannot mount a tmpfs: {done.stderr.strip()}"
        pytest.fail(why) if in_ci() else pytest.skip(why)
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True, timeout=30)


def fill(disk: Path, leave: int = 0) -> Path:
    """Fill ``disk`` with one file until it refuses more (then free ``leave`` bytes); the file."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"x" * 512)
        except OSError:
            pass
    if leave:
        os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


@pytest.fixture
def run_file(tmp_path: Path) -> Path:
    """A small run: GPU samples and three epochs."""
    path = tmp_path / "run.jsonl"
    with RecordWriter(path) as writer:
        for t in range(40):
            sample = records.gpu_sample(
                host="n1",
                gpu_id="G0",
                vendor="nvidia",
                source="nvml",
                index=0,
                time=100.0 + t,
                util_gpu_pct=90,
            )
            writer.write(sample)
        for epoch in (1, 2, 3):
            writer.write(
                records.metric("loss", 1.0 / epoch, epoch=epoch, scope="epoch", time=100.0 + 10 * epoch)
            )
    return path


def whole_records(path: Path) -> tuple[int, ReadStats]:
    stats = ReadStats()
    count = sum(1 for _ in read_file(path, stats))
    return count, stats


# --------------------------------------------------------------------------- records on a full disk


def test_log_on_a_full_disk_ends_on_a_whole_record(small_disk: Path) -> None:
    log = small_disk / "gpu.jsonl"
    done = cli("--log", str(log), "--backend", "sim", "--interval", "0.001", "--count", "100000")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"gputui: error: cannot write to {log}: disk full (records written before this are intact)"
    ]
    data = log.read_bytes()
    assert data.endswith(b"\n") and len(data) > 30_000
    count, stats = whole_records(log)
    assert count > 50 and stats.skipped == 0


def test_a_record_that_does_not_fit_is_cut_back_and_the_next_starts_clean(small_disk: Path) -> None:
    filler = fill(small_disk, leave=4096)  # one page of room
    path = small_disk / "r.jsonl"
    written = 0
    with RecordWriter(path) as writer:
        with pytest.raises(RecordWriteError, match="disk full"):
            for step in range(10_000):
                size = path.stat().st_size
                writer.write(records.metric("loss", 0.5, step=step, time=1.0))
                written += 1
        assert path.stat().st_size == size  # the part that fitted was cut back
        filler.unlink()
        writer.write(records.metric("loss", 0.4, time=2.0))
    count, stats = whole_records(path)
    assert written > 10 and count == written + 1 and stats.skipped == 0


# --------------------------------------------------------------------------- standard output is full


@pytest.mark.parametrize(
    "argv",
    [
        ["parse", "--json"],
        ["parse"],
        ["report"],
        ["report", "--json"],
        ["report", "--csv"],
        ["scale", "--from"],
        ["check"],
        ["probe", "--backend", "sim", "--count", "3"],
    ],
    ids=" ".join,
)
def test_a_full_standard_output_is_one_line_naming_it(run_file: Path, argv: list[str]) -> None:
    with open("/dev/full", "w") as full:
        done = cli(*argv, *([] if argv[0] == "probe" else [str(run_file)]), stdout=full)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [STDOUT_FULL]  # not the input file, no traceback


@pytest.mark.slurm
def test_jobs_json_into_a_full_standard_output(slurm_cluster) -> None:
    with open("/dev/full", "w") as full:
        done = cli("jobs", "--json", stdout=full, env=dict(slurm_cluster.env))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [STDOUT_FULL]


# --------------------------------------------------------------------------- files on a full disk


def test_report_plot_on_a_full_disk_names_the_figure(small_disk: Path, run_file: Path) -> None:
    pytest.importorskip("matplotlib")
    fill(small_disk)
    figure = small_disk / "fig.png"
    done = cli("report", str(run_file), "--plot", str(figure))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"gputui: error: cannot write to {figure}: disk full"]
    assert "epochs" in done.stdout  # the table was printed before


def test_scale_plot_on_a_full_disk_names_the_figure(small_disk: Path, run_file: Path) -> None:
    pytest.importorskip("matplotlib")
    fill(small_disk)
    figure = small_disk / "scaling.svg"
    done = cli("scale", "--from", str(run_file), "--plot", str(figure))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"gputui: error: cannot write to {figure}: disk full"]


def test_export_csv_on_a_full_disk_names_the_file(small_disk: Path, run_file: Path) -> None:
    fill(small_disk)
    done = cli("export", str(run_file), str(small_disk / "out"))
    assert done.returncode == 1
    folder = re.escape(str(small_disk / "out" / "run.jsonl"))
    [line] = done.stderr.splitlines()
    assert re.fullmatch(
        rf"gputui: error: cannot write to {folder}/(metrics|gpus|epochs)\.csv: disk full", line
    )


def test_export_tensorboard_on_a_full_disk_names_the_folder(small_disk: Path, run_file: Path) -> None:
    """tensorboardX's own writer thread died here and left export waiting for ever."""
    pytest.importorskip("tensorboardX")
    fill(small_disk)
    done = cli("export", str(run_file), "--to", "tensorboard", str(small_disk / "tb"))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"gputui: error: cannot write to {small_disk / 'tb' / 'run.jsonl'}: disk full"
    ]


def test_export_mlflow_on_a_full_disk_names_the_store(small_disk: Path, run_file: Path) -> None:
    pytest.importorskip("mlflow")
    fill(small_disk, leave=3 * 4096)  # room for MLflow's folders, none for the metrics
    store = small_disk / "mlruns"
    done = cli("export", str(run_file), "--to", "mlflow", str(store))
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] in (
        f"gputui: error: cannot write to {store}: disk full",
        f"gputui: error: MLflow ({store}): [Errno 28] No space left on device",
    ), done.stderr
    assert "Traceback" not in done.stderr


# --------------------------------------------------------------------------- tiny terminals


@pytest.mark.parametrize("columns", ["0", "1", "5"])
@pytest.mark.parametrize("command", ["report", "scale"])
def test_a_terminal_of_no_width_still_gets_the_numbers(run_file: Path, columns: str, command: str) -> None:
    argv = [command, str(run_file)] if command == "report" else [command, "--from", str(run_file)]
    done = cli(*argv, env={"COLUMNS": columns})
    assert done.returncode == 0 and done.stderr == ""
    assert "90.0" in done.stdout  # the GPU utilisation
    assert ("0.3333" in done.stdout) if command == "report" else ("100 %" in done.stdout)
