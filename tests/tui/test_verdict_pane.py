"""The verdict pane in a small app of its own: a line per finding cut with an ellipsis at 80 columns,
the healthy line, levels as styles, and the report screen's verdict section."""

from __future__ import annotations

import sys
from pathlib import Path

from textual.app import App, ComposeResult

from gputui.monitor.conditions import Level
from gputui.monitor.state import DashboardState, JobInfo
from gputui.monitor.verdicts import HEALTHY, Finding, judge
from gputui.tui.screens.alerts import alerts_text
from gputui.tui.widgets.verdict_pane import LEVEL_STYLE, VerdictPane, verdict_section, verdict_text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "monitor"))
import verdict_jobs as jobs


class PaneApp(App):
    def compose(self) -> ComposeResult:
        yield VerdictPane(id="verdict")


def _rows(pane: VerdictPane) -> list[str]:
    return [pane.render_line(y).text for y in range(pane.size.height)]


async def test_findings_one_line_each_cut_at_80_columns() -> None:
    found = judge(jobs.straggler_node()) + judge(jobs.hang(100.0))
    assert [f.kind for f in found] == ["straggler_node", "hang"]
    app = PaneApp()
    async with app.run_test(size=(80, 12)) as pilot:
        pane = app.query_one(VerdictPane)
        assert _rows(pane)[0].strip() == HEALTHY
        pane.show(sorted(found, key=lambda f: -f.level))
        await pilot.pause()
        rows = _rows(pane)
        assert len(rows) == 2 and all(len(row) <= 80 for row in rows)
        assert rows[0].startswith("■ job hang?: no new metric for 0:15:07") and rows[0].rstrip().endswith("…")
        assert rows[1].startswith("▲ node2 straggler: GPUs 30 % vs 94 % on node1") and rows[
            1
        ].rstrip().endswith("…")
        pane.show([])
        await pilot.pause()
        assert [row.strip() for row in _rows(pane)] == [HEALTHY]


def test_levels_are_styles_and_the_rest_are_counted() -> None:
    finding = Finding("hang", Level.CRITICAL, "job", "hang?", "no new metric", 0.0, 60.0)
    text = verdict_text([finding])
    assert any(span.style == LEVEL_STYLE[Level.CRITICAL] for span in text.spans)
    many = verdict_text([finding] * 9)
    assert many.plain.splitlines()[-1] == "  … 4 more (R: the report)"


def test_the_state_judges_what_it_ingests_and_the_alerts_screen_opens_with_it() -> None:
    state = DashboardState(JobInfo("replay", "straggler"))
    state.ingest(jobs.straggler_node())
    state.clock = max(r.time for r in jobs.straggler_node())
    text = verdict_section(state.verdict()).plain
    assert text.startswith("verdict\n  node2 straggler: GPUs 30 % vs 94 % on node1")
    assert alerts_text(state).plain.startswith(text + "\n\nalerts\n")
    section = verdict_section(state.verdict())
    assert not section.style and [s.style for s in section.spans][:2] == ["bold underline", "bold yellow"]
    healthy = DashboardState(JobInfo("replay", "healthy"))
    healthy.ingest(jobs.healthy_one_node())
    assert verdict_section(healthy.verdict()).plain == f"verdict\n  {HEALTHY}"


def test_a_live_hang_needs_quiet_output_too() -> None:
    records = jobs.hang(0.0)
    end = max(r.time for r in records)
    state = DashboardState(JobInfo("attach", "job 7", state="RUNNING"))
    state.ingest(records)
    state.clock = end
    state.text("slurm-7.out", b"evaluating...\n", now=end - 30)
    assert state.verdict() == []
    state.clock = end + 11 * 60
    assert [f.kind for f in state.verdict()] == ["hang"]
