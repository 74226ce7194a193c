"""The log pane's title says ``following`` only while more output can come: once the run is over (the
replayed log says training finished, the job reached a final state, the source returned) it says
``ended``. It said ``following`` after the run had ended."""

from __future__ import annotations

import os
from pathlib import Path

import tui_data
from test_dashboard_snapshots import folder  # noqa: F401 (the fixture)

from gputui.config import Config
from gputui.sources.replay import ReplaySource
from gputui.stream.io import encode_record
from gputui.stream.records import event
from gputui.tui.app import GputuiApp
from gputui.tui.widgets.log_pane import LogPane

UNFINISHED = [
    "Epoch 1/3",
    "100/100 - 12s - loss: 0.9000 - accuracy: 0.6000 - 12s/epoch - 120ms/step",
    "Epoch 2/3",
]


def _log(where: Path, lines: list[str]) -> str:
    path = where / "train.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.utime(path, (tui_data.T0 + 100.0, tui_data.T0 + 100.0))
    return "train.log"


def _title(app: GputuiApp) -> str:
    return str(tui_data.dashboard(app).query_one(LogPane).border_title)


def _recorded(where: Path, *records) -> str:
    """A record file of a job: its probe started, then ``records``."""
    started = event("probe_started", message="gputui probe on node01", time=tui_data.T0, host="node01")
    tui_data.write_records(where / "job.jsonl", [started, *records])
    return "job.jsonl"


async def test_a_followed_job_is_following_until_its_final_state_arrives(folder):  # noqa: F811
    """A job being recorded (``--record``) is followed; its COMPLETED state ends it, though its log
    never said so: no more output comes from a completed job."""
    app = tui_data.make_app([_recorded(folder), _log(folder, UNFINISHED)])
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await tui_data.wait_loaded(pilot)
            assert _title(app) == "log train.log · following"
            with open(folder / "job.jsonl", "ab") as out:
                out.write(encode_record(event("job_state", state="COMPLETED", time=tui_data.T0 + 200.0)))
            await tui_data.wait_for(pilot, lambda: "following" not in _title(app), "the end to be seen")
            assert _title(app) == "log train.log · ended"
            await pilot.press("l", "f")  # paused after the end: f goes back to the end, nothing to follow
            assert _title(app) == "log train.log · ended · paused (f: to the end)"
    finally:
        app.source.stop()


async def test_a_replayed_run_whose_outcome_was_recorded_is_ended_and_a_search_keeps_it(folder):  # noqa: F811
    outcome = event("outcome", outcome="completed", evidence="Training finished", time=tui_data.T0 + 90.0)
    app = tui_data.make_app([_recorded(folder, outcome), _log(folder, UNFINISHED)])
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await tui_data.wait_loaded(pilot)
            assert _title(app) == "log train.log · ended"
            tui_data.dashboard(app).query_one(LogPane).find("Epoch 2")
            assert _title(app) == "log train.log · ended · paused (f: to the end) · /Epoch 2"
    finally:
        app.source.stop()


async def test_a_source_that_returned_is_ended(folder):  # noqa: F811
    """A source that has returned (a local run's ranks finished, a detached job) follows nothing more."""
    config = Config()
    app = GputuiApp(ReplaySource([_log(folder, UNFINISHED)], config.alerts, follow=False), config)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = tui_data.dashboard(app)
        await tui_data.wait_for(pilot, lambda: screen.finished, "the source to return")
        await pilot.pause()
        assert _title(app) == "log train.log · ended"


FINISHED = [
    *UNFINISHED[:2],
    "Epoch 2/3",
    "100/100 - 12s - loss: 0.5000 - accuracy: 0.8000 - 12s/epoch - 120ms/step",
]
FINISHED += ["Epoch 3/3", "100/100 - 12s - loss: 0.3000 - accuracy: 0.9000 - 12s/epoch - 120ms/step"]
FINISHED += ["Training finished"]


async def test_a_replayed_plain_log_that_says_it_finished_is_ended(folder):  # noqa: F811
    """A plain log has no recorded outcome and a followed file is never finished: the log's own last line
    ends the run (it said ``following`` and ``epoch 4`` after ``Training finished``)."""
    app = tui_data.make_app([_log(folder, FINISHED)])
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await tui_data.wait_loaded(pilot)
            assert _title(app) == "log train.log · ended"
            state = tui_data.dashboard(app).state
            assert state.training.ended and state.training.current_epoch() == 3
            assert state.outcome is not None and state.outcome.get("outcome") == "completed"
    finally:
        app.source.stop()


async def test_a_followed_plain_log_ends_when_its_end_line_arrives(folder):  # noqa: F811
    app = tui_data.make_app([_log(folder, FINISHED[:4])])
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await tui_data.wait_loaded(pilot)
            assert _title(app) == "log train.log · following"  # two epochs of three: may go on
            with open(folder / "train.log", "a", encoding="utf-8") as out:
                out.write("\n".join(FINISHED[4:]) + "\n")
            await tui_data.wait_for(pilot, lambda: "following" not in _title(app), "the end line to be seen")
            assert _title(app) == "log train.log · ended"
    finally:
        app.source.stop()


async def test_a_long_file_name_gives_way_to_the_state_in_a_narrow_terminal(folder):  # noqa: F811
    """At 80 columns a run folder's long name cut the title's end (``· en…``): the name is cut in the
    middle instead, and the whole title fits between the pane's corners; wide again, it is whole."""
    run = folder / "resnet18-ddp-2ranks-lr0.05-batch256-20261126-181607-12399"
    run.mkdir()
    name = _log(run, FINISHED)
    app = tui_data.make_app([f"{run.name}/{name}"])
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await tui_data.wait_loaded(pilot)
            pane = tui_data.dashboard(app).query_one(LogPane)
            title = _title(app)
            assert title.startswith("log resnet18-ddp-2ranks-") and title.endswith("-12399/train.log · ended")
            assert "…" in title and len(title) <= pane.outer_size.width - 6
            await pilot.resize_terminal(160, 36)
            await pilot.pause()
            assert _title(app) == f"log {run.name}/train.log · ended"
    finally:
        app.source.stop()
