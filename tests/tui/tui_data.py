"""Deterministic record files (and one plain training log) for the dashboard's TUI tests.

Every builder writes into ``folder`` and returns the file names it wrote, relative to ``folder``: the
tests run with ``folder`` as the working directory, so the paths the dashboard shows (the log pane's
title, an error line) do not depend on pytest's temporary directory. Times start at :data:`T0` and every
value is a function of the sample index: no randomness, no wall clock.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import keras_log
from textual.pilot import Pilot

from gputui.config import Config
from gputui.sources.replay import ReplaySource
from gputui.stream.io import encode_record
from gputui.stream.records import Record, event, gpu_sample, host_sample, metric
from gputui.tui.app import GputuiApp
from gputui.tui.screens.dashboard import DashboardScreen

T0 = 1_800_000_000.0
GIB = 1024**3
A100 = "NVIDIA A100-SXM4-80GB"
MI250X = "AMD Instinct MI250X"


def write_records(path: Path, records: Iterable[Record]) -> None:
    """Write ``records`` as JSON lines, in time order (stable for equal times)."""
    ordered = sorted(records, key=lambda r: r.time)
    path.write_bytes(b"".join(encode_record(r) for r in ordered))


def _nvidia(host: str, index: int, t: float, util: float, *, mem_gib: float = 40.0, **values) -> Record:
    return gpu_sample(
        host=host,
        gpu_id=f"GPU-{host}-{index:02d}-5f2c1e0a",
        vendor="nvidia",
        source="nvml",
        time=t,
        index=index,
        name=A100,
        simulated=False,
        util_gpu_pct=util,
        mem_used_bytes=int(mem_gib * GIB),
        mem_total_bytes=80 * GIB,
        temp_c=55 + (index % 4) * 3,
        power_w=250.0 + util,
        power_limit_w=400.0,
        **values,
    )


def _probe_started(host: str, gpus: int, t: float = T0) -> Record:
    return event(
        "probe_started",
        message=f"gputui probe on {host} (nvml, {gpus} GPUs)",
        time=t,
        host=host,
        backend="nvidia",
        gpus=gpus,
    )


def _training(
    *,
    epochs_done: int,
    steps_per_epoch: int = 20,
    step_s: float = 3.0,
    start: float = T0 + 2.0,
    nan_at_step: int | None = None,
) -> list[Record]:
    """A falling loss by step (scope ``step``), end-of-epoch loss/accuracy/epoch_time_s (scope ``epoch``)."""
    out: list[Record] = [
        event("train_started", message="training started: 10 epochs", time=T0 + 1.0, epochs=10, world_size=2)
    ]
    epoch_times = (64.0, 60.0, 59.0, 61.0)
    t = start
    for epoch in range(1, epochs_done + 1):
        for i in range(1, steps_per_epoch + 1):
            step = (epoch - 1) * steps_per_epoch + i
            t = start + step * step_s
            loss = 2.2 * math.exp(-step / 25.0) + 0.05
            if nan_at_step is not None and step >= nan_at_step:
                loss = math.nan
            out.append(
                metric("loss", loss, step=step, epoch=epoch, epoch_base=1, rank=0, scope="step", time=t)
            )
        end = start + epoch * steps_per_epoch * step_s + 0.5
        loss = 2.2 * math.exp(-epoch * steps_per_epoch / 25.0) + 0.05
        if nan_at_step is not None and epoch * steps_per_epoch >= nan_at_step:
            loss = math.nan
        common = {"epoch": epoch, "epoch_base": 1, "rank": 0, "scope": "epoch", "time": end}
        out.append(metric("loss", loss, **common))
        out.append(metric("accuracy", round(0.55 + 0.1 * epoch, 3), **common))
        out.append(metric("epoch_time_s", epoch_times[epoch - 1], **common))
        out.append(metric("images_per_s", 2000.0 + 100 * epoch, **common))
    return out


def _util(index: int, tick: int) -> float:
    """A busy GPU: 88–99 %, different per GPU and tick, no randomness."""
    return float(88 + (index * 7 + tick * 3) % 12)


# --------------------------------------------------------------------------- scenarios


def one_node(folder: Path) -> list[str]:
    """1 node × 2 A100s, 3 of 10 epochs done, loss falling (184 s of records)."""
    records = [_probe_started("node01", 2), *_training(epochs_done=3)]
    for tick in range(0, 37):
        t = T0 + tick * 5.0
        for index in range(2):
            records.append(_nvidia("node01", index, t, _util(index, tick), mem_gib=60.0 + index * 2))
        records.append(
            host_sample(
                host="node01",
                time=t,
                cpu_pct=20.0 + tick % 5,
                mem_used_bytes=64 * GIB,
                mem_total_bytes=512 * GIB,
            )
        )
    write_records(folder / "train_1node.jsonl", records)
    return ["train_1node.jsonl"]


def two_nodes(folder: Path) -> list[str]:
    """2 nodes × 4 A100s, one epoch of metrics."""
    records = [_probe_started("node01", 4), _probe_started("node02", 4), *_training(epochs_done=1)]
    for tick in range(0, 13):
        t = T0 + tick * 5.0
        for n, host in enumerate(("node01", "node02")):
            for index in range(4):
                records.append(_nvidia(host, index, t, _util(index + 4 * n, tick), mem_gib=50.0 + index))
    write_records(folder / "train_2node.jsonl", records)
    return ["train_2node.jsonl"]


def big_job(folder: Path) -> list[str]:
    """64 nodes × 8 A100s (too many rows: the pane rolls nodes up); node17 lags (a straggler)."""
    records: list[Record] = [*_training(epochs_done=1)]
    hosts = [f"gpu{n:03d}" for n in range(64)]
    for tick in range(0, 13):
        t = T0 + tick * 5.0
        for n, host in enumerate(hosts):
            for index in range(8):
                util = 40.0 + index if host == "gpu017" else _util(index + n, tick)
                records.append(_nvidia(host, index, t, util, mem_gib=60.0))
    write_records(folder / "train_64node.jsonl", records)
    return ["train_64node.jsonl"]


def amd_mi250x(folder: Path) -> list[str]:
    """1 node, 4 MI250X = 8 GCDs; the even GCD of each package reports the package's power."""
    records: list[Record] = [*_training(epochs_done=1)]
    for tick in range(0, 13):
        t = T0 + tick * 5.0
        for gcd in range(8):
            package = gcd // 2
            power: dict = (
                {"power_w": 380.0 + package * 10 + tick % 3, "power_scope": "package"}
                if gcd % 2 == 0
                else {"missing": {"power_w": "secondary_die"}}
            )
            records.append(
                gpu_sample(
                    host="frontier01",
                    gpu_id=f"0000:{0xC1 + gcd:02x}:00.0",
                    vendor="amd",
                    source="sysfs",
                    time=t,
                    index=gcd,
                    name=MI250X,
                    simulated=False,
                    package_id=f"pkg{package}",
                    util_gpu_pct=_util(gcd, tick),
                    mem_used_bytes=48 * GIB,
                    mem_total_bytes=64 * GIB,
                    temp_c=45.0 + gcd,
                    **power,
                )
            )
    write_records(folder / "mi250x.jsonl", records)
    return ["mi250x.jsonl"]


def lost_node(folder: Path) -> list[str]:
    """2 nodes × 2 GPUs; node02 stops reporting at +30 s and is declared lost at +60 s."""
    records: list[Record] = [*_training(epochs_done=1)]
    for tick in range(0, 13):
        t = T0 + tick * 5.0
        for n, host in enumerate(("node01", "node02")):
            if host == "node02" and t > T0 + 30:
                continue
            for index in range(2):
                records.append(_nvidia(host, index, t, _util(index + 2 * n, tick)))
    records.append(
        event(
            "node_lost",
            message="node02: no sample for 30 s (probe step gone)",
            time=T0 + 60.0,
            host="node02",
        )
    )
    write_records(folder / "lost_node.jsonl", records)
    return ["lost_node.jsonl"]


def nan_loss(folder: Path) -> list[str]:
    """1 node × 2 GPUs; the loss turns NaN at step 45 (epoch 3)."""
    records = [_probe_started("node01", 2), *_training(epochs_done=3, nan_at_step=45)]
    for tick in range(0, 37):
        t = T0 + tick * 5.0
        for index in range(2):
            records.append(_nvidia("node01", index, t, _util(index, tick)))
    write_records(folder / "nan_loss.jsonl", records)
    return ["nan_loss.jsonl"]


def idle_gpu(folder: Path) -> list[str]:
    """A running job on 1 node × 4 GPUs; GPU 2 idles (0 %) from +30 s to the end at +240 s."""
    records: list[Record] = [
        event("job_state", message="job RUNNING", time=T0, state="RUNNING"),
        *_training(epochs_done=3, step_s=4.0),
    ]
    for tick in range(0, 49):
        t = T0 + tick * 5.0
        for index in range(4):
            util = 0.0 if index == 2 and t >= T0 + 30 else _util(index, tick)
            records.append(_nvidia("node01", index, t, util))
    write_records(folder / "idle_gpu.jsonl", records)
    return ["idle_gpu.jsonl"]


def simulated(folder: Path) -> list[str]:
    """1 node × 2 simulated GPUs (``source: sim``, ``simulated: true``)."""
    records: list[Record] = [*_training(epochs_done=1)]
    for tick in range(0, 13):
        t = T0 + tick * 5.0
        for index in range(2):
            records.append(
                gpu_sample(
                    host="localhost",
                    gpu_id=f"SIM-{index}",
                    vendor="nvidia",
                    source="sim",
                    time=t,
                    index=index,
                    name="Simulated GPU",
                    simulated=True,
                    util_gpu_pct=_util(index, tick),
                    mem_used_bytes=8 * GIB,
                    mem_total_bytes=16 * GIB,
                    temp_c=50.0,
                    power_w=150.0,
                )
            )
    write_records(folder / "sim.jsonl", records)
    return ["sim.jsonl"]


LOG_LINES = ["Starting training on 1 GPU", *keras_log.LINES, "Training finished"]


def training_log(folder: Path) -> list[str]:
    """A plain (Keras verbose=2 style) training log with known lines; its mtime is fixed (replay lays
    untimed log records out one per second ending at the file's mtime)."""
    path = folder / "train.log"
    path.write_text("\n".join(LOG_LINES) + "\n", encoding="utf-8")
    os.utime(path, (T0 + 100.0, T0 + 100.0))
    return ["train.log"]


def missing(folder: Path) -> list[str]:
    """A file that does not exist."""
    return ["missing.jsonl"]


# --------------------------------------------------------------------------- driving the app


def make_app(names: list[str]) -> GputuiApp:
    """The dashboard app on a follow-mode replay of ``names`` (as ``gputui replay`` builds it)."""
    config = Config()
    return GputuiApp(ReplaySource(names, config.alerts), config)


def dashboard(app: GputuiApp) -> DashboardScreen:
    """The app's DashboardScreen (also while a modal screen is on top of it)."""
    return next(s for s in app.screen_stack if isinstance(s, DashboardScreen))


async def wait_loaded(pilot: Pilot, timeout: float = 10.0) -> DashboardScreen:
    """Wait until the replay handed over its state and cursor (or the source ended: an error case),
    then redraw everything, charts included (they otherwise redraw at most once a second)."""
    screen = dashboard(pilot.app)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = screen.state
        if (state.records and state.cursor is not None) or screen.finished:
            break
        await pilot.pause(0.05)
    else:
        raise AssertionError("the replay did not load in time")
    await pilot.pause()
    screen.refresh_view(force=True)
    await pilot.pause()
    return screen


async def wait_for(
    pilot: Pilot, condition: Callable[[], object], what: str = "condition", timeout: float = 10.0
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)
