"""The one-line widgets of the jobs screen: its header, the selected job's detail and the status bar.

Each draws one of the pure text functions of :mod:`gputui.tui.widgets.jobs_text` and repaints only when
its text changed (each repaint costs CPU at idle), as the dashboard's header does."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from gputui.home.poller import JobsSnapshot
from gputui.home.rows import JobRow
from gputui.tui.widgets.jobs_text import detail_line, header_line, status_lines


class _Line(Static):
    """A Static that keeps what it shows and skips an update that would change nothing."""

    _shown: Text | str | None = None

    def draw(self, content: Text | str) -> None:
        if self._shown != content:
            self._shown = content
            self.update(content)


class JobsHeader(_Line):
    """``gputui  filter: x  cluster C · Slurm V · my jobs: 2 running, 1 ended · 09:12 every 10 s``."""

    def show(self, snap: JobsSnapshot | None, filter_text: str, refresh_s: float) -> None:
        self.draw(header_line(snap, filter_text, refresh_s))


class JobDetail(_Line):
    """The selected job's id, GPUs by node, output file and exit code."""

    def show(self, row: JobRow | None, snap: JobsSnapshot | None) -> None:
        self.draw(detail_line(row, snap))


class JobsStatus(_Line):
    """The most urgent of the last action's line and what the poll says; hidden when there is neither."""

    def show(self, status: tuple[str, str] | None, snap: JobsSnapshot | None, ended_hours: float) -> None:
        lines = status_lines(status, snap, ended_hours)
        self.draw(lines[0] if lines else "")
        self.display = bool(lines)
