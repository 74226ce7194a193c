"""The GPU pane's cursor is shown on the row it is on: each GPU row of an expanded node, not only a
node's first (it stayed on the first while ↓ moved it)."""

from __future__ import annotations

from test_ssh_frugal import SIZE, PanesApp, eight_gpus, new_state

from gputui.tui.widgets.gpu_pane import SELECTED, GpuPane


async def test_down_moves_the_highlighted_row():
    state = new_state()
    eight_gpus(state, 1_800_000_000.0)
    async with PanesApp().run_test(size=SIZE) as pilot:
        pane = pilot.app.query_one(GpuPane)
        pane.show(state.board, state.alerts.thresholds, 1_800_000_000.0, True)
        pane.focus()
        await pilot.press("down", "down")
        await pilot.pause()
        assert pane.cursor == 2
        rows = pane.build_rows()  # the summary, then one row per GPU
        assert [row.style for row in rows[1:5]] == ["", "", SELECTED, ""]
