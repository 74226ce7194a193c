"""``--low-bandwidth`` (issue 25 part 5) sets ``[dashboard] low_bandwidth`` for the dashboard a command
opens, given after the command or before it (the jobs screen and the dashboards it opens)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gputui import cli
from gputui.tui.app import GputuiApp


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The ``low_bandwidth`` setting of each app the command would run (not run: no terminal here)."""
    seen: list[bool] = []
    monkeypatch.setattr("gputui.commands.dashboard.has_screen", lambda: True)
    monkeypatch.setattr("gputui.commands.home.has_screen", lambda: True)

    def run(app: GputuiApp) -> None:
        seen.append(app.config.dashboard.low_bandwidth)

    monkeypatch.setattr(GputuiApp, "run_until_ended", run)
    monkeypatch.setenv("GPUTUI_CONFIG", "/nonexistent/gputui.toml")
    return seen


@pytest.mark.parametrize(
    ("argv", "low"),
    [
        (["replay", "--low-bandwidth", "{file}"], True),
        (["--low-bandwidth", "replay", "{file}"], True),
        (["replay", "{file}"], False),
        (["--low-bandwidth"], True),
        ([], False),
    ],
)
def test_low_bandwidth_reaches_the_dashboard_settings(opened, tmp_path: Path, argv, low):
    records = tmp_path / "run.jsonl"
    records.write_text("")
    assert cli.main([a.format(file=records) for a in argv]) == 0
    assert opened == [low]
