"""SVG snapshots of the dashboard on replayed record files (pytest-textual-snapshot).

Each scenario's files come from ``tui_data`` (fixed times, fixed values) and are replayed with the
dashboard's own ReplaySource, so the state's clock is the replay cursor, not the wall clock. Before a
snapshot the test waits until the replay has handed over its state and forces a full redraw (the charts
otherwise redraw at most once a second). Times on screen are shown in UTC, paths relative to the
scenario's folder. Update with ``pytest tests/tui --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import tui_data
from textual.pilot import Pilot

WIDE = (120, 36)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The scenario's folder as the working directory, local time = UTC (the banner shows a time)."""
    monkeypatch.chdir(tmp_path)
    old_tz = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    try:
        yield tmp_path
    finally:
        if old_tz is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old_tz
        time.tzset()


def snap(
    snap_compare,
    folder: Path,
    build: Callable[[Path], list[str]],
    size: tuple[int, int] = WIDE,
    then: Callable[[Pilot], object] | None = None,
) -> bool:
    app = tui_data.make_app(build(folder))

    async def run_before(pilot: Pilot) -> None:
        await tui_data.wait_loaded(pilot)
        if then is not None:
            await then(pilot)
            await tui_data.wait_loaded(pilot)

    try:
        return snap_compare(app, terminal_size=size, run_before=run_before)
    finally:
        app.source.stop()


def test_one_node_two_gpus(snap_compare, folder):
    """1 node × 2 GPUs, loss falling over 3 of 10 epochs: no SIMULATED label, no banner."""
    assert snap(snap_compare, folder, tui_data.one_node)


def test_one_node_small_terminal(snap_compare, folder):
    """The same job in an 80 × 24 terminal."""
    assert snap(snap_compare, folder, tui_data.one_node, size=(80, 24))


def test_two_nodes_four_gpus(snap_compare, folder):
    assert snap(snap_compare, folder, tui_data.two_nodes)


def test_64_nodes_roll_up(snap_compare, folder):
    """64 nodes × 8 GPUs in 200 × 60: one '▸' roll-up row per node, gpu017 a straggler."""
    assert snap(snap_compare, folder, tui_data.big_job, size=(200, 60))


def test_amd_mi250x_gcd_pairs(snap_compare, folder):
    """8 MI250X GCDs: ┐/┘ pair markers, package power (ᵖ) on one GCD, 'pkg' on the other."""
    assert snap(snap_compare, folder, tui_data.amd_mi250x)


def test_lost_node(snap_compare, folder):
    """node02 lost: LOST rows, nodes 1/2 in red, the node_lost banner."""
    assert snap(snap_compare, folder, tui_data.lost_node)


def test_nan_loss(snap_compare, folder):
    """Loss NaN from step 45: the error banner with its time and step."""
    assert snap(snap_compare, folder, tui_data.nan_loss)


def test_idle_gpu_in_busy_job(snap_compare, folder):
    """GPU 2 at 0 % for 3.5 min while the others are busy: 'idle 4m ⚠' and the gpu_idle banner."""
    assert snap(snap_compare, folder, tui_data.idle_gpu)


def test_simulated_gpus(snap_compare, folder):
    """Simulated GPUs: SIMULATED in the header and the GPU pane."""
    assert snap(snap_compare, folder, tui_data.simulated)


def test_missing_file_error(snap_compare, folder):
    """A file that does not exist: a one-line error banner, the empty dashboard still up."""
    assert snap(snap_compare, folder, tui_data.missing)


def test_replay_cursor_moved_back(snap_compare, folder):
    """Five steps back from the end (each a fiftieth of the run): the header's cursor says 02:44."""

    async def back(pilot: Pilot) -> None:
        source = pilot.app.source
        end = source.at
        await pilot.press("left", "left", "left", "left", "left")
        target = end - 5 * source.step_s()
        screen = tui_data.dashboard(pilot.app)
        await tui_data.wait_for(
            pilot,
            lambda: abs(source.at - target) < 1e-6 and screen.state.clock == source.at,
            "the cursor to move back",
        )

    assert snap(snap_compare, folder, tui_data.one_node, then=back)


def test_log_search_highlight(snap_compare, folder):
    """A plain training log; '/accuracy: 0.7' highlights the match and pauses following."""

    async def search(pilot: Pilot) -> None:
        await pilot.press("slash", *"accuracy: 0.7", "enter")

    assert snap(snap_compare, folder, tui_data.training_log, then=search)


def test_reading_history_of_a_large_log(snap_compare, folder):
    """A large log shown tail first: 'reading history 34 %' in the header while the rest is read."""

    async def catching_up(pilot: Pilot) -> None:
        screen = tui_data.dashboard(pilot.app)
        screen.state.catch_up = (340 << 20, 1000 << 20)
        screen.state.version += 1

    assert snap(snap_compare, folder, tui_data.one_node, then=catching_up)


def test_report_view(snap_compare, folder):
    """R: the run's report over the dashboard (GPUs, per-GPU utilisation, epochs), as `gputui report`."""

    async def report(pilot: Pilot) -> None:
        await pilot.press("R")

    assert snap(snap_compare, folder, tui_data.one_node, then=report)
