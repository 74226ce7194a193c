"""Frugal over SSH (issue 25 part 5): the GPU and log panes repaint only when their content changed and
only the rows that changed, counted as Textual sends them (the terminal driver's writes) and as the
regions a pane marks dirty."""

from __future__ import annotations

import re

import pytest
import tui_data
from textual.app import App, ComposeResult
from textual.drivers.headless_driver import HeadlessDriver
from textual.geometry import Region
from textual.widgets import Static

from gputui.config import AlertThresholds
from gputui.monitor.logtext import LogText
from gputui.monitor.state import DashboardState, JobInfo
from gputui.stream.records import gpu_sample
from gputui.tui.cost_meter import MIN_SPAN_S, CostMeter
from gputui.tui.widgets.gpu_pane import GpuPane
from gputui.tui.widgets.log_pane import LogPane

GIB = 1024**3
T0 = 1_800_000_000.0
SIZE = (120, 40)


class CountingDriver(HeadlessDriver):
    """A headless driver the app writes its frames to, as to a terminal: it counts the bytes."""

    written = 0
    last = ""  # the last write

    @property
    def is_headless(self) -> bool:
        return False  # the app renders and writes every frame

    def write(self, data: str) -> None:
        CountingDriver.written += len(data.encode())
        CountingDriver.last = data


class PanesApp(App):
    CSS = "GpuPane { height: 12; border: round white; } LogPane { height: 1fr; border: round white; }"

    def __init__(self) -> None:
        super().__init__()
        self.driver_class = CountingDriver

    def compose(self) -> ComposeResult:
        yield GpuPane()
        yield LogPane()


def eight_gpus(state: DashboardState, t: float, only: int | None = None, temp: float = 60.0) -> None:
    """A sample of each of 8 GPUs (or only of GPU ``only``, at ``temp``)."""
    state.ingest(
        [
            gpu_sample(host="node1", gpu_id=f"GPU-{i}", vendor="nvidia", source="nvml", time=t, index=i,
                       util_gpu_pct=90.0, mem_used_bytes=10 * GIB, mem_total_bytes=40 * GIB,
                       temp_c=temp, power_w=300.0)
            for i in (range(8) if only is None else [only])
        ]
    )  # fmt: skip


def new_state() -> DashboardState:
    return DashboardState(JobInfo(kind="attach", title="job 1", state="RUNNING"), AlertThresholds())


def spy_refresh(widget) -> list[tuple[Region, ...]]:
    """Every ``refresh`` call's regions (an empty tuple: the whole widget)."""
    calls: list[tuple[Region, ...]] = []
    original = widget.refresh

    def refresh(*regions, **kwargs):
        calls.append(regions)
        return original(*regions, **kwargs)

    widget.refresh = refresh
    return calls


def training_log(lines: int, frame: str) -> LogText:
    log = LogText("run/train.out")
    log.feed(
        "".join(f"step {i} loss {1 / (i + 1):.4f}\n" for i in range(lines)).encode() + frame.encode(), T0
    )
    return log


async def test_panes_shown_again_with_unchanged_data_send_no_bytes():
    state = new_state()
    eight_gpus(state, T0)
    log = training_log(50, "\rEpoch 1:  40%|####      | 40/100")
    async with PanesApp().run_test(size=SIZE, headless=False) as pilot:
        gpus, logs = pilot.app.query_one(GpuPane), pilot.app.query_one(LogPane)
        gpus.show(state.board, state.alerts.thresholds, T0, True)
        logs.show(log)
        await pilot.pause()
        assert "GPUs 8" in gpus.render().plain and "step 49" in logs.render().plain
        first = CountingDriver.written
        assert first > 3000  # the first frame: both panes
        for _ in range(3):  # the dashboard's refresh ticks with nothing new
            gpus.show(state.board, state.alerts.thresholds, T0, True)
            logs.show(log)
            await pilot.pause()
        assert CountingDriver.written - first < 100  # was ~4 KB per tick: both panes repainted


async def test_a_gpu_pane_with_one_changed_gpu_repaints_only_that_row():
    state = new_state()
    eight_gpus(state, T0)
    async with PanesApp().run_test(size=SIZE, headless=False) as pilot:
        pane = pilot.app.query_one(GpuPane)
        pane.show(state.board, state.alerts.thresholds, T0, True)
        await pilot.pause()
        calls = spy_refresh(pane)
        eight_gpus(state, T0 + 1, only=3, temp=71.0)  # a new sample of GPU 3: its temperature changed
        pane.show(state.board, state.alerts.thresholds, T0 + 1, True)
        await pilot.pause()
        assert calls == [(Region(0, 4, pane.size.width, 1),)]  # row 0 is the summary; GPU 3 is row 4
        assert "71°C" in pane.render().plain.splitlines()[4]


async def test_an_unchanged_log_pane_is_not_repainted_and_a_new_frame_repaints_its_row_only():
    async with PanesApp().run_test(size=SIZE, headless=False) as pilot:
        pane = pilot.app.query_one(LogPane)
        pane.show(None)
        await pilot.pause()
        calls = spy_refresh(pane)
        pane.show(None)  # "no output followed yet", every tick until a log is found
        await pilot.pause()
        assert calls == []
        log = training_log(50, "\rEpoch 1:  40%|####      | 40/100")
        pane.show(log)
        await pilot.pause()
        calls.clear()
        log.feed(b"\rEpoch 1:  41%|####      | 41/100", T0 + 1)  # a progress bar's next frame
        pane.show(log)
        await pilot.pause()
        last = pane.size.height - 1
        assert calls == [(Region(0, last, pane.size.width, 1),)]
        assert pane.render().plain.splitlines()[-1].endswith("41/100")


def test_the_cost_meter_reads_bytes_and_cpu_over_its_window():
    clock, cpu = [100.0], [5.0]
    meter = CostMeter(clock=lambda: clock[0], cpu_clock=lambda: cpu[0], window_s=10.0)
    assert meter.line() == "gputui's own cost: not measured yet"
    write = meter.counting(lambda data: None)
    write("\x1b[1;1Hé" * 100)  # 6 + 2 bytes (é is two in UTF-8)
    clock[0] = 101.0  # one second: a start-up burst, not a rate
    assert meter.rates() is None and meter.line() == "gputui's own cost: not measured yet"
    clock[0], cpu[0] = 104.0, 5.2
    assert meter.rates() == pytest.approx((200.0, 5.0, 4.0))
    assert meter.line() == "gputui's own cost: 200 B/s to the terminal, 5.0 % CPU (last 4 s)"
    for t in range(105, 131):  # samples over 26 s: the rates cover the last ~10 s only
        clock[0] = float(t)
        meter.sample()
    write("x" * 20_000)
    assert meter.rates() == pytest.approx((20_000 / 10, 0.0, 10.0))
    assert "2.0 KB/s to the terminal" in meter.line()


async def test_the_help_screen_shows_what_the_app_sends_to_the_terminal(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = tui_data.make_app(tui_data.one_node(tmp_path))
    app.driver_class = CountingDriver
    async with app.run_test(size=SIZE, headless=False) as pilot:
        await tui_data.wait_loaded(pilot)
        assert app.cost_meter.bytes_written > 5000  # the first frames: the whole dashboard
        assert "\x1b[0m\x1b[" not in CountingDriver.last  # styles sent as changes (gputui.tui.sgr_squeeze)
        await pilot.pause(MIN_SPAN_S)  # a rate over less time is not shown
        await pilot.press("question_mark")
        await pilot.pause(0.3)
        shown = str(app.screen.query_one("#own-cost", Static).render())
        per_s, _cpu, _span = app.cost_meter.rates()
        assert per_s > 0
        assert re.fullmatch(
            r"gputui's own cost: [\d.]+ K?B/s to the terminal, [\d.]+ % CPU \(last \d+ s\)", shown
        )
        await pilot.press("question_mark")
