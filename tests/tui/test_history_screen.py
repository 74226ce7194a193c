"""``h`` on the jobs screen: my GPU-hours (issue 23.4), through the fake Slurm commands.

The jobs screen's poller runs on ``home_data.FakeSlurm`` (as in the other home tests); the history
screen's one ``sacct`` call runs the fake ``sacct`` on PATH (``tests/slurm/fake_slurm.py``), which answers
with the 26.05-shaped rows of ``tests/slurm/test_history.py``: job 54 (2 GPUs, 1 h, its use from
gputui's record files written here), job 55 (4 GPUs, 30 min, FAILED, ``gres/gpuutil`` from sacct), job 56
(no GPU: left out)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import home_data
import pytest
from home_data import FakeSlurm
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

sys.path.insert(0, str(Path(__file__).parent.parent / "slurm"))
from fake_slurm import FakeSlurm as FakeSlurmCommands
from fake_slurm import response
from test_history import SACCT

from gputui.stream.io import encode_record
from gputui.stream.records import Record
from gputui.tui.screens.history import HistoryScreen
from gputui.tui.screens.jobs import JobsScreen

DB_DOWN = "sacct: error: Problem talking to the database: Connection refused"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from home_data.environment(tmp_path, monkeypatch)


@pytest.fixture
def sacct(folder: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSlurmCommands:
    """The fake sacct answering with the three jobs; job 54 has gputui records in its work directory."""
    for node, utils in (("node1", [0, 0, 90, 90]), ("node2", [100, 100, 2, 100])):
        lines = [encode_record(Record("gpu", 1.0 + i, {"host": node, "gpu_id": "0", "util_gpu_pct": u}))
                 for i, u in enumerate(utils)]  # fmt: skip
        (folder / f"gputui-54-{node}.jsonl").write_bytes(b"".join(lines))
    commands = FakeSlurmCommands(folder, monkeypatch)
    commands.set("sacct", response(SACCT.replace("/w", str(folder))))
    return commands


def app():
    return home_data.make_app(FakeSlurm(home_data.SAMPLE_SQUEUE, sacct=home_data.SAMPLE_SACCT))


async def open_history(pilot: Pilot) -> HistoryScreen:
    await home_data.wait_polled(pilot)
    await pilot.press("h")
    await home_data.wait_for(pilot, lambda: isinstance(pilot.app.screen, HistoryScreen), "the history screen")
    screen = pilot.app.screen
    await home_data.wait_for(pilot, lambda: not screen.loading, "sacct's answer")
    table = screen.query_one(DataTable)  # its column widths are measured on idle after the rows came:
    # a picture taken before that showed the columns cut (CI once did)
    await home_data.wait_for(pilot, lambda: not table._require_update_dimensions, "the columns measured")
    await pilot.pause()
    return screen


def cells(screen: HistoryScreen) -> list[list[str]]:
    table = screen.query_one(DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def totals(screen: HistoryScreen) -> str:
    return str(screen.query_one("#history-totals", Static).render())


async def test_h_lists_my_gpu_hours_and_p_changes_the_period(folder, sacct) -> None:
    async with app().run_test(size=(130, 30)) as pilot:
        screen = await open_history(pilot)
        rows = cells(screen)
        assert [r[0] for r in rows] == ["54", "55"]  # 56 held no GPU
        assert rows[0][2:] == ["COMPLETED", "2", "01:00:00", "2.00", "60%", "0.75", "gputui records"]
        assert rows[1][2:] == ["FAILED (exit 1:0)", "4", "00:30:00", "2.00", "60%", "unknown", "sacct"]
        assert totals(screen).startswith("2 jobs, 4.00 GPU-hours, 0.75 of them idle where known")
        (argv,) = sacct.calls("sacct")
        assert argv[argv.index("-S") + 1] == "now-7days" and f"--user={home_data.USER}" in argv
        await pilot.press("p")
        await home_data.wait_for(pilot, lambda: len(sacct.calls("sacct")) == 2 and not screen.loading)
        assert sacct.calls("sacct")[-1][argv.index("-S") + 1] == "now-30days"
        assert "last 30 days" in str(screen.query_one("#history-header", Static).render())
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, JobsScreen)


async def test_a_failing_or_absent_sacct_is_one_line_and_the_app_goes_on(folder, sacct, monkeypatch) -> None:
    sacct.set("sacct", response(stderr=DB_DOWN + "\n", exit=1))
    async with app().run_test(size=(130, 30)) as pilot:
        screen = await open_history(pilot)
        assert cells(screen) == [] and totals(screen).endswith(f"{DB_DOWN} — r: try again")
        assert "\n" not in totals(screen)
        monkeypatch.setenv("PATH", str(folder / "no-slurm-here"))  # no sacct at all
        await pilot.press("r")
        await home_data.wait_for(pilot, lambda: "not found" in totals(screen), "the one line")
        assert totals(screen).count("\n") == 0 and "'sacct'" in totals(screen)
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, JobsScreen) and pilot.app.is_running


def test_history_screen_snapshot(snap_compare, folder, sacct) -> None:
    assert snap_compare(app(), terminal_size=(120, 24), run_before=open_history)
