"""Escape sequences in a job name or a log never reach the terminal (issue 21 part 3): the jobs screen of a
job whose name sets the terminal's title and colours, and a replayed log (and file name) full of them,
draw no ESC, BEL or C1 control; the name is shown stripped of its sequences, the log keeps its colours as
styles, and markup-looking text stays text."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import home_data
import pytest
import tui_data
from textual.widgets import Static

from gputui.tui.widgets.jobs_table import JobsTable
from gputui.tui.widgets.log_pane import LogPane

EVIL_NAME = "evil\x1b]0;PWNED\x07\x1b[2J\x1bc\x1b[31mred\u202e"
SHOWN_NAME = "evilred\\u202e"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")
SIZE = (120, 36)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from home_data.environment(tmp_path, monkeypatch)


def _no_raw(text: str) -> None:
    assert not [c for c in RAW if c in text], repr(text[:400])


async def test_an_escape_laden_job_name_is_shown_stripped_in_the_jobs_screen(folder) -> None:
    squeue = home_data.lines(home_data.squeue_line(77, name=EVIL_NAME, nodelist="gpu01"))
    app = home_data.make_app(home_data.FakeSlurm(squeue), refresh_s=3600)
    async with app.run_test(size=SIZE) as pilot:
        screen = await home_data.wait_polled(pilot)
        table = screen.query_one(JobsTable)
        assert table.get_cell("77", "NAME") == SHOWN_NAME
        drawn = "".join(seg.text for y in range(table.size.height) for seg in table.render_line(y))
        assert SHOWN_NAME in drawn
        _no_raw(drawn)
        _no_raw(app.export_screenshot())


def escape_log(folder: Path) -> list[str]:
    """A log named with an escape, whose lines set the title, clear the screen, reset the terminal, print a
    C1 CSI and markup, with one coloured line and a traceback ending the run (the outcome's evidence)."""
    lines = [
        "Epoch 1/2",
        "100/100 - 11s - loss: 0.9000 - accuracy: 0.6000 - 11s/epoch - 110ms/step",
        "\x1b]0;PWNED\x07\x1b[2Jcleared \x1bcreset \x9b2Jc1 [/] [bold]markup",
        "\x1b[32mgreen ok\x1b[0m",
        "Traceback (most recent call last):",
        '  File "train.py", line 1, in <module>',
        "RuntimeError: CUDA out of memory \x1b]0;TITLE\x07 [/]",
    ]
    name = "run\x1b]0;T\x07.log"
    path = folder / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.utime(path, (tui_data.T0 + 100.0, tui_data.T0 + 100.0))
    return [name]


async def test_a_replayed_log_full_of_escapes_draws_none(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = tui_data.make_app(escape_log(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await tui_data.wait_loaded(pilot)
        pane = screen.query_one(LogPane)
        rendered = pane.render()
        _no_raw(rendered.plain)
        assert "cleared reset c1 [/] [bold]markup" in rendered.plain
        green = next(span for span in rendered.spans if "color(2)" in str(span.style))
        assert rendered.plain[green.start : green.end] == "green ok"  # colours stay, as styles
        header = str(screen.query_one("#header", Static).render())
        _no_raw(header + pane.border_title)
        _no_raw(app.export_screenshot())


async def test_an_escape_laden_output_path_and_a_markup_name_are_text_in_detail_and_confirm(folder) -> None:
    """The detail pane shows the job's output path (which may hold its name) printable; the cancel question
    shows a name like ``[/]oops`` as written instead of failing on it as markup."""
    evil_dir = "/home/root/run\x1b]0;PWNED\x07"
    squeue = home_data.lines(home_data.squeue_line(78, name="[/]oops[b]", work_dir=evil_dir, nodelist="g1"))
    app = home_data.make_app(home_data.FakeSlurm(squeue), refresh_s=3600)
    async with app.run_test(size=SIZE) as pilot:
        screen = await home_data.wait_polled(pilot)
        detail = str(screen.query_one("#job-detail", Static).render())
        _no_raw(detail)
        assert "out /home/root/run\\x1b]0;PWNED\\x07/slurm-78.out" not in detail  # the sequence is gone
        assert "/home/root/run" in detail and "slurm-78.out" in detail
        await pilot.press("c")
        await pilot.pause()
        question = str(app.screen.query_one(".dialog-text", Static).render())
        assert "Cancel job 78 ([/]oops[b], RUNNING)?" in question
        _no_raw(app.export_screenshot())
