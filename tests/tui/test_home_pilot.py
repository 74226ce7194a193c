"""The jobs home screen's keys, driven with Textual's pilot on a fake Slurm (``home_data.FakeSlurm``).

Assertions are on the screen's state and widgets (rows, status line, which screen is up) and on what
was called: the runner's Slurm calls, and recorders put in place of ``cancel_job``, the launch form's
``submit`` and the dashboard sources (no scancel, sbatch, srun or local ranks ever run). Polls come only
from the first mount and from keys: the refresh timer is set to an hour.
"""

from __future__ import annotations

import importlib.util
import subprocess
from collections.abc import Iterator
from pathlib import Path

import home_data
import pytest
import tui_data
from home_data import FakeSlurm, IdleSource
from rich.syntax import Syntax
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Input, Label, OptionList, Select, Static

import gputui.slurm.cancel
import gputui.sources.attach
import gputui.sources.local
import gputui.tui.screens.launch
from gputui.slurm.cancel import CancelResult
from gputui.tui.screens.dashboard import DashboardScreen
from gputui.tui.screens.dialogs import ChoiceScreen, ConfirmScreen, PromptScreen
from gputui.tui.screens.help import HelpScreen
from gputui.tui.screens.jobs import JobsScreen
from gputui.tui.screens.launch import LaunchScreen
from gputui.tui.widgets.jobs_table import JobsTable

SIZE = (120, 36)
HOUR = 3600.0
#: running (array 25 first: its newest task), pending, other active states (configuring), ended
SAMPLE_KEYS = ["array:25", "25_0", "25_1", "24", "22", "31", "26", "30", "21", "20", "19"]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from home_data.environment(tmp_path, monkeypatch)


@pytest.fixture
def sources(monkeypatch: pytest.MonkeyPatch) -> list[IdleSource]:
    """AttachSource and LocalRunSource replaced by IdleSource (the jobs screen imports them at use)."""
    monkeypatch.setattr(gputui.sources.attach, "AttachSource", IdleSource)
    monkeypatch.setattr(gputui.sources.local, "LocalRunSource", IdleSource)
    return IdleSource.made


@pytest.fixture
def cancels(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str | None]]:
    """Calls of gputui.slurm.cancel.cancel_job (the screen imports it from there at use)."""
    calls: list[tuple[str, str | None]] = []

    def cancel_job(job_id: str, *, signal: str | None = None, **_: object) -> CancelResult:
        calls.append((job_id, signal))
        action = "signalled" if signal else "cancelled"
        return CancelResult(job_id, action, signal, "RUNNING", True, f"job {job_id} {action}")

    monkeypatch.setattr(gputui.slurm.cancel, "cancel_job", cancel_job)
    return calls


@pytest.fixture
def submits(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Calls of the launch form's sbatch submit: the script path; each answers job 4242."""
    calls: list[Path] = []

    def submit(path: Path) -> tuple[str, str]:
        calls.append(Path(path))
        return "4242", str(path)

    monkeypatch.setattr(gputui.tui.screens.launch, "submit", submit)
    return calls


def sample() -> FakeSlurm:
    return FakeSlurm(home_data.SAMPLE_SQUEUE, sacct=home_data.SAMPLE_SACCT)


def app_on(fake: FakeSlurm):
    return home_data.make_app(fake, refresh_s=HOUR)


def table(pilot: Pilot) -> JobsTable:
    return home_data.jobs_screen(pilot.app).query_one(JobsTable)


def shown_keys(pilot: Pilot) -> list[str]:
    return [r.key for r in table(pilot).rows_shown]


def table_keys(pilot: Pilot) -> list[str]:
    return [row.key for row in table(pilot).rows_shown]


def text_of(widget: Static) -> str:
    content = widget.content
    if isinstance(content, Syntax):
        return content.code
    if isinstance(content, Text):
        return content.plain
    return str(content)


def status(pilot: Pilot) -> str:
    widget = home_data.jobs_screen(pilot.app).query_one("#status", Static)
    return text_of(widget) if widget.display else ""


async def to_row(pilot: Pilot, key: str) -> None:
    keys = shown_keys(pilot)
    table(pilot).move_cursor(row=keys.index(key), animate=False)
    await pilot.pause()
    assert table(pilot).selected_row().key == key


async def type_into(pilot: Pilot, selector: str, text: str, *, keys: bool = False) -> None:
    """Focus a field and put ``text`` in it: typed key by key (``keys``), else set as a paste would
    (the same Input.Changed; one key press costs a redraw of the whole form)."""
    box = pilot.app.screen.query_one(selector, Input)
    box.focus()
    box.value = ""
    await pilot.pause()
    if keys:
        await pilot.press(*text)
    else:
        box.insert_text_at_cursor(text)
        await pilot.pause()


# --------------------------------------------------------------------------- the list and its polls


async def test_first_poll_lists_the_jobs(folder):
    fake = sample()
    app = app_on(fake)
    async with app.run_test(size=SIZE) as pilot:
        screen = await home_data.wait_polled(pilot)
        assert shown_keys(pilot) == SAMPLE_KEYS
        assert table_keys(pilot) == SAMPLE_KEYS
        assert table(pilot).row_count == 11
        # a quick squeue-only poll (the list sooner), then the full one
        assert fake.count("squeue") == 2 and fake.count("sacct") == 1 and fake.count("sinfo") == 1
        assert [p.name for p in screen.snapshot.partitions] == ["debug", "gpu", "long"]
        assert screen.snapshot.errors == []
        header = text_of(screen.query_one("#jobs-header", Static))
        assert "cluster hpc1 · Slurm 22.05.11" in header
        assert "my jobs: 2 pending, 4 running, 1 configuring, 3 ended · 08:00 every 3600 s" in header
        # the failed job from sacct carries its exit code; the pending one its reason
        cells = {r.key: r.cells for r in table(pilot).rows_shown}
        assert cells["21"][3] == "FAILED (1:0)"
        assert cells["31"][3] == "PENDING (Resources)"


async def test_r_polls_squeue_exactly_once_more(folder):
    fake = sample()
    app = app_on(fake)
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        assert fake.count("squeue") == 2  # the quick first poll and the full one
        await pilot.press("r")
        await home_data.wait_polled(pilot, squeue_calls=2)
        await pilot.pause(0.3)
        assert fake.count("squeue") == 3
        assert fake.count("sacct") == 2 and fake.count("sinfo") == 2  # forced: the ended jobs, the cluster
        assert shown_keys(pilot) == SAMPLE_KEYS


async def test_squeue_failure_keeps_the_last_good_table(folder):
    fake = sample()
    app = app_on(fake)
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        fake.squeue = home_data.squeue_failed()
        await pilot.press("r")
        await home_data.wait_polled(pilot, squeue_calls=2)
        assert shown_keys(pilot) == SAMPLE_KEYS
        why = "squeue: slurm_load_jobs error: Socket timed out on send/recv operation"
        assert status(pilot) == f"{why}; showing the table from 08:00:00"
        fake.squeue = home_data.SAMPLE_SQUEUE  # Slurm answers again: the error line goes
        await pilot.press("r")
        await home_data.wait_polled(pilot, squeue_calls=3)
        assert status(pilot) == ""


async def test_slash_filters_and_escape_clears(folder):
    app = app_on(sample())
    async with app.run_test(size=SIZE) as pilot:
        screen = await home_data.wait_polled(pilot)
        box = screen.query_one("#filter", Input)
        assert not box.display
        await pilot.press("slash")
        assert box.display and box.has_focus
        await pilot.press(*"bert")  # typed into the box, not taken as keys (b, e, r, t)
        assert box.value == "bert"
        assert shown_keys(pilot) == ["31"]
        assert table_keys(pilot) == ["31"]
        assert "filter: bert" in text_of(screen.query_one("#jobs-header", Static))
        await pilot.press("enter")
        assert box.display  # kept while a filter is set
        assert table(pilot).has_focus
        # a task's id keeps its array's header row with it
        await pilot.press("slash", "backspace", "backspace", "backspace", "backspace", *"25_1")
        assert shown_keys(pilot) == ["array:25", "25_1"]
        await pilot.press("escape")
        assert not box.display
        assert screen.filter_text == ""
        assert shown_keys(pilot) == SAMPLE_KEYS
        assert table(pilot).has_focus


async def test_help_and_settings_open_and_close(folder):
    app = app_on(sample())
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, JobsScreen)
        await pilot.press("S")
        text = text_of(app.screen.query_one(Static))
        assert text.startswith("# settings file: config.toml (not found: defaults in use)\n")
        assert "[jobs]\nrefresh_s = 3600\n" in text
        assert "# cluster: hpc1" in text
        await pilot.press("escape")
        assert isinstance(app.screen, JobsScreen)


# --------------------------------------------------------------------------- job keys


async def test_enter_on_an_array_header_asks_for_a_task_row(folder, sources):
    app = app_on(sample())
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        assert table(pilot).selected_row().key == "array:25"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, JobsScreen)
        assert sources == []
        assert "choose a job row first" in status(pilot)
        # a task row opens that task's dashboard (by its own id)
        await pilot.press("down", "enter")
        await home_data.wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen), "the dashboard")
        assert [s.target for s in sources] == ["25_0"]
        await pilot.press("escape")
        await home_data.wait_for(pilot, lambda: isinstance(app.screen, JobsScreen), "the jobs list")
        assert sources[0].stopping.is_set()


async def test_no_polls_under_a_dashboard_and_one_on_return(folder, sources):
    fake = sample()
    app = home_data.make_app(fake, refresh_s=0.2)
    async with app.run_test(size=SIZE) as pilot:
        jobs = await home_data.wait_polled(pilot)
        await to_row(pilot, "22")
        await pilot.press("enter")
        await home_data.wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen), "the dashboard")
        await home_data.wait_for(pilot, lambda: not jobs._polling, "the poll under way")
        calls = fake.count("squeue")
        await pilot.pause(0.8)  # four refresh periods
        assert fake.count("squeue") == calls
        home_data.CLOCK.now += 60  # the list is a minute old when the dashboard closes
        await pilot.press("escape")
        await home_data.wait_for(pilot, lambda: app.screen is jobs, "the jobs list")
        await home_data.wait_polled(pilot, squeue_calls=calls + 1)


async def test_cancel_then_n_cancels_nothing(folder, cancels):
    fake = sample()
    app = app_on(fake)
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        await to_row(pilot, "24")
        await pilot.press("c")
        assert isinstance(app.screen, ConfirmScreen)
        assert text_of(app.screen.query_one(".dialog-text", Static)) == "Cancel job 24 (python3, RUNNING)?"
        await pilot.press("n")
        await pilot.pause(0.2)
        assert isinstance(app.screen, JobsScreen)
        assert cancels == []
        assert not any(argv[0] == "scancel" for argv in fake.calls)
        assert fake.count("squeue") == 2  # nothing done: no refresh either


async def test_cancel_then_y_cancels_the_job(folder, cancels):
    fake = sample()
    app = app_on(fake)
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        await to_row(pilot, "24")
        await pilot.press("c", "y")
        await home_data.wait_for(pilot, lambda: cancels, "cancel_job")
        await home_data.wait_polled(pilot, squeue_calls=2)  # the list is refreshed afterwards
        assert cancels == [("24", None)]
        assert status(pilot) == "job 24 cancelled"


async def test_cancel_refuses_an_ended_job(folder, cancels):
    app = app_on(sample())
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        await to_row(pilot, "21")
        await pilot.press("c")
        assert isinstance(app.screen, JobsScreen)
        assert status(pilot) == "job 21 has already ended (FAILED)"
        assert cancels == []


async def test_signal_usr1(folder, cancels):
    app = app_on(sample())
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        await to_row(pilot, "22")
        await pilot.press("s")
        assert isinstance(app.screen, ChoiceScreen)
        options = app.screen.query_one(OptionList)
        assert [options.get_option_at_index(i).id for i in range(options.option_count)] == [
            "USR1",
            "USR2",
            "TERM",
            "INT",
        ]
        options.highlighted = 0
        await pilot.press("enter")
        await home_data.wait_for(pilot, lambda: cancels, "cancel_job")
        assert cancels == [("22", "USR1")]
        await home_data.wait_for(pilot, lambda: status(pilot) == "job 22 signalled", "the status line")
        # escape in the choice sends nothing
        await pilot.press("s", "escape")
        await pilot.pause(0.2)
        assert cancels == [("22", "USR1")]


# --------------------------------------------------------------------------- the launch form


async def open_launch(pilot: Pilot) -> LaunchScreen:
    await pilot.press("l")
    await home_data.wait_for(pilot, lambda: isinstance(pilot.app.screen, LaunchScreen), "the form")
    return pilot.app.screen  # type: ignore[return-value]


async def test_launch_preview_follows_typing(folder):
    app = app_on(sample())
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        screen = await open_launch(pilot)
        script = screen.query_one("#script", Static)
        assert text_of(script) == "# type a command (or a script) to see the batch script\n"
        assert screen.query_one("#f-command", Input).has_focus
        await pilot.press(*"./t.sh")  # typed: the preview follows each key
        assert "srun ./t.sh\n" in text_of(script)
        assert "#SBATCH --nodes=1\n" in text_of(script)
        await type_into(pilot, "#f-nodes", "2", keys=True)
        assert screen.form.nodes == "2"
        assert "#SBATCH --nodes=2\n" in text_of(script)
        await type_into(pilot, "#f-gpus_per_node", "4")
        assert "#SBATCH --gres=gpu:4\n" in text_of(script)
        assert "#SBATCH --ntasks-per-node=4\n" in text_of(script)
        await type_into(pilot, "#f-partition", "gpu")
        assert "#SBATCH --partition=gpu\n" in text_of(script)
        # a bad time: the message beside the field, no script
        await type_into(pilot, "#f-time", "1h", keys=True)
        label = screen.query_one("#e-time", Label)
        assert label.display
        assert text_of(label) == "time as MM, HH:MM:SS or D-HH:MM:SS (e.g. 01:30:00)"
        assert text_of(script) == "# fix the fields marked in red to see the batch script\n"
        await pilot.press("backspace", "backspace", *"90")
        assert not label.display
        assert "#SBATCH --time=90\n" in text_of(script)
        await pilot.press("escape")
        assert isinstance(app.screen, JobsScreen)


async def test_launch_with_errors_submits_nothing(folder, submits, sources):
    fake = sample()
    app = app_on(fake)
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        screen = await open_launch(pilot)
        await type_into(pilot, "#f-command", "python train.py")
        await type_into(pilot, "#f-nodes", "0")
        await type_into(pilot, "#f-time", "1h")
        await pilot.press("ctrl+s")
        await pilot.pause(0.2)
        assert submits == []
        assert isinstance(app.screen, LaunchScreen)
        assert text_of(screen.query_one("#e-nodes", Label)) == "nodes must be a whole number ≥ 1"
        assert text_of(screen.query_one("#e-time", Label)).startswith("time as MM, HH:MM:SS")
        assert "nothing submitted" in text_of(screen.query_one("#launch-status", Static))
        assert screen.query_one("#f-nodes", Input).has_focus  # the first field to fix
        assert not list((folder / "state").glob("scripts/*.sh"))
        assert sources == []


async def test_launch_error_message_is_not_cut_off(folder):
    """The message beside a field is the only place that says what is wrong: all of it is visible."""
    app = app_on(sample())
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        screen = await open_launch(pilot)
        await type_into(pilot, "#f-command", "python train.py")
        await type_into(pilot, "#f-time", "1h")
        await pilot.press("ctrl+s")
        await pilot.pause()
        label = screen.query_one("#e-time", Label)
        form = screen.query_one("#launch-form")
        message = text_of(label)
        # the label's text area, clipped to what the form (a vertical scroll: no sideways scrolling) shows
        visible = label.content_region.intersection(form.scrollable_content_region)
        assert visible.width * visible.height >= len(message), (
            f"{message!r} ({len(message)} characters) gets {visible.width} column(s) × {visible.height} "
            f"line(s): the label is {label.content_region.width} wide, the form shows "
            f"{form.scrollable_content_region.right - label.content_region.x} of them"
        )


async def test_launch_submits_once_and_opens_the_dashboard(folder, submits, sources):
    fake = sample()
    app = app_on(fake)
    async with app.run_test(size=SIZE) as pilot:
        jobs = await home_data.wait_polled(pilot)
        screen = await open_launch(pilot)
        await type_into(pilot, "#f-command", "python train.py --epochs 3")
        await type_into(pilot, "#f-nodes", "2")
        await type_into(pilot, "#f-gpus_per_node", "4")
        await type_into(pilot, "#f-time", "01:00:00")
        preview = text_of(screen.query_one("#script", Static))
        await pilot.press("ctrl+s")
        await home_data.wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen), "the dashboard")
        assert len(submits) == 1
        assert submits[0].read_text(encoding="utf-8") == preview  # exactly what the preview showed
        assert submits[0].resolve().is_relative_to((folder / "state").resolve())
        assert [s.target for s in sources] == ["4242"]
        assert "submitted job 4242" in status(pilot)
        await home_data.wait_polled(pilot, squeue_calls=2)  # the list is refreshed for the new job
        await pilot.press("escape")
        await home_data.wait_for(pilot, lambda: app.screen is jobs, "the jobs list")
        assert sources[0].stopping.is_set()
        assert table(pilot).has_focus
        assert len(submits) == 1


# --------------------------------------------------------------------------- 200 jobs


async def test_200_jobs_redraw_in_place_and_keep_the_cursor(folder, monkeypatch):
    fake = FakeSlurm(home_data.many_squeue(), sacct=home_data.sacct_disabled())
    app = app_on(fake)
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        widget = table(pilot)
        assert widget.row_count == 200
        keys = table_keys(pilot)
        assert keys[:3] == ["1199", "1197", "1194"]
        # one cell changes (job 1005's time used): only that row is drawn again, nothing is rebuilt
        fake.squeue = home_data.many_squeue(bump=1005)
        await pilot.pause()
        drawn = widget.row_renders
        await pilot.press("r")
        await home_data.wait_polled(pilot, squeue_calls=2)
        await pilot.pause()
        assert table_keys(pilot) == keys
        assert widget.get_cell("1005", "TIME/LIMIT") == "6:00/1:00:00"
        assert widget.row_renders == drawn  # job 1005 is far below the screen: nothing drawn
        fake.squeue = home_data.many_squeue(bump=1197)  # the second row on screen
        await pilot.press("r")
        await home_data.wait_polled(pilot, squeue_calls=3)
        await pilot.pause()
        assert widget.row_renders - drawn == 1
        assert widget.get_cell("1197", "TIME/LIMIT").startswith("18:00/")

        # the cursor on job 1190 (row 5); job 1197 above it turns pending: the rows reorder
        await to_row(pilot, "1190")
        assert widget.cursor_row == 5
        fake.squeue = home_data.many_squeue(bump=1005, first_pending=1197)
        await pilot.press("r")
        await home_data.wait_polled(pilot, squeue_calls=4)
        assert table_keys(pilot) != keys and sorted(table_keys(pilot)) == sorted(keys)
        assert widget.selected_row().key == "1190"
        assert widget.cursor_row == 4
        assert "job 1190" in text_of(home_data.jobs_screen(app).query_one("#job-detail", Static))


# --------------------------------------------------------------------------- no Slurm


async def test_no_slurm_d_l_and_p_still_work(folder, sources, monkeypatch):
    real_find_spec = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):  # the demo's check for PyTorch (no real run here)
        return object() if name == "torch" else real_find_spec(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    tui_data.training_log(folder)
    fake = FakeSlurm(missing=True)
    app = app_on(fake)
    async with app.run_test(size=SIZE) as pilot:
        screen = await home_data.wait_polled(pilot)
        assert not screen.snapshot.slurm_found
        assert status(pilot).endswith("— d: demo · l: launch locally · p: replay a file")
        assert "no Slurm here" in text_of(screen.query_one("#jobs-header", Static))
        assert table(pilot).row_count == 0
        assert not screen.query_one("#cluster").display
        # d: the demo's dashboard (simulated GPUs)
        await pilot.press("d")
        await home_data.wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen), "the demo")
        assert sources[-1].kwargs == {"simulated": True, "title": "demo"}
        await pilot.press("escape")
        await home_data.wait_for(pilot, lambda: app.screen is screen, "the jobs list")
        # l: the form launches on this machine
        form = await open_launch(pilot)
        assert form.form.where == "local"
        assert form.query_one("#f-where", Select).value == "local"
        assert "launch locally (no Slurm here)" in text_of(form.query_one("#launch-header", Static))
        await pilot.press("escape")
        assert app.screen is screen
        # p: a training log replayed
        await pilot.press("p")
        assert isinstance(app.screen, PromptScreen)
        app.screen.query_one(Input).value = "train.log"
        await pilot.press("enter")
        await home_data.wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen), "the replay")
        assert app.screen.source.kind == "replay"
        await pilot.press("escape")
        await home_data.wait_for(pilot, lambda: app.screen is screen, "the jobs list")
        # p with a file that is not there: one line, no dashboard
        await pilot.press("p")
        app.screen.query_one(Input).value = "missing.jsonl"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen
        assert status(pilot).startswith("no such file: missing.jsonl")


async def test_q_quits_without_touching_jobs(folder, cancels):
    fake = sample()
    app = app_on(fake)
    async with app.run_test(size=SIZE) as pilot:
        await home_data.wait_polled(pilot)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value == 0
    assert cancels == []
    assert {argv[0] for argv in fake.calls} <= {"scontrol", "squeue", "sacct", "sinfo"}
    assert not any(argv[:2] == ["scontrol", "write"] for argv in fake.calls)


def test_fake_slurm_answers_like_slurm():
    """The fake's lines parse with gputui's own parsers (guards the generated data)."""
    from gputui.slurm.jobs import parse_squeue
    from gputui.slurm.sacct import parse_sacct

    assert len(parse_squeue(home_data.many_squeue())) == home_data.MANY
    assert [j.job_id for j in parse_squeue(home_data.ARRAY_SQUEUE)][:3] == ["300_0", "300_1", "300_2"]
    assert [j.state for j in parse_sacct(home_data.SAMPLE_SACCT)] == ["FAILED", "CANCELLED", "COMPLETED"]
    res = FakeSlurm("x")(["squeue"], 1.0)
    assert isinstance(res, subprocess.CompletedProcess) and res.stdout == "x"
