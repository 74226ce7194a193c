"""The jobs screen served to a browser (``gputui serve``, GPUTUI_SERVED=1): what needs a terminal (the
``o`` shell inside a job, the ``e`` editor) says so in one line and runs nothing, instead of suspending
an app that has no terminal to give back. Driven with Textual's pilot on the fake Slurm of home_data."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import home_data
import pytest
from rich.text import Text
from textual.widgets import Static

import gputui.tui.screens.jobs
from gputui.serve.mode import SERVED_ENV
from gputui.tui.screens.jobs import JobsScreen
from gputui.tui.widgets.jobs_table import JobsTable


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from home_data.environment(tmp_path, monkeypatch)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """What the jobs screen hands to subprocess.call (the shell's srun, the editor)."""
    made: list[list[str]] = []

    def call(argv, **_kwargs) -> int:
        made.append(list(argv))
        return 0

    monkeypatch.setattr(gputui.tui.screens.jobs.subprocess, "call", call)
    return made


def status(app) -> str:
    widget = home_data.jobs_screen(app).query_one("#status", Static)
    content = widget.content
    return content.plain if isinstance(content, Text) else str(content)


@pytest.mark.parametrize(("key", "what"), [("o", "a shell inside the job (o)"), ("e", "the editor (e)")])
async def test_keys_needing_a_terminal_say_so_when_served(folder, calls, monkeypatch, key, what) -> None:
    monkeypatch.setenv(SERVED_ENV, "1")
    fake = home_data.FakeSlurm(home_data.SAMPLE_SQUEUE, sacct=home_data.SAMPLE_SACCT)
    app = home_data.make_app(fake, refresh_s=3600.0)
    async with app.run_test(size=(120, 36)) as pilot:
        await home_data.wait_polled(pilot)
        table = home_data.jobs_screen(app).query_one(JobsTable)
        table.move_cursor(row=[r.key for r in table.rows_shown].index("24"), animate=False)
        before = len(fake.calls)
        await pilot.press(key)
        await pilot.pause(0.3)
        assert isinstance(app.screen, JobsScreen)  # no node chooser, no dialog: nothing started
        assert (
            status(app)
            == f"{what} needs a terminal: not available in the browser (run gputui in a terminal for it)"
        )
        assert fake.calls[before:] == []  # not even the batch script was asked for
    assert calls == []
