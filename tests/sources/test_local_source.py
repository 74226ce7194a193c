"""LocalRunSource: a real command run as local ranks, followed into a dashboard state."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import psutil

from gputui.monitor.state import DashboardState
from gputui.slurm.batch_script import LaunchSpec
from gputui.sources.base import Feed
from gputui.sources.local import LocalRunSource
from gputui.stream.io import format_prefixed
from gputui.stream.records import metric


def python_spec(code: str, ranks: int = 2) -> LaunchSpec:
    return LaunchSpec(cmd=[sys.executable, "-c", code], nodes=1, ntasks_per_node=ranks)


def start(source: LocalRunSource) -> tuple[Feed, threading.Thread, list[BaseException]]:
    feed = Feed()
    errors: list[BaseException] = []

    def target() -> None:
        try:
            source.run(feed)
        except BaseException as exc:  # pragma: no cover - reported by the test
            errors.append(exc)

    thread = threading.Thread(target=target, name="test-local-source", daemon=True)
    thread.start()
    return feed, thread, errors


def finish(source: LocalRunSource, timeout: float = 15.0) -> DashboardState:
    state = source.new_state()
    feed, thread, errors = start(source)
    thread.join(timeout)
    assert not thread.is_alive(), "the local source did not end"
    assert not errors, errors
    return feed.apply(state)


def test_a_command_that_succeeds_ends_completed_with_its_metric_and_output(tmp_path: Path):
    line = format_prefixed(metric("loss", 0.5, step=1, epoch=1))
    code = (
        "import os, sys, time\n"
        "rank = os.environ['RANK']\n"
        "print(f'hello from rank {rank} of {os.environ[\"WORLD_SIZE\"]}')\n"
        f"print({line!r})\n"
        "sys.stdout.flush()\n"
        "time.sleep(0.6)\n"
    )
    source = LocalRunSource(python_spec(code), simulated=True, interval=0.2, folder=tmp_path)
    info = source.job_info()
    assert info.kind == "local" and info.simulated and info.gpus_expected == 2
    state = finish(source)

    assert state.job.state == "COMPLETED"
    assert state.job.ended is not None and state.job.started is not None
    assert state.job.job_id
    assert source.exit_codes == [0, 0]
    assert state.status is not None and state.status.level == "info"

    assert state.board.simulated
    assert len(state.board.gpus) == 2
    assert all(g.simulated for g in state.board.gpus.values())
    assert state.training.metrics["loss"].last == 0.5

    outputs = {Path(p).name: log.view() for p, log in state.logs.items()}
    assert set(outputs) == {"rank-0.out", "rank-1.out"}
    assert "hello from rank 0 of 2" in outputs["rank-0.out"]
    assert "hello from rank 1 of 2" in outputs["rank-1.out"]
    assert (tmp_path / "rank-0.out").exists()


def test_a_failing_command_ends_failed_with_an_error_note(tmp_path: Path):
    code = "import os, sys\nprint('about to fail')\nsys.exit(3 if os.environ['RANK'] == '1' else 0)\n"
    source = LocalRunSource(python_spec(code), simulated=True, interval=0.2, folder=tmp_path)
    state = finish(source)
    assert state.job.state == "FAILED"
    assert source.exit_codes == [0, 3]
    assert state.status is not None
    assert state.status.level == "error"
    assert "rank 1 exited 3" in state.status.message
    assert "rank 0" not in state.status.message
    assert any(n.level == "error" and "rank 1 exited 3" in n.message for n in state.notes)


def test_a_command_that_cannot_start_ends_failed(tmp_path: Path):
    spec = LaunchSpec(cmd=[str(tmp_path / "no-such-program")], nodes=1, ntasks_per_node=1)
    source = LocalRunSource(spec, simulated=True, interval=0.2, folder=tmp_path)
    state = finish(source)
    assert state.job.state == "FAILED"
    assert state.status is not None and state.status.level == "error"
    assert "cannot start the run" in state.status.message


def test_stop_cancels_quickly_and_kills_the_ranks(tmp_path: Path):
    code = "import time\nprint('sleeping', flush=True)\ntime.sleep(30)\n"
    source = LocalRunSource(python_spec(code), simulated=True, interval=0.2, folder=tmp_path)
    state = source.new_state()
    feed, thread, errors = start(source)
    deadline = time.monotonic() + 10
    while (source.run_handle is None or len(source.run_handle.procs) < 2) and time.monotonic() < deadline:
        time.sleep(0.05)
    run = source.run_handle
    assert run is not None and len(run.procs) == 2
    pids = [p.pid for p in run.procs]
    time.sleep(0.5)
    assert all(p.poll() is None for p in run.procs)

    began = time.monotonic()
    source.stop()
    thread.join(10)
    took = time.monotonic() - began
    assert not thread.is_alive()
    assert not errors, errors
    assert took < 5, f"stop took {took:.1f} s"

    state = feed.apply(state)
    assert state.job.state == "CANCELLED"
    assert all(p.poll() is not None for p in run.procs)
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
