"""What a person sees of a log whose text could be lost (issue 21 part 6), on ``gputui replay``'s dashboard:
a log over 4 MiB ending in a huge unfinished progress bar shows the bar's latest frame, the lines before it
and the epoch those lines print (an SVG snapshot too); a followed log that is deleted is said in the log
pane and the banner, and what is still written to it is shown; one that is replaced is said and read anew."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import tui_data
from textual.pilot import Pilot
from textual.widgets import Static

from gputui.logs.catchup import TAIL_BYTES
from gputui.logs.follower import DEFAULT_MAX_BYTES
from gputui.tui.widgets.log_pane import LogPane

SIZE = (120, 36)
LAST_TRAIN_LINE = "Train Epoch: 7 [1920/60000 (3%)]\tLoss: 0.030000"


def frame(n: int) -> str:
    return f" 40%|####      | {n}/99999 [01:{n % 60:02d}<02:00, 9.9it/s]"


def long_bar_log(folder: Path) -> list[str]:
    """``train.log``: 4+ MiB of lines, three ``Train Epoch: 7`` lines, then a bar redrawn with ``\\r`` for
    longer than the tail the log pane is given first, never ended by a newline. Its mtime is fixed."""
    head = "".join(f"worker {i}: data shard {i % 97} loaded\n" for i in range(150_000))
    head += "".join(f"Train Epoch: 7 [{640 * i}/60000 ({i}%)]\tLoss: 0.0{i}0000\n" for i in range(1, 4))
    bar = "".join("\r" + frame(n) for n in range(8000))
    assert len(head) + len(bar) > DEFAULT_MAX_BYTES and len(bar) > TAIL_BYTES
    path = folder / "train.log"
    path.write_text(head + bar, encoding="utf-8")
    os.utime(path, (tui_data.T0 + 100.0, tui_data.T0 + 100.0))
    return ["train.log"]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The scenario's folder as the working directory, local time = UTC (the banner shows a time)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield tmp_path
    monkeypatch.undo()
    time.tzset()


def pane_lines(pilot: Pilot) -> list[str]:
    return str(tui_data.dashboard(pilot.app).query_one(LogPane).render()).splitlines()


def header(pilot: Pilot) -> str:
    return str(tui_data.dashboard(pilot.app).query_one("#header", Static).render())


async def test_a_huge_unfinished_bar_shows_its_latest_frame_the_lines_before_and_their_epoch(folder):
    app = tui_data.make_app(long_bar_log(folder))
    async with app.run_test(size=SIZE) as pilot:
        await tui_data.wait_loaded(pilot)
        lines = pane_lines(pilot)
        assert lines[-1] == frame(7999)
        assert lines[-2] == LAST_TRAIN_LINE
        assert lines[-5] == "worker 149999: data shard 37 loaded"
        assert "  epoch 7" in header(pilot)


def test_a_huge_unfinished_bar_snapshot(snap_compare, folder):
    app = tui_data.make_app(long_bar_log(folder))
    try:
        assert snap_compare(app, terminal_size=SIZE, run_before=tui_data.wait_loaded)
    finally:
        app.source.stop()


async def test_a_deleted_log_is_said_and_what_is_still_written_to_it_is_shown(folder):
    path = folder / "train.log"
    with open(path, "wb", buffering=0) as job:  # the job's stdout: open while its file is deleted
        job.write(b"Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.300000\n")
        app = tui_data.make_app(["train.log"])
        async with app.run_test(size=SIZE) as pilot:
            await tui_data.wait_loaded(pilot)
            path.unlink()
            job.write(b"Train Epoch: 2 [0/60000 (0%)]\tLoss: 1.100000\n")
            notice = "── train.log was deleted: showing what is still written to it ──"
            await tui_data.wait_for(pilot, lambda: notice in pane_lines(pilot), "the deletion notice")
            await tui_data.wait_for(
                pilot, lambda: pane_lines(pilot)[-1].startswith("Train Epoch: 2"), "the line written after it"
            )
            tui_data.dashboard(app).refresh_view(force=True)
            await pilot.pause()
            banner = str(tui_data.dashboard(app).query_one("#banner", Static).render())
            assert "train.log was deleted: showing what is still written to it" in banner


async def test_a_replaced_log_is_said_in_the_log_pane_and_read_anew(folder):
    path = folder / "train.log"
    path.write_bytes(b"Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.300000\n")
    app = tui_data.make_app(["train.log"])
    async with app.run_test(size=SIZE) as pilot:
        await tui_data.wait_loaded(pilot)
        (folder / "train.log.new").write_bytes(b"Train Epoch: 1 [0/60000 (0%)]\tLoss: 9.900000\n")
        os.replace(folder / "train.log.new", path)  # an editor's save, a job writing a fresh file
        notice = "── train.log rotated: reading it again from the start ──"
        await tui_data.wait_for(pilot, lambda: notice in pane_lines(pilot), "the replacement notice")
        assert pane_lines(pilot)[-2:] == [notice, "Train Epoch: 1 [0/60000 (0%)]\tLoss: 9.900000"]
