"""Teaching a log format on an attached job (issue 22.5): the real AttachSource and dashboard, the fake
``srun``/``scontrol`` of tests/fakes/slurm, the real ``gputui probe`` on sim.

The job's output is in a format the extractor does not read (the log of ``tests/logs/test_taught.py``):
the training pane counts its lines as not read; ``T``, the line's numbers named, ``enter``: the pattern is
stored in the settings file and the attacher parses the output again from its start while the job runs.
Every step's loss is read once (no step twice), the log pane's text is not repeated, and what the job
writes afterwards is read with the pattern too.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_slurm import NODES, FakeSlurm, job
from test_fake_slurm_attach_text import attach_app, screen, wait_until
from textual.widgets import Input, Static

from gputui.config import load_config
from gputui.logs.formats import taught
from gputui.tui.screens.teach import TeachScreen

sys.path.insert(0, str(Path(__file__).parent.parent / "logs"))
from test_taught import PATTERN, STEPS, _loss, write_log

SIZE = (120, 36)
READ = range(100, STEPS + 1, 100)


@pytest.fixture(autouse=True)
def no_patterns() -> Iterator[None]:
    taught.TEACHING.configure([])
    yield
    taught.TEACHING.configure([])


@pytest.fixture
def output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The job's output (the unknown format), named by the fake ``scontrol``; a temporary settings file."""
    out = write_log(tmp_path / "slurm-3.out")
    with out.open("a") as f:  # lines the extractor reads: read before the pattern, and not twice after
        f.writelines(f"step {s} | lr {s / 1e6:.6f} | grad_norm {1 + s / 1000:.3f}\n" for s in READ)
    monkeypatch.setenv("GPUTUI_CONFIG", str(tmp_path / "config.toml"))
    fake = FakeSlurm(tmp_path, monkeypatch).set("scontrol show job", job(stdout=str(out)))
    fake.set("srun", {"nodes": NODES})
    yield out
    fake.close()


def pane(pilot) -> str:
    screen(pilot).refresh_view(force=True)
    return str(screen(pilot).query_one("#epoch-lines", Static).render())


async def test_a_pattern_taught_on_an_attached_job_reads_its_output_again(output: Path) -> None:
    seen: dict[int, int] = {}  # step → how many loss records the dashboard got for it
    app = attach_app()
    async with app.run_test(size=SIZE) as pilot:
        dash = screen(pilot)
        await wait_until(pilot, lambda: pane(pilot).startswith("3,000 lines in 1 shape not read"), "unread")
        await wait_until(pilot, lambda: "grad_norm" in dash.state.training.metrics, "the lines it reads")
        log_text = dash.state.logs[str(output)].view()
        assert dash.state.training.metrics["grad_norm"].by_step.times == list(READ)
        await pilot.press("T")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, TeachScreen), "the dialog")
        dialog = pilot.app.screen
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(dialog.query("#teach-names Input")) == 3, "the name boxes")
        for box, name in zip(
            dialog.query("#teach-names Input").results(Input), ["step", "loss", "step_time_ms"], strict=True
        ):
            box.value = name
        await pilot.pause()
        tap = dash.feed._tap  # counts the loss records the state gets (after the forget: none twice)
        dash.feed._tap = lambda records: [
            seen.__setitem__(r["step"], seen.get(r["step"], 0) + 1)
            for r in records
            if r.kind == "metric" and r["name"] == "loss"
        ]
        await pilot.press("enter")
        # not ``step == STEPS``: the grad_norm lines already reach step 3,000 before the output is read again
        await wait_until(
            pilot,
            lambda: (
                not dash.state.training.unread
                and "loss" in dash.state.training.metrics
                and dash.state.training.metrics["loss"].last == _loss(STEPS)
            ),
            "the output read again",
        )
        assert dash.state.training.step == STEPS
        assert (load_config().patterns[0].pattern, load_config().patterns[0].where) == (
            PATTERN,
            str(output.parent),
        )
        assert "not read" not in pane(pilot)
        assert dash.state.training.metrics["loss"].last == _loss(STEPS)
        assert dash.state.training.metrics["grad_norm"].by_step.times == list(READ)  # replaced, not doubled
        assert dash.state.logs[str(output)].view() == log_text
        with output.open("a") as f:
            f.write("[3001] => 2.9000 @ 300ms\n")
        await wait_until(pilot, lambda: dash.state.training.step == 3001, "the next line read with it")
        assert dash.state.training.metrics["loss"].last == 2.9
        assert seen == dict.fromkeys(range(1, 3002), 1)
        dash.feed._tap = tap
