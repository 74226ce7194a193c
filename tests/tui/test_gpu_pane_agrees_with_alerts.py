"""The GPU pane and the alerts read one classifier: for the same state, a flag marked ⚠ (a warning, in the
warning style) is an active alert and an alert is a ⚠ flag, and a notice is neither."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult

from gputui.config import AlertThresholds
from gputui.monitor.state import DashboardState, JobInfo
from gputui.stream.records import gpu_sample
from gputui.tui.widgets.gpu_pane import GpuPane

GIB = 1024**3
T0 = 1_800_000_000.0
WARNING_STYLE = "bold yellow"


class PaneApp(App):
    def compose(self) -> ComposeResult:
        yield GpuPane()


def new_state(running: bool = True) -> DashboardState:
    job = JobInfo(kind="attach", title="job 1", state="RUNNING" if running else "RECORDED")
    return DashboardState(job, AlertThresholds())


def tick(state: DashboardState, utils: dict[str, list[float]], t: float, **values) -> None:
    values.setdefault("mem_used_bytes", 10 * GIB)
    values.setdefault("mem_total_bytes", 40 * GIB)
    state.ingest(
        [
            gpu_sample(host=host, gpu_id=f"GPU-{host}-{i}", vendor="nvidia", source="nvml", time=t, index=i,
                       util_gpu_pct=u, **values)
            for host, us in utils.items()
            for i, u in enumerate(us)
        ]
    )  # fmt: skip


async def pane_and_alerts(state: DashboardState, now: float, size=(120, 30)) -> tuple[Text, set[str]]:
    """What the pane draws and which condition alerts are active, for ``state`` at ``now``."""
    state.check(now=now)
    async with PaneApp().run_test(size=size) as pilot:
        pane = pilot.app.query_one(GpuPane)
        pane.show(state.board, state.alerts.thresholds, now, state.job.running)
        await pilot.pause()
        text = pane.render()
    return text, set(state.alerts.active)


def styles_of(text: Text, flag: str) -> set[str]:
    """The styles of every span that covers exactly ``flag`` (each occurrence)."""
    return {str(s.style) for s in text.spans if text.plain[s.start : s.end] == flag}


def assert_agree(text: Text, alerts: set[str]) -> None:
    assert text.plain.count("⚠") == len(alerts), (text.plain, alerts)


async def test_memory_over_mem_high_pct_is_a_warning_flag_and_a_mem_high_alert():
    state = new_state()
    tick(state, {"node1": [90, 90]}, T0)
    tick(state, {"node1": [90]}, T0 + 1, mem_used_bytes=39 * GIB)  # 97.5 % of 40 GiB
    text, alerts = await pane_and_alerts(state, T0 + 1)
    assert alerts == {"mem_high:node1:GPU-node1-0"}
    assert styles_of(text, "mem ⚠") == {WARNING_STYLE}  # was bold red, an error's colour
    assert_agree(text, alerts)


async def test_an_idle_gpu_is_a_quiet_notice_until_the_idle_alert_then_both():
    state = new_state()
    tick(state, {"node1": [95, 95, 95, 0]}, T0)
    text, alerts = await pane_and_alerts(state, T0 + 90)  # 1.5 min < gpu_idle_minutes (2)
    assert "idle 2m" in text.plain and "⚠" not in text.plain  # the pane used to say "idle 2m ⚠" here
    assert alerts == set()
    text, alerts = await pane_and_alerts(state, T0 + 130)
    assert styles_of(text, "idle 2m ⚠") == {WARNING_STYLE}
    assert alerts == {"gpu_idle:node1:GPU-node1-3"}
    assert_agree(text, alerts)


async def test_a_lost_nodes_stale_full_memory_is_neither_flagged_nor_alerted():
    state = new_state()
    tick(state, {"node1": [95, 95], "node2": [95, 95]}, T0, mem_used_bytes=39 * GIB)
    state.board.lose_node("node2", "probe silent", T0 + 1)
    text, alerts = await pane_and_alerts(state, T0 + 1)
    assert text.plain.count("LOST") == 2 and text.plain.count("mem ⚠") == 2  # node1's two GPUs only
    assert alerts == {"mem_high:node1:GPU-node1-0", "mem_high:node1:GPU-node1-1"}  # was node2's too
    assert_agree(text, alerts)


async def test_a_recorded_runs_straggler_is_flagged_and_alerted():
    state = new_state(running=False)
    tick(state, {"node1": [95] * 4, "node2": [94] * 4, "node3": [40] * 4}, T0)
    text, alerts = await pane_and_alerts(state, T0, size=(100, 8))  # 12 GPUs in 8 rows: roll-ups
    assert "▸ node3" in text.plain
    assert styles_of(text, "  straggler ⚠") == {WARNING_STYLE}
    assert alerts == {"straggler:node3"}  # the pane flagged it; the alerts used to stay silent
    assert_agree(text, alerts)


async def test_healthy_gpus_have_no_flag_and_no_alert():
    state = new_state()
    tick(state, {"node1": [95, 91], "node2": [93, 97]}, T0, temp_c=60.0)
    text, alerts = await pane_and_alerts(state, T0 + 600)
    assert alerts == set()
    assert "⚠" not in text.plain and "idle" not in text.plain
