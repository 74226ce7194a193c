"""The jobs screen runs the hold and release entries of the job-action table (``H``, ``U``) through its
one action worker: hold asks first and only a pending job qualifies; release needs a held job and asks
nothing. Recorders stand in for :mod:`gputui.slurm.job_actions` (the table looks its functions up when
called); the squeue answers are home_data's fake runner."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import home_data
import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Static

import gputui.slurm.job_actions
from gputui.slurm.job_actions import ActionResult
from gputui.tui.screens.dialogs import ConfirmScreen
from gputui.tui.screens.jobs import JobsScreen
from gputui.tui.widgets.jobs_table import JobsTable

SQUEUE = home_data.lines(
    home_data.squeue_line(24, name="python3", nodes=1, nodelist="node1", used="5:00"),
    home_data.squeue_line(31, name="bert-large", state="PENDING", reason="Resources"),
    home_data.squeue_line(32, name="held-run", state="PENDING", reason="JobHeldUser"),
)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from home_data.environment(tmp_path, monkeypatch)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    made: list[tuple[str, str]] = []

    def recorder(verb: str, done: str):
        def run(job_id: str, **_: object) -> ActionResult:
            made.append((verb, job_id))
            return ActionResult(job_id, done, "PENDING", True, f"{done} job {job_id}")

        return run

    monkeypatch.setattr(gputui.slurm.job_actions, "hold_job", recorder("hold", "held"))
    monkeypatch.setattr(gputui.slurm.job_actions, "release_job", recorder("release", "released"))
    return made


def status(pilot: Pilot) -> str:
    widget = home_data.jobs_screen(pilot.app).query_one("#status", Static)
    content = widget.content
    return (content.plain if isinstance(content, Text) else str(content)) if widget.display else ""


async def to_row(pilot: Pilot, key: str) -> None:
    table = home_data.jobs_screen(pilot.app).query_one(JobsTable)
    table.move_cursor(row=[r.key for r in table.rows_shown].index(key), animate=False)
    await pilot.pause()


def app():
    return home_data.make_app(home_data.FakeSlurm(SQUEUE), refresh_s=3600.0)


async def test_hold_asks_then_holds_the_pending_job(folder, calls):
    the_app = app()
    async with the_app.run_test(size=(120, 36)) as pilot:
        await home_data.wait_polled(pilot)
        await to_row(pilot, "31")
        await pilot.press("H")
        assert isinstance(the_app.screen, ConfirmScreen)
        question = the_app.screen.query_one(".dialog-text", Static).content
        assert str(question) == "Hold job 31 (bert-large)? It will not start until released (U)."
        await pilot.press("y")
        await home_data.wait_for(pilot, lambda: calls, "hold_job")
        await home_data.wait_for(pilot, lambda: status(pilot) == "held job 31", "the status line")
        assert calls == [("hold", "31")]


async def test_hold_refuses_a_running_job_and_release_a_job_not_held(folder, calls):
    the_app = app()
    async with the_app.run_test(size=(120, 36)) as pilot:
        await home_data.wait_polled(pilot)
        await to_row(pilot, "24")
        await pilot.press("H")
        assert isinstance(the_app.screen, JobsScreen)
        assert status(pilot) == "job 24 is RUNNING: only a pending job can be held"
        await to_row(pilot, "31")
        await pilot.press("U")
        assert status(pilot) == "job 31 is not held: nothing to release"
        await pilot.pause(0.2)
        assert calls == []


async def test_release_runs_at_once_on_a_held_job(folder, calls):
    the_app = app()
    async with the_app.run_test(size=(120, 36)) as pilot:
        await home_data.wait_polled(pilot)
        await to_row(pilot, "32")
        await pilot.press("U")
        await home_data.wait_for(pilot, lambda: calls, "release_job")
        assert calls == [("release", "32")]
        await home_data.wait_for(pilot, lambda: status(pilot) == "released job 32", "the status line")
