"""Teaching a log format from the dashboard (issue 22.5): ``T`` on a replayed log the extractor does not
read (``[120] => 0.5213 @ 310ms``, the log of ``tests/logs/test_taught.py``).

The training pane says how many lines were not read; ``T`` lists them, the user names the chosen line's
numbers, ``enter`` stores the pattern in the settings file (``GPUTUI_CONFIG``) and the replay reads the
log again with it: the loss appears at every step, the unread line goes. ``escape`` changes nothing; a
settings file that cannot be written is one line in the dialog. SVG snapshots of the pane and the dialog
(update with ``pytest tests/tui --snapshot-update`` and look at the SVGs).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import tui_data
from ci_helpers import in_ci
from test_dashboard_snapshots import folder  # noqa: F401 (the fixture)
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Static

from gputui.config import load_config
from gputui.logs.formats import taught
from gputui.tui.screens.dashboard import DashboardScreen
from gputui.tui.screens.teach import TeachScreen, reading
from gputui.tui.widgets.training_text import epoch_lines

sys.path.insert(0, str(Path(__file__).parent.parent / "logs"))
from test_taught import PATTERN, STEPS, _loss, _ms, write_log

UNREAD = "3,000 lines in 1 shape not read: T to teach"
SIZE = (120, 36)


@pytest.fixture(autouse=True)
def no_patterns() -> Iterator[None]:
    """No pattern in effect before or after (the dialog adds to the process's patterns)."""
    taught.TEACHING.configure([])
    yield
    taught.TEACHING.configure([])


@pytest.fixture
def settings(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: F811
    path = folder / "settings" / "config.toml"
    path.parent.mkdir()
    path.write_text("# mine\n[alerts]\nidle_util_pct = 7\n")
    monkeypatch.setenv("GPUTUI_CONFIG", str(path))
    return path


def replayed_log(where: Path) -> list[str]:
    path = write_log(where / "train.log")
    os.utime(path, (tui_data.T0, tui_data.T0))
    return ["train.log"]


async def loaded(pilot: Pilot) -> DashboardScreen:
    """The replay has handed over its state (this log gives no record: wait for the cursor)."""
    screen = tui_data.dashboard(pilot.app)
    await tui_data.wait_for(pilot, lambda: screen.state.cursor is not None, "the replay's cursor")
    await pilot.pause()
    screen.refresh_view(force=True)
    await pilot.pause()
    return screen


def pane_text(screen: DashboardScreen) -> str:
    return str(screen.query_one("#epoch-lines", Static).render())


async def open_and_name(pilot: Pilot, names: list[str]) -> TeachScreen:
    """``T``, enter on the first (only) unread line, the names typed into its number boxes."""
    await pilot.press("T")
    await tui_data.wait_for(pilot, lambda: isinstance(pilot.app.screen, TeachScreen), "the dialog")
    dialog = pilot.app.screen
    assert isinstance(dialog, TeachScreen)
    assert dialog.query_one(OptionList).option_count == 1
    await pilot.press("enter")
    await tui_data.wait_for(pilot, lambda: len(dialog.query("#teach-names Input")) == 3, "the name boxes")
    for box, name in zip(dialog.query("#teach-names Input").results(Input), names, strict=True):
        box.value = name
    await pilot.pause()
    return dialog


def dialog_line(dialog: TeachScreen, which: str) -> str:
    return str(dialog.query_one(f"#teach-{which}", Static).render())


async def test_the_pane_counts_what_was_not_read_and_t_teaches_it(folder: Path, settings: Path) -> None:  # noqa: F811
    before = settings.read_text()
    app = tui_data.make_app(replayed_log(folder))
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = await loaded(pilot)
            assert screen.state.training.metrics == {}
            assert pane_text(screen).splitlines()[0] == UNREAD
            dialog = await open_and_name(pilot, ["step", "loss", "step_time_ms"])
            assert dialog_line(dialog, "pattern") == f"pattern  {PATTERN}"
            assert dialog_line(dialog, "reads") == "reads    step 1  loss 4.996  step_time_s 0.31"
            assert dialog_line(dialog, "error") == ""
            await pilot.press("enter")
            await tui_data.wait_for(pilot, lambda: pilot.app.screen is screen, "the dialog to close")
            await tui_data.wait_for(
                pilot, lambda: "loss" in screen.state.training.metrics, "the log read again", timeout=30
            )
            await loaded(pilot)
            training = screen.state.training
            assert screen.state.records == 2 * STEPS + 1  # a loss and a step time per step; "done": the end
            steps = training.step_summary()
            assert steps is not None and (steps.first_step, steps.done, steps.loss_last) == (
                1,
                STEPS,
                _loss(STEPS),
            )
            loss = training.metrics["loss"].by_step  # bounded: every point it keeps is the log's
            assert (loss.times[0], loss.times[-1]) == (1, STEPS)
            assert loss.values == [_loss(int(step)) for step in loss.times]
            step_time = training.metrics["step_time_s"].by_step
            assert step_time.values == pytest.approx([_ms(int(step)) / 1000 for step in step_time.times])
            assert training.unread == {}
            assert "not read" not in pane_text(screen)
            assert screen.metric == "loss"
            where = str(folder)
            (stored,) = load_config().patterns
            assert (stored.pattern, stored.where) == (PATTERN, where)
            assert settings.read_text().startswith(before)
            assert "saved in" in screen.state.status.message
    finally:
        app.source.stop()


async def test_escape_changes_nothing(folder: Path, settings: Path) -> None:  # noqa: F811
    before = settings.read_text()
    app = tui_data.make_app(replayed_log(folder))
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = await loaded(pilot)
            await open_and_name(pilot, ["step", "loss", ""])
            await pilot.press("escape")
            await tui_data.wait_for(pilot, lambda: pilot.app.screen is screen, "the dialog to close")
            await pilot.pause(0.6)  # a reload would have started by now (the replay wakes twice a second)
            assert settings.read_text() == before
            assert taught.TEACHING.taught == []
            assert screen.state.training.metrics == {}
            assert pane_text(screen).splitlines()[0] == UNREAD
    finally:
        app.source.stop()


@pytest.fixture
def unwritable(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:  # noqa: F811
    """A settings file in a folder that refuses writes: a read-only tmpfs for root (mounting needs it;
    skipped without, except in CI), a folder without write permission for anyone else."""
    where = folder / "ro"
    where.mkdir()
    monkeypatch.setenv("GPUTUI_CONFIG", str(where / "config.toml"))
    if os.geteuid() != 0:
        where.chmod(0o555)
        yield where / "config.toml"
        where.chmod(0o755)
        return
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(where)], capture_output=True, text=True
    )
    if done.returncode:
        why = f"cannot mount a read-only tmpfs: {done.stderr.strip()}"
        pytest.fail(why) if in_ci() else pytest.skip(why)
    try:
        yield where / "config.toml"
    finally:
        subprocess.run(["umount", str(where)], check=True, timeout=30)


async def test_a_settings_file_that_cannot_be_written_is_one_line(folder: Path, unwritable: Path) -> None:  # noqa: F811
    app = tui_data.make_app(replayed_log(folder))
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = await loaded(pilot)
            dialog = await open_and_name(pilot, ["step", "loss", ""])
            await pilot.press("enter")
            await pilot.pause()
            error = dialog_line(dialog, "error")
            assert error.startswith(f"{unwritable}: cannot write: ") and "\n" not in error
            assert pilot.app.screen is dialog and taught.TEACHING.taught == []
            assert not unwritable.exists()
            await pilot.press("escape")
            assert pilot.app.screen is screen and screen.state.training.metrics == {}
    finally:
        app.source.stop()


async def test_a_name_that_cannot_be_used_is_one_line_and_nothing_is_stored(
    folder: Path,  # noqa: F811
    settings: Path,
) -> None:
    before = settings.read_text()
    app = tui_data.make_app(replayed_log(folder))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await loaded(pilot)
            dialog = await open_and_name(pilot, ["step", "my loss", ""])
            assert (
                dialog_line(dialog, "error") == "placeholder {my loss} is not a name such as {loss} or {step}"
            )
            await pilot.press("enter")
            await pilot.pause()
            assert pilot.app.screen is dialog and settings.read_text() == before
    finally:
        app.source.stop()


def test_reading_names_the_numbers_by_the_naming_rule() -> None:
    line = "[rank0]: 2025-01-02 10:00:00 INFO iter 7 | l=0.25 | dt 12.5ms"
    assert reading(line, ["step", "loss", "dt_ms"]) == (
        "iter {step} | l={loss} | dt {dt_ms}ms",
        "step 7  loss 0.25  dt_s 0.0125",
    )
    with pytest.raises(ValueError, match="at least one"):
        reading(line, ["step", "", ""])


def test_pane_snapshot(snap_compare, folder: Path, settings: Path) -> None:  # noqa: F811
    app = tui_data.make_app(replayed_log(folder))
    try:
        assert snap_compare(app, terminal_size=SIZE, run_before=loaded)
    finally:
        app.source.stop()


def test_dialog_snapshot(snap_compare, folder: Path, settings: Path) -> None:  # noqa: F811
    app = tui_data.make_app(replayed_log(folder))

    async def named(pilot: Pilot) -> None:
        await loaded(pilot)
        await open_and_name(pilot, ["step", "loss", "step_time_ms"])

    try:
        assert snap_compare(app, terminal_size=SIZE, run_before=named)
    finally:
        app.source.stop()


def test_the_pane_line_counts_every_log() -> None:
    from gputui.monitor.training import TrainingState

    training = TrainingState()
    training.note_unread("a.log", 1, 1, ((1, "x 1 y 0.5"),))
    assert epoch_lines(training, 60).plain.splitlines()[0] == "1 line in 1 shape not read: T to teach"
    training.note_unread("b.log", 2_000, 2)
    assert epoch_lines(training, 60).plain.splitlines()[0] == "2,001 lines in 3 shapes not read: T to teach"
    training.note_unread("a.log", 0, 0)
    assert list(training.unread) == ["b.log"]
