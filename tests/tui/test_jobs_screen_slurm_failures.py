"""A slow or broken Slurm on the jobs screen: said in the status line, never shown as "no jobs".

The poller's runner is ``home_data.FakeSlurm`` (recorded and generated Slurm output); a timeout is the
SlurmError run_slurm raises, garbage is output that is not squeue's rows (an error page, a header, partial
JSON). The last good table stays, with one line naming the failure and the time of the table; before any
answer the list is "not known", not empty. Pilot assertions and two SVG snapshots.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import home_data
import pytest
from home_data import FakeSlurm
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Static

from gputui.slurm.commands import SlurmError
from gputui.tui.widgets.jobs_table import JobsTable

SIZE = (120, 36)
HOUR = 3600.0
TIMEOUT = SlurmError("squeue did not answer within 10 s (is slurmctld reachable?)")
HTML = "<html><body>502 Bad Gateway</body></html>\n"
HTML_WHY = "squeue output unreadable (no job row in 1 line; first: '<html><body>502 Bad Gate…')"
#: the sample's rows: running (array 25 first), pending, configuring, ended (from sacct)
SAMPLE_KEYS = ["array:25", "25_0", "25_1", "24", "22", "31", "26", "30", "21", "20", "19"]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from home_data.environment(tmp_path, monkeypatch)


def sample() -> FakeSlurm:
    return FakeSlurm(home_data.SAMPLE_SQUEUE, sacct=home_data.SAMPLE_SACCT)


def text_of(pilot: Pilot, selector: str) -> str:
    widget = home_data.jobs_screen(pilot.app).query_one(selector, Static)
    if not widget.display:
        return ""
    content = widget.content
    return content.plain if isinstance(content, Text) else str(content)


def shown_keys(pilot: Pilot) -> list[str]:
    return [row.key for row in home_data.jobs_screen(pilot.app).query_one(JobsTable).rows_shown]


async def refresh(pilot: Pilot, squeue_calls: int) -> None:
    await pilot.press("r")
    await home_data.wait_polled(pilot, squeue_calls=squeue_calls)


# --------------------------------------------------------------------------- no answer yet


@pytest.mark.parametrize(
    ("squeue", "why"),
    [
        (TIMEOUT, "squeue did not answer within 10 s (is slurmctld reachable?)"),
        (HTML, HTML_WHY),
        (subprocess.CompletedProcess(["squeue"], 1, "", ""), "squeue: exit status 1"),
    ],
    ids=["timeout", "garbage", "exit-1"],
)
async def test_no_answer_yet_is_not_no_jobs(folder, squeue, why: str) -> None:
    app = home_data.make_app(FakeSlurm(squeue), refresh_s=HOUR)
    async with app.run_test(size=SIZE) as pilot:
        screen = await home_data.wait_polled(pilot)
        assert screen.snapshot.taken_at == 0
        header = text_of(pilot, "#jobs-header")
        assert "my jobs: not known yet" in header and "no jobs" not in header
        assert "no jobs" not in text_of(pilot, "#job-detail")
        status = text_of(pilot, "#status")
        assert status.startswith(why) and "; no list of jobs yet" in status


async def test_an_empty_answer_is_no_jobs(folder) -> None:
    app = home_data.make_app(FakeSlurm(""), refresh_s=HOUR)
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        assert "my jobs: no jobs" in text_of(pilot, "#jobs-header")
        assert text_of(pilot, "#job-detail") == "no jobs: l launches one, d runs the demo"
        assert text_of(pilot, "#status") == ""


# --------------------------------------------------------------------------- after a good answer


@pytest.mark.parametrize(
    ("squeue", "why"),
    [
        (TIMEOUT, "squeue did not answer within 10 s (is slurmctld reachable?)"),
        (HTML, HTML_WHY),
        (
            "JOBID NAME STATE\n",
            "squeue output unreadable (no job row in 1 line; first: 'JOBID NAME STATE')",
        ),
        (home_data.squeue_failed(), "squeue: slurm_load_jobs error: Socket timed out on send/recv operation"),
    ],
    ids=["timeout", "html", "header", "exit-1"],
)
async def test_the_last_good_table_stays_with_the_failure_and_its_time(folder, squeue, why: str) -> None:
    fake = sample()
    app = home_data.make_app(fake, refresh_s=HOUR)
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        fake.squeue = squeue
        home_data.CLOCK.now += 70  # the failing poll is 70 s after the table (08:00:00 UTC)
        await refresh(pilot, 2)
        assert shown_keys(pilot) == SAMPLE_KEYS
        assert text_of(pilot, "#status") == f"{why}; showing the table from 08:00:00"
        assert "no jobs" not in text_of(pilot, "#jobs-header")
        home_data.CLOCK.now += 60  # still failing a minute later: since when
        await refresh(pilot, 3)
        assert text_of(pilot, "#status") == f"{why} (since 08:01:10); showing the table from 08:00:00"
        assert shown_keys(pilot) == SAMPLE_KEYS
        fake.squeue = home_data.SAMPLE_SQUEUE  # Slurm answers again: the line goes
        await refresh(pilot, 4)
        assert text_of(pilot, "#status") == ""


async def test_unreadable_rows_among_good_ones_show_the_good_ones_and_a_note(folder) -> None:
    fake = FakeSlurm(
        "JOBID NAME STATE\n"
        + home_data.lines(home_data.squeue_line(41, name="good-a"), home_data.squeue_line(42, name="good-b"))
        + "x\x1fy\n"
    )
    app = home_data.make_app(fake, refresh_s=HOUR)
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        assert shown_keys(pilot) == ["42", "41"]
        assert text_of(pilot, "#status") == "squeue: 2 of 4 rows unreadable, skipped (the others are shown)"


async def test_partial_json_keeps_the_last_good_table(folder) -> None:
    fake = FakeSlurm(home_data.recorded("squeue-22.05.json"), sacct=home_data.sacct_disabled())
    app = home_data.make_app(fake, refresh_s=HOUR)
    app.poller.use_json = True
    app.poller.user = "root"
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        good = shown_keys(pilot)
        assert good
        fake.squeue = '{"meta": {}, "errors": [], "jobs": [{"account": '
        await refresh(pilot, 2)
        assert shown_keys(pilot) == good
        status = text_of(pilot, "#status")
        assert status.startswith("squeue output unreadable (JSONDecodeError: ")
        assert status.endswith("; showing the table from 08:00:00")


async def test_failing_sacct_keeps_the_ended_jobs_and_sinfo_the_free_gpus(folder) -> None:
    fake = sample()
    app = home_data.make_app(fake, refresh_s=HOUR)
    async with app.run_test(size=SIZE) as pilot:
        screen = await home_data.wait_polled(pilot)
        partitions = [(p.name, p.free_gpus) for p in screen.snapshot.partitions]
        fake.sacct = HTML
        fake.sinfo = SlurmError("sinfo did not answer within 10 s (is slurmctld reachable?)")
        home_data.CLOCK.now += 70
        await refresh(pilot, 2)
        assert shown_keys(pilot) == SAMPLE_KEYS  # 21, 20, 19: the ended jobs sacct gave before
        assert [(p.name, p.free_gpus) for p in screen.snapshot.partitions] == partitions
        assert screen.query_one("#cluster").display
        errors = screen.snapshot.errors
        assert errors[0] == HTML_WHY.replace("squeue", "sacct")
        assert errors[1] == (
            "sinfo did not answer within 10 s (is slurmctld reachable?); free GPUs as of 08:00:00"
        )
        assert text_of(pilot, "#status") == f"{errors[0]} (+1 more)"
        fake.sinfo = "garbage\n"  # printed, but not sinfo's rows: the same
        await refresh(pilot, 3)
        assert [(p.name, p.free_gpus) for p in screen.snapshot.partitions] == partitions
        assert screen.snapshot.errors[1] == (
            "sinfo output unreadable (1 lines, none a node); free GPUs as of 08:00:00"
        )


async def test_leaving_the_screen_stops_the_poller(folder) -> None:
    """Quitting stops the poller's Slurm calls (the real kill of a hung squeue: the tmux test)."""
    app = home_data.make_app(sample(), refresh_s=HOUR)
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        assert not app.poller.calls.stopped
        await pilot.press("q")
    assert app.poller.calls.stopped


# --------------------------------------------------------------------------- snapshots


def snap(snap_compare, fake: FakeSlurm, then=None, size=SIZE) -> bool:
    app = home_data.make_app(fake, refresh_s=HOUR)

    async def run_before(pilot: Pilot) -> None:
        await home_data.wait_polled(pilot)
        if then is not None:
            await then(pilot)
        await pilot.pause()

    return snap_compare(app, terminal_size=size, run_before=run_before)


def test_snapshot_squeue_hangs_after_a_good_table(snap_compare, folder):
    """The table of 08:00:00 stays; the status line says squeue times out since 08:01:10."""
    fake = sample()

    async def hang(pilot: Pilot) -> None:
        fake.squeue = TIMEOUT
        home_data.CLOCK.now += 70
        await refresh(pilot, 2)
        home_data.CLOCK.now += 60
        await refresh(pilot, 3)

    assert snap(snap_compare, fake, then=hang)


def test_snapshot_squeue_prints_garbage_from_the_start(snap_compare, folder):
    """No answer yet: "not known", never "no jobs"; the status line quotes the garbage's first line."""
    assert snap(snap_compare, FakeSlurm(HTML), size=(80, 24))
