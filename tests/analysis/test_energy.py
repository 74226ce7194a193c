"""Energy per run, per epoch and per step from generated GPU samples with known values (every expected
number below is worked out by hand: watts × seconds)."""

from __future__ import annotations

import json

import pytest

from gputui.analysis import RunAnalysis
from gputui.analysis.energy import joules_text
from gputui.analysis.tables import energy_rows
from gputui.cli import main
from gputui.stream.io import encode_record
from gputui.stream.records import Record, event, gpu_sample, metric

T0 = 1_795_000_000.0


def _gpu(host: str, index: int, t: float, **values) -> Record:
    return gpu_sample(
        host=host, gpu_id=f"GPU-{host}-{index}", vendor="nvidia", source="nvml", time=t, index=index, **values
    )


def _epochs(count: int = 3, seconds: float = 100.0) -> list[Record]:
    """train_started at T0; epoch N ends at T0 + N × seconds, its time printed."""
    out = [event("train_started", time=T0, epochs=count, world_size=4)]
    for n in range(1, count + 1):
        common = {"epoch": n, "epoch_base": 1, "rank": 0, "scope": "epoch", "time": T0 + n * seconds}
        out.append(metric("epoch_time_s", seconds, **common))
        out.append(metric("loss", 1.0 / n, **common))
    return out


def _analyse(records: list[Record]) -> RunAnalysis:
    return RunAnalysis("run", idle_pct=5.0).add_all(sorted(records, key=lambda r: r.time))


def test_four_gpus_at_300_w_use_120_kj_per_100_s_epoch_from_power() -> None:
    gpus = [_gpu("n1", i, T0 + t, power_w=300.0) for i in range(4) for t in range(0, 301, 10)]
    energy = _analyse(gpus + _epochs()).report().energy
    assert energy.total_j == pytest.approx(4 * 300 * 300)  # 360 kJ = 0.1 kWh
    assert energy.kwh == pytest.approx(0.1)
    assert energy.source == "power" and energy.gaps == 0
    assert [e.joules for e in energy.epochs] == pytest.approx([120_000.0] * 3)
    assert energy.per_epoch_j == pytest.approx(120_000.0)
    assert joules_text(energy.per_epoch_j) == "120 kJ" and joules_text(energy.total_j) == "0.10 kWh"


def test_the_energy_counter_wins_over_power_and_a_reset_counts_from_zero() -> None:
    gpus = []
    for i in range(4):
        for t in range(0, 301, 10):
            counter = 5_000.0 + 300.0 * t
            if i == 0 and t >= 150:  # GPU 0's counter restarts from zero after t = 140 (a driver reload)
                counter = 300.0 * (t - 140)
            gpus.append(_gpu("n1", i, T0 + t, energy_j=counter, power_w=50.0))  # power says less: not used
    energy = _analyse(gpus + _epochs()).report().energy
    assert energy.source == "counter"
    assert energy.total_j == pytest.approx(4 * 300 * 300)
    assert [e.joules for e in energy.epochs] == pytest.approx([120_000.0] * 3)


def test_a_power_gap_makes_its_epochs_unknown_and_is_said() -> None:
    times = [t for t in range(0, 301, 10) if not 150 < t < 250]  # GPU 3 unsampled from 150 s to 250 s
    gpus = [_gpu("n1", i, T0 + t, power_w=300.0) for i in range(3) for t in range(0, 301, 10)]
    gpus += [_gpu("n1", 3, T0 + t, power_w=300.0) for t in times]
    energy = _analyse(gpus + _epochs()).report().energy
    assert energy.gaps == 1
    assert [e.joules for e in energy.epochs] == [pytest.approx(120_000.0), None, None]
    assert energy.per_epoch_j == pytest.approx(120_000.0)
    assert energy.total_j == pytest.approx(3 * 300 * 300 + 300 * (150 + 50))  # the gap is not integrated
    text = dict(energy_rows(_analyse(gpus + _epochs()).report().energy))
    assert "1 gap over 60 s not counted" in text["energy"]
    assert text["energy per epoch"] == "120 kJ (mean of 1)"


def test_no_power_sampled_is_unknown_not_zero() -> None:
    gpus = [_gpu("n1", i, T0 + t, util_gpu_pct=90.0) for i in range(2) for t in range(0, 301, 10)]
    report = _analyse(gpus + _epochs()).report()
    assert report.energy.total_j is None and report.energy.per_epoch_j is None
    assert energy_rows(report.energy) == [("energy", "unknown (no power sampled)")]


def test_an_mi250x_package_power_on_one_gcd_is_counted_once() -> None:
    gpus = []
    for t in range(0, 301, 10):
        gpus.append(_gpu("n1", 0, T0 + t, power_w=500.0, power_scope="package"))
        gpus.append(_gpu("n1", 1, T0 + t, power_w=None, missing={"power_w": "secondary_die"}))
    energy = _analyse(gpus + _epochs()).report().energy
    assert energy.gpus_with_energy == 1
    assert [e.joules for e in energy.epochs] == pytest.approx([50_000.0] * 3)


def test_joules_per_step_from_the_steps_done_in_the_recent_window() -> None:
    gpus = [_gpu("n1", i, T0 + t, power_w=250.0) for i in range(2) for t in range(0, 201, 5)]
    steps = [metric("loss", 3.0 - s / 100, step=s, time=T0 + 2.0 * s) for s in range(1, 100)]  # 2 s/step
    report = _analyse(gpus + steps).report()
    assert report.steps is not None and report.energy.epochs == []
    assert report.energy.per_step_j == pytest.approx(2 * 250 * 2.0)  # 1 kJ per step


def test_joules_per_step_from_recent_power_and_a_printed_step_time() -> None:
    """Steps read from a log (no clock on them): the recent power × the printed step time."""
    gpus = [_gpu("n1", i, T0 + t, power_w=250.0) for i in range(2) for t in range(0, 201, 5)]
    steps = [
        metric("step_time_ms", 400.0, step=s, time=T0 + 100 + s, time_source="read") for s in range(1, 50)
    ]
    assert _analyse(gpus + steps).report().energy.per_step_j == pytest.approx(2 * 250 * 0.4)


def test_report_json_and_text_say_kwh_and_joules_per_epoch(tmp_path, capsys) -> None:
    gpus = [_gpu("n1", i, T0 + t, power_w=300.0) for i in range(4) for t in range(0, 301, 10)]
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"".join(encode_record(r) for r in sorted(gpus + _epochs(), key=lambda r: r.time)))
    assert main(["report", "--json", str(path)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["energy"]["kwh"] == pytest.approx(0.1)
    assert got["energy"]["per_epoch_j"] == pytest.approx(120_000.0)
    assert [e["energy_j"] for e in got["energy"]["epochs"]] == pytest.approx([120_000.0] * 3)
    assert main(["report", str(path)]) == 0
    text = capsys.readouterr().out
    assert "0.10 kWh (power)" in text and "energy per epoch" in text and "120 kJ (mean of 3)" in text


def _read_rows(apart_s: float) -> list[Record]:
    """Epoch lines without times, as a follower read them (``time_source: read``) ``apart_s`` apart,
    the last at T0 + 300; each states its epoch time (100 s)."""
    out = []
    for n in (1, 2, 3):
        t = T0 + 300 - (3 - n) * apart_s
        common = {"epoch": n, "epoch_base": 1, "scope": "epoch", "time": t, "time_source": "read"}
        out += [metric("epoch_time_s", 100.0, **common), metric("loss", 1.0 / n, **common)]
    return out


def test_epochs_read_live_have_energy_and_a_log_parsed_afterwards_has_none() -> None:
    """``attach --output`` keeps the times the lines were read as the log grew (100 s apart here): a
    clock; ``gputui parse`` reads them all at once (1 ms apart): not one, so no epoch energy from them."""
    gpus = [_gpu("n1", i, T0 + t, power_w=300.0) for i in range(4) for t in range(0, 301, 10)]
    live = _analyse(gpus + _read_rows(100.0)).report().energy
    assert [e.joules for e in live.epochs] == pytest.approx([120_000.0] * 3)
    parsed = _analyse(gpus + _read_rows(0.001)).report().energy
    assert parsed.epochs == [] and parsed.per_epoch_j is None
    assert parsed.total_j == pytest.approx(360_000.0)
