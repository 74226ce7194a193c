"""``gputui report --csv`` carries the energy the text report shows (kWh, J per epoch, J per step), in
columns appended after the earlier ones; an empty cell where a figure is unknown, never a guess. The
records are the energy tests' (watts × seconds worked out by hand)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from test_energy import T0, _epochs, _gpu

from gputui.cli import main
from gputui.stream.io import encode_record
from gputui.stream.records import Record, metric

EARLIER = "run,gpus,epochs,epoch_time_s,throughput,throughput_unit,util_mean_pct,energy_j,outcome,"
EARLIER += "steps_done,steps_planned,loss_first,loss_last,loss_trend,step_time_s,eta_s,verdict"
ENERGY = ("energy_j", "energy_kwh", "energy_j_per_epoch", "energy_j_per_step")


def _csv(tmp_path: Path, capsys, records: list[Record]) -> tuple[str, dict[str, str]]:
    """The header line and the one row of ``report --csv`` on a record file of ``records``."""
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"".join(encode_record(r) for r in sorted(records, key=lambda r: r.time)))
    assert main(["report", "--csv", str(path)]) == 0
    out = capsys.readouterr().out
    (row,) = csv.DictReader(io.StringIO(out))
    return out.splitlines()[0], row


def test_four_gpus_at_300_w_for_three_100_s_epochs(tmp_path: Path, capsys) -> None:
    """360 kJ = 0.1 kWh, 120 kJ per epoch; no steps counted: J per step unknown, an empty cell."""
    gpus = [_gpu("n1", i, T0 + t, power_w=300.0) for i in range(4) for t in range(0, 301, 10)]
    header, row = _csv(tmp_path, capsys, gpus + _epochs())
    assert header == EARLIER + ",energy_kwh,energy_j_per_epoch,energy_j_per_step"
    assert [row[k] for k in ENERGY] == ["360000.0", "0.1", "120000.0", ""]


def test_a_step_run_has_joules_per_step_and_no_epoch_figure(tmp_path: Path, capsys) -> None:
    """2 GPUs at 250 W, 2 s per step: 1 kJ per step; 100 kJ over 200 s; no epochs: an empty cell."""
    gpus = [_gpu("n1", i, T0 + t, power_w=250.0) for i in range(2) for t in range(0, 201, 5)]
    steps = [metric("loss", 3.0 - s / 100, step=s, time=T0 + 2.0 * s) for s in range(1, 100)]
    _, row = _csv(tmp_path, capsys, gpus + steps)
    assert [row[k] for k in ENERGY] == ["100000.0", str(100_000.0 / 3.6e6), "", "1000.0"]
    assert row["steps_done"] == "99"


def test_no_power_sampled_leaves_every_energy_cell_empty(tmp_path: Path, capsys) -> None:
    gpus = [_gpu("n1", i, T0 + t, util_gpu_pct=90.0) for i in range(2) for t in range(0, 301, 10)]
    header, row = _csv(tmp_path, capsys, gpus + _epochs())
    assert header.startswith(EARLIER + ",")
    assert [row[k] for k in ENERGY] == ["", "", "", ""]
    assert row["epochs"] == "3" and row["util_mean_pct"] == "90.0"
