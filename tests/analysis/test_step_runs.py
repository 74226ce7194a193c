"""Step-based runs (steps, no epochs) in ``gputui parse``, ``gputui report`` (table, ``--json``, ``--csv``)
and ``gputui replay --headless``, through the real CLI on generated logs (:mod:`step_logs`): steps done and
planned, loss first → last and its trend, step time, tokens/s, MFU, ETA; runs with epochs unchanged."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import step_logs

from gputui.analysis.steps import StepTracker
from gputui.cli import main
from gputui.logs import parse_bytes
from gputui.stream.records import metric


def _cli(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_parse_table_of_a_nanogpt_log(tmp_path: Path, capsys) -> None:
    log = step_logs.nanogpt(tmp_path / "nano.log")
    out = _cli(capsys, "parse", str(log))
    assert "no completed epochs" not in out
    assert "  steps      step 12,000/19,073 (62 %)\n" in out
    assert "  loss       11 → 3; falling ↓ -0.8 per 1,200 steps (last 10 %)\n" in out
    assert "  step time  312.5 ms mean, 312.5 ms recent (printed)\n" in out
    assert "  tokens/s   512,000 over the run, 512,000 recent\n" in out
    assert "  elapsed    1:02:30 (the printed step times)\n" in out  # 12,001 × 0.3125 s, + the first
    assert "  MFU        38.2 %\n" in out
    assert "  ETA        36m 50s to step 19,073 (7,072 steps left)\n" in out  # 7,072 × 0.3125 s


def test_parse_table_of_megatron_hf_and_a_printed_setting(tmp_path: Path, capsys) -> None:
    mega = step_logs.megatron(tmp_path / "mega.log")
    hf = step_logs.hf_steps(tmp_path / "hf.log")
    setting = step_logs.nanogpt_setting(tmp_path / "setting.log")
    out = _cli(capsys, "parse", str(mega), str(hf), str(setting))
    mega_out, hf_out, setting_out = out.split("== ")[1:]
    assert "  steps      step 300/500 (60 %)\n" in mega_out
    assert "  lm_loss    8.99 → 6; falling ↓ -0.3 per 30 steps (last 10 %)\n" in mega_out
    assert "  step time  850.2 ms mean, 850.2 ms recent (printed)\n" in mega_out
    assert "  ETA        2m 50s to step 500 (200 steps left)\n" in mega_out  # 200 × 0.8502 s
    assert "  steps  step 1,000/2,000 (50 %)\n" in hf_out  # HF's "Total optimization steps = 2,000"
    assert "  loss   1.99 → 1; falling ↓ -0.099 per 99 steps (last 10 %)\n" in hf_out
    assert "ETA" not in hf_out  # no step time printed, no clock: no ETA invented
    assert "  steps      step 5,000/19,073 (26 %)\n" in setting_out  # "max_steps = 19073"
    assert "  ETA        58m 38s to step 19,073 (14,072 steps left)\n" in setting_out


def test_report_json_csv_and_table(tmp_path: Path, capsys) -> None:
    log = step_logs.nanogpt(tmp_path / "nano.log")
    got = json.loads(_cli(capsys, "report", "--json", str(log)))
    steps = got["steps"]
    assert steps["first_step"] == 0 and steps["last_step"] == 12000 and steps["done"] == 12001
    assert steps["planned"] == 19073 and steps["loss_name"] == "loss"
    assert steps["loss_first"] == 11.0 and steps["loss_last"] == 3.0
    assert steps["trend"] == "falling" and steps["trend_steps"] == 1200
    assert steps["trend_change"] == pytest.approx(-0.8, abs=1e-4)
    assert steps["step_time_s"] == 0.3125 and steps["step_time_recent_s"] == 0.3125
    assert steps["throughput"] == 512000.0 and steps["throughput_unit"] == "tokens/s"
    assert steps["mfu_pct"] == 38.2 and steps["eta_s"] == 2210.0
    rows = list(csv.DictReader(io.StringIO(_cli(capsys, "report", "--csv", str(log)))))
    assert rows[0]["steps_done"] == "12001" and rows[0]["steps_planned"] == "19073"
    assert rows[0]["loss_trend"] == "falling" and float(rows[0]["eta_s"]) == 2210.0
    table = _cli(capsys, "report", str(log))
    assert "step 12,000/19,073 (62 %)" in table and "36m 50s to step 19,073" in table
    assert "epoch time" not in table


def test_headless_replay_summary(tmp_path: Path, capsys) -> None:
    log = step_logs.megatron(tmp_path / "mega.log")
    out = _cli(capsys, "replay", "--headless", str(log))
    assert "training: steps (no epochs)\n" in out
    assert "  steps: step 300/500 (60 %)\n" in out
    assert "  lm_loss: 8.99 → 6; falling ↓ -0.3 per 30 steps (last 10 %)\n" in out
    assert "  ETA: 2m 50s to step 500 (200 steps left)\n" in out
    assert "epoch(s)" not in out


def test_catch_up_keeps_the_step_history(tmp_path: Path) -> None:
    """The table path reads in catch-up mode: the same first/last step, plan and losses as reading every
    frame, and a step history sampled every 128 lines (not every 128th of every 128th)."""
    data = step_logs.nanogpt(tmp_path / "nano.log").read_bytes()
    full = StepTracker().add_all(parse_bytes(data)).summary()
    thin_records = parse_bytes(data, thin=True)
    thin = StepTracker().add_all(thin_records).summary()
    assert full is not None and thin is not None
    for key in ("first_step", "last_step", "planned", "loss_first", "loss_last", "eta_s", "mfu_pct"):
        assert getattr(thin, key) == pytest.approx(getattr(full, key)), key
    steps = {r.get("step") for r in thin_records if r.kind == "metric"}
    assert len(steps) >= 12000 // 128 and 0 in steps and 12000 in steps


def test_runs_with_epochs_keep_their_epoch_table(tmp_path: Path, capsys) -> None:
    log = tmp_path / "keras.log"
    log.write_text("Epoch 1/2\n50/50 [====] - 4s - loss: 0.9\nEpoch 2/2\n50/50 [====] - 3s - loss: 0.5\n")
    out = _cli(capsys, "parse", str(log))
    assert "epoch" in out.splitlines()[1] and "steps (no epochs)" not in out
    assert json.loads(_cli(capsys, "report", "--json", str(log)))["steps"] is None


def test_step_time_from_a_clock_a_relaunch_and_the_lowest_rank() -> None:
    """Printed timestamps 2 s apart give the step time; a counter back at its start is a new run (the
    summary is the latest run's); rank 1 does not speak once rank 0 does."""
    t0 = 1_700_000_000.0
    clock = {"time_source": "printed", "rank": 0}
    records = [metric("loss", 9.0 - s / 100, step=s, time=t0 + s, **clock) for s in range(1, 51)]
    records += [
        metric("loss", 5.0, step=s, time=t0 + 100 + 2 * s, steps_total=200, **clock) for s in range(1, 101)
    ]
    records.insert(60, metric("loss", 99.0, step=500, rank=1, time=t0 + 400, time_source="printed"))
    summary = StepTracker().add_all(records).summary()
    assert summary is not None
    assert (summary.run, summary.first_step, summary.last_step, summary.planned) == (1, 1, 100, 200)
    assert summary.step_time_s == 2.0 and summary.step_time_source == "clock"
    assert summary.eta_s == 200.0 and summary.loss_last == 5.0 and summary.trend == "flat"
    read = [metric("loss", 1.0, step=s, time=t0 + s, time_source="read") for s in range(1, 10)]
    assert StepTracker().add_all(read).summary().step_time_s is None  # read times are no clock


def test_headless_summary_says_which_ends_first(tmp_path: Path) -> None:
    """An attached job's time limit against the ETA (36m 50s to the planned steps)."""
    from gputui.monitor.state import DashboardState, JobInfo
    from gputui.monitor.summary import summary_lines

    state = DashboardState(JobInfo("attach", "job 7", job_id="7", state="RUNNING"))
    state.ingest(parse_bytes(step_logs.nanogpt(tmp_path / "nano.log").read_bytes(), thin=True))
    state.clock = 1_800_000_000.0
    state.job.started, state.job.time_limit_s = state.clock - 3600, 3600 + 1800
    lines = summary_lines(state)
    assert "  time limit: the time limit ends first (6m 50s before the planned steps)" in lines
    state.job.time_limit_s = 3600 + 7200
    assert "  time limit: the planned steps end first (1h 23m before the limit)" in summary_lines(state)


@pytest.mark.parametrize("ending", ["Training completed.\n", "torch.OutOfMemoryError: CUDA out of memory.\n"])
def test_a_run_that_ended_before_its_planned_steps_gets_no_eta(tmp_path: Path, capsys, ending: str) -> None:
    """A log with an outcome has ended: where it stopped, never an ETA to steps it will not run."""
    log = step_logs.nanogpt(tmp_path / "nano.log")
    with log.open("a") as f:
        f.write(ending)
    for command in ("parse", "report"):
        out = _cli(capsys, command, str(log))
        assert "ETA" not in out
        assert "at step 12,000 of 19,073 planned (7,072 not run)" in out
