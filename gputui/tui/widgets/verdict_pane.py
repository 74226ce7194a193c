"""The verdict pane: why the job is slow or stuck, one line per finding, worst first.

It judges nothing: :meth:`gputui.monitor.state.DashboardState.verdict` (the verdict engine) finds, this
pane shows — each finding's level as a style (:data:`LEVEL_STYLE`), each line cut with an ellipsis at
the pane's width (names from the records through :func:`gputui.textsafe.printable`), and
:data:`~gputui.monitor.verdicts.HEALTHY` when there is nothing to say. It repaints only when the lines
changed. :func:`verdict_section` is the same findings in full, for the report and alerts screens.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from gputui.monitor.conditions import Level
from gputui.monitor.verdicts import HEALTHY, Finding
from gputui.textsafe import printable

LEVEL_STYLE = {Level.OK: "", Level.NOTICE: "yellow", Level.WARNING: "bold yellow", Level.CRITICAL: "bold red"}
LEVEL_MARK = {Level.OK: " ", Level.NOTICE: "·", Level.WARNING: "▲", Level.CRITICAL: "■"}
MAX_LINES = 6  # more findings than this: the rest are counted on the last line


def verdict_text(findings: Sequence[Finding]) -> Text:
    """The pane's text: a line per finding (its mark and where/what in its level's style)."""
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    if not findings:
        text.append(HEALTHY, style="dim")
        return text
    shown = findings if len(findings) <= MAX_LINES else findings[: MAX_LINES - 1]
    for number, finding in enumerate(shown):
        style = LEVEL_STYLE[finding.level]
        if number:
            text.append("\n")
        text.append(f"{LEVEL_MARK[finding.level]} ", style=style)
        text.append(printable(f"{finding.where} {finding.what}"), style=style)
        text.append(printable(f": {finding.evidence}, {finding.span()}"))
    if len(shown) < len(findings):
        text.append(f"\n  … {len(findings) - len(shown)} more (R: the report)", style="dim")
    return text


def verdict_section(findings: Sequence[Finding]) -> Text:
    """``verdict`` and every finding in full (wrapped), or the healthy line: the report and alerts
    screens' section."""
    text = Text()
    text.append("verdict", style="bold underline")
    for finding in findings:
        text.append("\n  ")
        text.append(printable(f"{finding.where} {finding.what}"), style=LEVEL_STYLE[finding.level])
        text.append(printable(f": {finding.evidence}, {finding.span()}"))
    if not findings:
        text.append(f"\n  {HEALTHY}", style="dim")
    return text


class VerdictPane(Static):
    """A Static that shows findings (:meth:`show`)."""

    DEFAULT_CSS = """
    VerdictPane {
        width: 100%;
        height: auto;
        max-height: 6;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(verdict_text(()), id=id, classes=classes)
        self._lines: tuple[str, ...] | None = ()

    def show(self, findings: Sequence[Finding]) -> None:
        """Show ``findings`` (worst first, as the engine orders them); nothing repaints when the same."""
        lines = tuple(f.line() + f.level.name for f in findings)
        if lines == self._lines:
            return
        rows = [max(1, min(len(each or ()), MAX_LINES)) for each in (self._lines, lines)]
        self._lines = lines
        self.update(verdict_text(findings), layout=rows[0] != rows[1])  # same rows: no layout pass
