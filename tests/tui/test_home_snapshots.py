"""SVG snapshots of the jobs home screen (``gputui``), its launch form and its dialogs.

The poller's runner is ``home_data.FakeSlurm``: recorded Slurm 22.05 outputs plus generated ``squeue -O``
and ``sacct`` lines, so no Slurm is called. The header's time of the squeue answer is pinned (UTC), the
settings and state paths are relative to the test's folder. Before a snapshot the test waits until the
poll's answer is drawn. Update with ``pytest tests/tui --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import home_data
import pytest
from home_data import FakeSlurm
from textual.pilot import Pilot
from textual.widgets import Input

from gputui.config import load_config_or_defaults
from gputui.slurm.commands import SlurmError
from gputui.tui.cost_meter import CostMeter

WIDE = (120, 36)
SMALL = (80, 24)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from home_data.environment(tmp_path, monkeypatch)


def sample() -> FakeSlurm:
    return FakeSlurm(home_data.SAMPLE_SQUEUE, sacct=home_data.SAMPLE_SACCT)


def snap(
    snap_compare,
    fake: FakeSlurm,
    size: tuple[int, int] = WIDE,
    then: Callable[[Pilot], object] | None = None,
    *,
    warning: str | None = None,
    config=None,
) -> bool:
    app = home_data.make_app(fake, config, warning=warning)

    async def run_before(pilot: Pilot) -> None:
        await home_data.wait_polled(pilot)
        if then is not None:
            await then(pilot)
        await pilot.pause()

    return snap_compare(app, terminal_size=size, run_before=run_before)


async def type_into(pilot: Pilot, selector: str, text: str) -> None:
    """Set a launch-form field as if typed (the form follows Input.Changed either way; keys are slow)."""
    box = pilot.app.screen.query_one(selector, Input)
    box.focus()
    box.value = text
    box.cursor_position = len(text)
    await pilot.pause()


async def to_row(pilot: Pilot, key: str) -> None:
    """Move the table's cursor to the row with ``key``."""
    screen = home_data.jobs_screen(pilot.app)
    keys = [r.key for r in screen.query_one("#jobs").rows_shown]
    screen.query_one("#jobs").move_cursor(row=keys.index(key), animate=False)
    await pilot.pause()


# --------------------------------------------------------------------------- the jobs list


def test_jobs_list(snap_compare, folder):
    """Array 25 grouped, running/configuring/pending jobs, three ended jobs from sacct (failed with its
    exit code, cancelled, completed), the cluster pane with debug, gpu and long."""
    assert snap(snap_compare, sample())


def test_jobs_list_small_terminal(snap_compare, folder):
    assert snap(snap_compare, sample(), size=SMALL)


def test_empty_list(snap_compare, folder):
    """No jobs: 'no jobs' in the header, the hint below the table, the cluster pane still there."""
    assert snap(snap_compare, FakeSlurm("", sacct=""))


def test_200_jobs(snap_compare, folder):
    """200 jobs, accounting disabled (the dim line says ended jobs are kept only while Slurm remembers)."""
    assert snap(snap_compare, FakeSlurm(home_data.many_squeue(), sacct=home_data.sacct_disabled()))


def test_array_job_grouped(snap_compare, folder):
    """Array 300: a group row with its counts, three running and two completed tasks, and the five
    pending tasks folded into one row 300_[5-9]."""
    assert snap(snap_compare, FakeSlurm(home_data.ARRAY_SQUEUE))


def test_filter_active(snap_compare, folder):
    """'/ bert' narrows the list to one row; the filter box stays and the header names the filter."""

    async def filter_bert(pilot: Pilot) -> None:
        await pilot.press("slash", *"bert", "enter")

    assert snap(snap_compare, sample(), then=filter_bert)


def test_squeue_fails_after_good_poll(snap_compare, folder):
    """The second squeue times out: the last good table stays, one red line says why."""
    fake = sample()

    async def fail(pilot: Pilot) -> None:
        fake.squeue = home_data.squeue_failed()
        await pilot.press("r")
        await home_data.wait_polled(pilot, squeue_calls=2)

    assert snap(snap_compare, fake, then=fail)


def test_squeue_raises_after_good_poll_small(snap_compare, folder):
    """The second squeue cannot run at all (a SlurmError): same, in 80 × 24."""
    fake = sample()

    async def fail(pilot: Pilot) -> None:
        fake.squeue = SlurmError("squeue: timed out after 10 s")
        await pilot.press("r")
        await home_data.wait_polled(pilot, squeue_calls=2)

    assert snap(snap_compare, fake, size=SMALL, then=fail)


def test_malformed_settings_file(snap_compare, folder):
    """A bad value on line 3 of the settings file: defaults in use, a warning naming the line."""
    (folder / "config.toml").write_text('[jobs]\nrefresh_s = 5\nended_hours = "a day"\n', encoding="utf-8")
    config, warning = load_config_or_defaults()
    assert warning is not None and warning.startswith("config.toml:3: jobs.ended_hours")
    assert snap(snap_compare, sample(), config=config, warning=warning)


def test_settings_screen_malformed_file(snap_compare, folder):
    """S after a broken settings file: the file is named as NOT in use, with the reason; defaults shown."""
    (folder / "config.toml").write_text('[jobs]\nrefresh_s = 5\nended_hours = "a day"\n', encoding="utf-8")
    config, warning = load_config_or_defaults()

    async def settings(pilot: Pilot) -> None:
        await pilot.press("S")

    assert snap(snap_compare, sample(), config=config, warning=warning, then=settings)


def test_slurm_not_installed(snap_compare, folder):
    """No Slurm: 'no Slurm here' and the line that says d, l and p still work."""
    assert snap(snap_compare, FakeSlurm(missing=True))


def test_slurm_not_installed_launch_locally(snap_compare, folder):
    """No Slurm, l: the form launches on this machine (one choice in 'run on', local preview)."""

    async def launch(pilot: Pilot) -> None:
        await pilot.press("l")
        await type_into(pilot, "#f-command", "python train.py")
        await type_into(pilot, "#f-gpus_per_node", "2")

    assert snap(snap_compare, FakeSlurm(missing=True), then=launch)


# --------------------------------------------------------------------------- dialogs and screens


def test_cancel_confirmation(snap_compare, folder):
    async def cancel(pilot: Pilot) -> None:
        await to_row(pilot, "24")
        await pilot.press("c")

    assert snap(snap_compare, sample(), then=cancel)


def test_signal_choice(snap_compare, folder):
    async def signal(pilot: Pilot) -> None:
        await to_row(pilot, "22")
        await pilot.press("s")

    assert snap(snap_compare, sample(), then=signal)


def test_help_screen(snap_compare, folder):
    async def help_(pilot: Pilot) -> None:
        # the app's own cost, from a meter on a fixed clock: 15 kB and 0.2 s of CPU over 10 s
        wall, cpu = [0.0], [0.0]
        meter = CostMeter(clock=lambda: wall[0], cpu_clock=lambda: cpu[0])
        meter.count("x" * 15_000)
        wall[0], cpu[0] = 10.0, 0.2
        pilot.app.cost_meter = meter
        await pilot.press("question_mark")

    assert snap(snap_compare, sample(), then=help_)


def test_settings_screen(snap_compare, folder):
    async def settings(pilot: Pilot) -> None:
        await pilot.press("S")

    assert snap(snap_compare, sample(), then=settings)


# --------------------------------------------------------------------------- the launch form


async def fill_valid(pilot: Pilot) -> None:
    await pilot.press("l")
    await type_into(pilot, "#f-command", "python train.py --epochs 3")
    await type_into(pilot, "#f-job_name", "resnet")
    await type_into(pilot, "#f-nodes", "2")
    await type_into(pilot, "#f-gpus_per_node", "4")
    await type_into(pilot, "#f-time", "01:00:00")
    await type_into(pilot, "#f-partition", "gpu")


def test_launch_form_valid_preview(snap_compare, folder):
    """A filled-in form: the batch script on the right (#SBATCH lines for 2 nodes × 4 GPUs)."""
    assert snap(snap_compare, sample(), then=fill_valid)


def test_launch_form_errors(snap_compare, folder):
    """nodes 0 and time '1h', then ctrl+s: messages beside both fields, 'nothing submitted'."""

    async def bad(pilot: Pilot) -> None:
        await fill_valid(pilot)
        await type_into(pilot, "#f-nodes", "0")
        await type_into(pilot, "#f-time", "1h")
        await pilot.press("ctrl+s")

    assert snap(snap_compare, sample(), then=bad)


def test_launch_form_small_terminal(snap_compare, folder):
    assert snap(snap_compare, sample(), size=SMALL, then=fill_valid)
