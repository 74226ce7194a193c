"""The dashboard replaying a step-based log (nanoGPT style: steps to 12,000 of 19,073, no epochs): the
header and the training pane show the steps, the ETA, the loss and its trend, and no ``epoch 1``; the
header says whether the ETA ends before the job's time limit. Pilot checks and an SVG snapshot (update
with ``pytest tests/tui --snapshot-update`` and look at the SVG)."""

from __future__ import annotations

import os
from pathlib import Path

import step_logs
import tui_data
from test_dashboard_snapshots import folder, snap  # noqa: F401 (the fixture)

from gputui.tui.widgets.header import header_text
from gputui.tui.widgets.training_text import epoch_lines


def nanogpt_log(where: Path) -> list[str]:
    """The nanoGPT log of :func:`step_logs.nanogpt` with a fixed mtime (the replay's timeline ends there)."""
    path = step_logs.nanogpt(where / "nano.log")
    os.utime(path, (tui_data.T0, tui_data.T0))
    return ["nano.log"]


def test_step_run_snapshot(snap_compare, folder):  # noqa: F811
    assert snap(snap_compare, folder, nanogpt_log)


async def test_header_and_pane_say_steps_eta_and_trend(folder):  # noqa: F811
    app = tui_data.make_app(nanogpt_log(folder))
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            screen = await tui_data.wait_loaded(pilot)
            state = screen.state
            header = header_text(state).plain
            pane = epoch_lines(state.training, 60).plain
            assert "step 12,000/19,073 (62 %)" in header and "ETA 00:36:50" in header
            assert "epoch" not in header and "epoch" not in pane
            assert pane.splitlines()[0].startswith("step 12,000/19,073 (62 %)  ETA 00:36:50")
            assert "loss 11 → 3  falling ↓ -0.8 per 1,200 steps" in pane
            assert "312.5 ms/step  512.0k tok/s  MFU 38.2 %" in pane
            # an attached job's time limit: 30 minutes left, 36m 50s to go → the limit ends first
            state.job.started, state.job.time_limit_s = state.now() - 3600, 3600 + 1800
            assert "ETA 00:36:50 > time limit ⚠" in header_text(state).plain
            state.job.time_limit_s = 3600 + 7200
            assert "ETA 00:36:50 < time limit" in header_text(state).plain
    finally:
        app.source.stop()
