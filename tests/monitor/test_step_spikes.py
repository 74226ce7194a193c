"""The step time's spikes (issue 30): the typical step legible beside them, and what they are."""

from __future__ import annotations

from pathlib import Path

import step_logs

from gputui.logs import parse_bytes
from gputui.monitor.series import Series
from gputui.monitor.spikes import spikes, spikes_text
from gputui.monitor.training import TrainingState
from gputui.tui.widgets.timeline import timeline_picture


def test_evaluation_steps_are_named_and_cut(tmp_path: Path) -> None:
    log = step_logs.build_nanogpt(tmp_path / "train.log")
    training = TrainingState()
    for record in parse_bytes(log.read_bytes()):
        if record.kind == "metric":
            training.add_metric(record)
    found = training.step_spikes()
    assert found is not None
    assert found.what == "evaluation, first step" and found.every == 250
    assert found.highest == 20.0 and 0.45 * 1.5 <= found.top < 1.0
    assert spikes_text(found) == "spikes to 20 s cut: evaluation, first step every 250 steps"


def test_a_steady_run_has_no_spikes() -> None:
    assert spikes(list(range(100)), [0.5 + (i % 3) * 0.01 for i in range(100)], set()) is None


def test_the_chart_ends_below_the_spikes_and_says_so() -> None:
    times = [float(i) for i in range(200)]
    step_time = Series(2048)
    for t in times:
        step_time.append(t, 20.0 if t % 50 == 0 else 0.5)
    found = spikes(
        times, [20.0 if t % 50 == 0 else 0.5 for t in times], {int(t) for t in times if t % 50 == 0}
    )
    picture, title = timeline_picture(Series(), step_time, 80, 12, False, True, found)
    assert picture is not None and picture.right is not None
    assert picture.right.hi == 0.75  # 1.5 × the typical step: it fills the chart
    assert "spikes to 20 s cut: evaluation" in title
