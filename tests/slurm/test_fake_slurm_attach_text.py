"""The attached dashboard (``gputui attach``: the real AttachSource and screen, fake ``srun``/``scontrol``
of tests/fakes/slurm, the real ``gputui probe`` on sim) never loses the job's text (issue 21 part 6): a
``Train Epoch: 7`` line moves the header to epoch 7, a deleted output file is said in the log pane while
what the job still writes is shown, and an output over 4 MiB ending in a huge unfinished progress bar
shows the bar's latest frame and the lines before it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_slurm import NODES, FakeSlurm, job
from textual.pilot import Pilot
from textual.widgets import Static

from gputui.config import Config
from gputui.logs.catchup import TAIL_BYTES
from gputui.logs.follower import DEFAULT_MAX_BYTES
from gputui.slurm.attach import AttachOptions
from gputui.sources.attach import AttachSource
from gputui.tui.app import GputuiApp
from gputui.tui.screens.dashboard import DashboardScreen
from gputui.tui.widgets.log_pane import LogPane

SIZE = (120, 36)
DEADLINE = 30.0  # polls between frames; a loaded CI machine re-reads 3,000 lines slower


@pytest.fixture
def output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The job's output file, named by the fake ``scontrol show job``; the fake ``srun`` streams sim."""
    out = tmp_path / "slurm-3.out"
    fake = FakeSlurm(tmp_path, monkeypatch).set("scontrol show job", job(stdout=str(out)))
    fake.set("srun", {"nodes": NODES})
    yield out
    fake.close()


def attach_app() -> GputuiApp:
    options = AttachOptions(backend="sim", interval=0.2, pending_poll_s=0.1, log_poll_s=0.1)
    return GputuiApp(AttachSource("3", options), Config())


def screen(pilot: Pilot) -> DashboardScreen:
    return next(s for s in pilot.app.screen_stack if isinstance(s, DashboardScreen))


def header(pilot: Pilot) -> str:
    screen(pilot).refresh_view(force=True)
    return str(screen(pilot).query_one("#header", Static).render())


def banner(pilot: Pilot) -> str:
    screen(pilot).refresh_view(force=True)
    return str(screen(pilot).query_one("#banner", Static).render())


def pane_lines(pilot: Pilot) -> list[str]:
    return str(screen(pilot).query_one(LogPane).render()).splitlines()


async def wait_until(pilot: Pilot, condition, what: str) -> None:
    """Poll ``condition`` between the app's frames until it holds (a deadline, no fixed sleep)."""
    for _ in range(int(DEADLINE / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what}; header: {header(pilot)!r}; log: {pane_lines(pilot)}")


def train_lines(epoch: int) -> bytes:
    return "".join(
        f"Train Epoch: {epoch} [{640 * i}/60000 ({i}%)]\tLoss: 0.{i}00000\n" for i in range(3)
    ).encode()


async def test_a_train_epoch_7_line_moves_the_header_to_epoch_7(output: Path) -> None:
    output.write_bytes(train_lines(1))
    app = attach_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "  epoch 1" in header(pilot), "epoch 1 in the header")
        with open(output, "ab") as job_stdout:
            job_stdout.write(b"".join(train_lines(epoch) for epoch in range(2, 8)))
        await wait_until(pilot, lambda: "  epoch 7" in header(pilot), "epoch 7 in the header")
        assert str(screen(pilot).query_one("#epoch-lines", Static).render()).startswith("epoch 7 (0 done)")


async def test_a_deleted_output_is_said_and_what_the_job_still_writes_is_shown(output: Path) -> None:
    with open(output, "wb", buffering=0) as job_stdout:  # the job's stdout, open until it ends
        job_stdout.write(train_lines(1))
        app = attach_app()
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: "  epoch 1" in header(pilot), "epoch 1 in the header")
            output.unlink()
            job_stdout.write(b"Train Epoch: 2 [0/60000 (0%)]\tLoss: 0.100000\n")
            notice = f"── {output} was deleted: showing what is still written to it ──"
            await wait_until(pilot, lambda: pane_lines(pilot)[-2:-1] == [notice], "the deletion notice")
            assert pane_lines(pilot)[-1] == "Train Epoch: 2 [0/60000 (0%)]\tLoss: 0.100000"
            said = "slurm-3.out was deleted: showing what is still written to it"
            await wait_until(pilot, lambda: said in banner(pilot), "the deletion warning in the banner")
            output.write_bytes(b"a requeued run starts again\n")  # a new file at the path is read
            await wait_until(
                pilot, lambda: pane_lines(pilot)[-1] == "a requeued run starts again", "the new file's text"
            )


def bar_frame(n: int) -> str:
    return f" 40%|####      | {n}/99999 [01:{n % 60:02d}<02:00, 9.9it/s]"


async def test_an_output_ending_in_a_huge_unfinished_bar_shows_it_and_the_lines_before(output: Path) -> None:
    head = b"".join(f"worker {i}: data shard {i % 97} loaded\n".encode() for i in range(150_000))
    bar = "".join("\r" + bar_frame(n) for n in range(8000)).encode()
    assert len(head) + len(bar) > DEFAULT_MAX_BYTES and len(bar) > TAIL_BYTES
    output.write_bytes(head + train_lines(7) + bar)
    app = attach_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: pane_lines(pilot)[-1:] == [bar_frame(7999)], "the bar's latest frame")
        assert pane_lines(pilot)[-2] == "Train Epoch: 7 [1280/60000 (2%)]\tLoss: 0.200000"
        assert pane_lines(pilot)[-5] == "worker 149999: data shard 37 loaded"
        with open(output, "ab") as f:
            f.write(("\r" + bar_frame(8000)).encode())
        await wait_until(pilot, lambda: pane_lines(pilot)[-1:] == [bar_frame(8000)], "the bar's next frame")
        assert pane_lines(pilot)[-2] == "Train Epoch: 7 [1280/60000 (2%)]\tLoss: 0.200000"
