"""True text on the dashboard: the epoch after the end is the last one (a finished 5-epoch log replayed
said ``epoch 6``; a completed 20-epoch job said ``epoch 21 (20 done)``), and a job without GPUs says so
(never a count it does not have). Pilot checks of the header and training pane as drawn, and checks of
the state's text where a Slurm job is needed."""

from __future__ import annotations

import os
import re
from pathlib import Path

import tui_data
from test_dashboard_snapshots import folder  # noqa: F401 (the fixture)
from textual.widgets import Static

from gputui.analysis.energy import joules_text
from gputui.cli import main
from gputui.home.rows import JobRow
from gputui.monitor.state import DashboardState, JobInfo
from gputui.slurm.jobs import Job
from gputui.stream.records import event, gpu_sample, metric
from gputui.tui.widgets.header import banner_text, header_text
from gputui.tui.widgets.jobs_text import detail_line
from gputui.tui.widgets.training_text import epoch_lines

KERAS_EPOCH = (
    "Epoch {n}/5\n469/469 [==============================] - 10s 21ms/step - loss: {loss:.4f}"
    " - accuracy: 0.9{n}00 - val_loss: {loss:.4f} - val_accuracy: 0.9{n}50\n"
)


def keras_log(where: Path) -> list[str]:
    """A Keras ``fit`` log of 5 epochs, all done (no end message: the file simply ends)."""
    path = where / "keras5.log"
    path.write_text("".join(KERAS_EPOCH.format(n=n, loss=0.5 / n) for n in range(1, 6)))
    os.utime(path, (tui_data.T0, tui_data.T0))
    return ["keras5.log"]


def _drawn(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).visual)


async def test_a_finished_five_epoch_log_replayed_says_epoch_5_not_6(folder):  # noqa: F811
    app = tui_data.make_app(keras_log(folder))
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            screen = await tui_data.wait_loaded(pilot)
            header, pane = _drawn(screen, "#header"), _drawn(screen, "#epoch-lines")
            assert "epoch 5" in header and "epoch 6" not in header
            assert "epoch 5 (5 done)" in pane and "epoch 6" not in pane
    finally:
        app.source.stop()


def _job(**info) -> DashboardState:
    return DashboardState(JobInfo(kind="attach", title="job 14", job_id="14", state="RUNNING", **info))


def _twenty_epochs(state: DashboardState, *, planned: int | None = None) -> None:
    records = [event("train_started", time=1000.0, epochs=planned)] if planned else []
    for n in range(1, 21):
        common = {"epoch": n, "epoch_base": 1, "scope": "epoch", "time": 1000.0 + 30 * n}
        records += [metric("loss", 1.0 / n, **common), metric("epoch_time_s", 30.0, **common)]
    state.ingest(records)


def test_a_running_job_is_in_the_epoch_after_its_last_completed_one() -> None:
    state = _job()
    _twenty_epochs(state)
    assert "epoch 21" in header_text(state).plain  # running: the 21st epoch is under way
    assert "epoch 21 (20 done)" in epoch_lines(state.training, 80).plain


def test_a_completed_job_of_unplanned_epochs_says_its_last_epoch() -> None:
    for end in ("slurm", "outcome", "train_finished"):
        state = _job()
        _twenty_epochs(state)
        if end == "slurm":
            state.set_state("COMPLETED")
        elif end == "outcome":
            state.ingest([event("outcome", time=1700.0, outcome="completed", evidence="done")])
        else:
            state.ingest([event("train_finished", time=1700.0, epochs=20)])
        header, pane = header_text(state).plain, epoch_lines(state.training, 80).plain
        assert re.search(r"epoch 20\b", header) and "epoch 21" not in header, end
        assert "epoch 20 (20 done)" in pane and "epoch 21" not in pane, end


def test_a_completed_planned_run_says_20_of_20() -> None:
    state = _job()
    _twenty_epochs(state, planned=20)
    state.set_state("COMPLETED")
    assert "epoch 20/20 (20 done)" in epoch_lines(state.training, 80).plain


def test_a_crashed_run_in_its_printed_epoch_keeps_it() -> None:
    """Lines of epoch 21 were printed before the crash: epoch 21 was in progress, 20 done."""
    state = _job()
    _twenty_epochs(state)
    state.ingest([metric("loss", 0.04, epoch=21, epoch_base=1, step=5, scope="step", time=1650.0)])
    state.set_state("FAILED")
    assert "epoch 21 (20 done)" in epoch_lines(state.training, 80).plain


def test_a_job_without_gpus_says_no_gpus_seen() -> None:
    state = _job(nodes=["n1"])
    header = header_text(state).plain
    assert "1 node · no GPUs seen" in header and "None" not in header


def test_gpu_counts_come_from_the_gpus_seen() -> None:
    state = _job(nodes=["n1", "n2"], gpus_expected=None)
    state.ingest(
        [
            gpu_sample(host=h, gpu_id=f"{h}-{i}", vendor="nvidia", source="nvml", time=1.0, index=i)
            for h, count in (("n1", 2), ("n2", 1))
            for i in range(count)
        ]
    )
    assert "2 nodes, 3 GPUs" in header_text(state).plain


def _powered(state: DashboardState, watts: float = 300.0, gpus: int = 4) -> None:
    """GPUs at ``watts`` sampled every 10 s over the 20 epochs of :func:`_twenty_epochs` (1030 → 1600 s)."""
    state.ingest(
        [
            gpu_sample(host="n1", gpu_id=f"G{i}", vendor="nvidia", source="nvml", time=t, power_w=watts)
            for t in range(1000, 1601, 10)
            for i in range(gpus)
        ]
    )


def test_energy_on_screen_in_the_header_and_the_training_pane() -> None:
    state = _job(nodes=["n1"])
    _powered(state)
    _twenty_epochs(state)
    header = header_text(state).plain
    assert "0.20 kWh" in header  # 4 × 300 W × 600 s = 720 kJ
    pane = epoch_lines(state.training, 80, state.analysis.energy(last=1)).plain
    assert "energy 0.20 kWh · last epoch 36.0 kJ" in pane  # 4 × 300 W × 30 s


def test_no_power_sampled_shows_no_energy_rather_than_zero() -> None:
    state = _job(nodes=["n1"])
    _twenty_epochs(state)
    assert "kWh" not in header_text(state).plain and " J" not in header_text(state).plain
    assert "energy" not in epoch_lines(state.training, 80, state.analysis.energy(last=1)).plain


def test_no_eta_once_the_run_has_ended() -> None:
    state = _job()
    _twenty_epochs(state, planned=40)
    assert "ETA" in epoch_lines(state.training, 80).plain and "ETA" in header_text(state).plain
    state.ingest([event("outcome", time=1700.0, outcome="crashed", evidence="Segmentation fault")])
    assert "ETA" not in epoch_lines(state.training, 80).plain and "ETA" not in header_text(state).plain


def test_the_demo_end_says_what_to_do_next(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    log = tmp_path / ".local/state/gputui/local/resnet18-ddp-2ranks-1/rank-0.out"
    log.parent.mkdir(parents=True)
    log.write_text("epoch 1 [rank 0]: loss 0.98  accuracy 0.71\n")
    state = DashboardState(JobInfo(kind="local", title="demo", state="RUNNING", simulated=True))
    state.text(str(log), log.read_bytes())
    assert banner_text(state) is None
    state.set_state("COMPLETED")
    banner = banner_text(state)
    assert banner is not None
    assert banner.plain == (
        " demo completed · q quit · R report"
        " · again: gputui replay ~/.local/state/gputui/local/resnet18-ddp-2ranks-1/rank-0.out"
        " · on Slurm: gputui run CMD"
    )
    assert main(["replay", "--headless", str(log)]) == 0  # the command it names works


def test_the_jobs_screen_says_no_gpus_for_a_cpu_job_not_none() -> None:
    """``scontrol -d`` of a CPU job lists its node with an empty GRES: the detail line said ``None GPUs``."""
    cpu = Job("14", name="cpu-job", state="RUNNING", nodes=["n1"], gpus={"n1": []})
    line = detail_line(JobRow("14", ("14",), cpu), None)
    assert str(line).startswith("job 14 · no GPUs") and "None" not in str(line)
    gpu = Job("15", state="RUNNING", nodes=["n1", "n2"], gpus={"n1": [0, 1], "n2": [0, 1]})
    assert "4 GPUs · n1: GPU 0,1  n2: GPU 0,1" in str(detail_line(JobRow("15", ("15",), gpu), None))


async def test_the_dashboard_draws_the_energy_in_the_header_and_training_pane(folder):  # noqa: F811
    """A recorded job with power sampled: its kWh/kJ in the header, the last epoch's in the pane."""
    app = tui_data.make_app(tui_data.one_node(folder))
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            screen = await tui_data.wait_loaded(pilot)
            energy = screen.state.analysis.energy(last=1)
            assert energy.total_j and energy.epochs and energy.epochs[-1].joules
            total, last = joules_text(energy.total_j), joules_text(energy.epochs[-1].joules)
            assert f"  {total}" in _drawn(screen, "#header")
            assert f"energy {total} · last epoch {last}" in _drawn(screen, "#epoch-lines")
    finally:
        app.source.stop()


def test_a_step_run_shows_joules_per_step() -> None:
    """2 GPUs at 250 W, a step every 2 s (emitted times): 1 kJ per step."""
    state = _job(nodes=["n1"])
    _powered(state, watts=250.0, gpus=2)
    state.ingest([metric("loss", 3.0 - s / 100, step=s, time=1000.0 + 2.0 * s) for s in range(1, 250)])
    pane = epoch_lines(state.training, 80, state.analysis.energy(last=1)).plain
    assert "energy 300 kJ · 1.00 kJ/step" in pane and "epoch" not in pane


def test_the_energy_line_fits_a_narrow_training_pane() -> None:
    state = _job(nodes=["n1"])
    _powered(state)
    _twenty_epochs(state)
    pane = epoch_lines(state.training, 32, state.analysis.energy(last=1)).plain
    assert "0.20 kWh · 36.0 kJ/epoch\n" in pane  # 24 characters: whole in an 80-column screen's pane
