"""``gputui export RUN... --to csv|tensorboard|mlflow DIR``: a run's record stream for the tools users already
look at (``docs/analysis.md``). Per RUN a folder ``DIR/<run>/``:

- ``csv``: ``metrics.csv`` (one row per metric record), ``gpus.csv`` (one row per GPU sample, the system
  metrics) and ``epochs.csv`` (the per-epoch table of ``gputui parse``);
- ``tensorboard``: event files written by tensorboardX (the optional extra ``gputui[tensorboard]``, no
  TensorFlow): each metric under its canonical name at its step (else its epoch, else its order), with
  the record's time; GPU samples as ``system/<host>/gpu<index>/<field>``.

- ``mlflow``: one MLflow run per RUN in DIR, an MLflow store (:mod:`gputui.commands.export_mlflow`).
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import sys

from gputui.commands.report import RunError, file_records, run_files
from gputui.logs.epochs import EpochTable
from gputui.output import WriteFailed, open_output

METRIC_FIELDS = ("time", "name", "value", "step", "epoch", "epoch_base", "rank", "scope", "source", "job")
GPU_FIELDS = ("time", "host", "gpu_id", "index", "name", "util_gpu_pct", "util_mem_bw_pct", "mem_used_bytes")
GPU_FIELDS += ("mem_total_bytes", "temp_c", "power_w", "energy_j", "clock_sm_mhz", "clock_mem_mhz")
GPU_FIELDS += ("simulated",)
SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def export_csv(run: str, folder: str) -> dict[str, int]:
    """Write the three files of one RUN into ``folder``; returns the rows written per file."""
    _make_folder(folder)
    table = EpochTable()
    counts = {"metrics.csv": 0, "gpus.csv": 0, "epochs.csv": 0}
    with (
        open_output(os.path.join(folder, "metrics.csv"), newline="", encoding="utf-8") as mf,
        open_output(os.path.join(folder, "gpus.csv"), newline="", encoding="utf-8") as gf,
    ):
        metrics = csv.DictWriter(mf, METRIC_FIELDS, extrasaction="ignore")
        gpus = csv.DictWriter(gf, GPU_FIELDS, extrasaction="ignore")
        metrics.writeheader()
        gpus.writeheader()
        for path in run_files(run):
            for record in file_records(path):
                table.add(record)
                if record.kind == "metric":
                    metrics.writerow({"time": record.time, **record.fields})
                    counts["metrics.csv"] += 1
                elif record.kind == "gpu":
                    gpus.writerow({"time": record.time, **record.fields})
                    counts["gpus.csv"] += 1
    rows = table.rows()
    names = list(dict.fromkeys(n for row in rows for n in row.values))
    with open_output(os.path.join(folder, "epochs.csv"), newline="", encoding="utf-8") as ef:
        epochs = csv.writer(ef)
        epochs.writerow(["run", "rank", "epoch", "epoch_time_s", "images_per_s", *names])
        for row in rows:
            values = [row.values.get(n, "") for n in names]
            epochs.writerow([row.run, row.rank, row.epoch, row.epoch_time_s, row.images_per_s, *values])
            counts["epochs.csv"] += 1
    return counts


def _make_folder(folder: str) -> None:
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise WriteFailed(folder, exc) from None


def metric_step(fields: dict, order: dict[str, int]) -> int:
    """A metric's step: its step, else its epoch, else its position among the values of its name."""
    step = fields.get("step")
    if isinstance(step, int | float) and not isinstance(step, bool):
        return int(step)
    epoch = fields.get("epoch")
    if isinstance(epoch, int | float) and not isinstance(epoch, bool):
        return int(epoch)
    name = fields["name"]
    order[name] = order.get(name, -1) + 1
    return order[name]


GPU_SCALARS = ("util_gpu_pct", "util_mem_bw_pct", "mem_used_bytes", "temp_c", "power_w", "energy_j")


class _EventFile:
    """One TensorBoard event file written in this thread (tensorboardX's SummaryWriter writes in a thread
    of its own, which dies on a full disk and leaves the caller waiting on its queue for ever): a failed
    write is a WriteFailed naming ``folder``."""

    def __init__(self, folder: str) -> None:
        from tensorboardX.event_file_writer import EventsWriter
        from tensorboardX.proto.event_pb2 import Event
        from tensorboardX.summary import scalar

        self.folder, self._event, self._scalar = folder, Event, scalar
        _make_folder(folder)
        self._writer = self._guard(EventsWriter, os.path.join(folder, "events"))

    def _guard(self, call, *args):
        try:
            return call(*args)
        except OSError as exc:
            raise WriteFailed(self.folder, exc) from None

    def add_scalar(self, tag: str, value: float, step: int, walltime: float) -> None:
        event = self._event(wall_time=walltime, step=int(step), summary=self._scalar(tag, value))
        self._guard(self._writer.write_event, event)

    def close(self) -> None:
        self._guard(self._writer.close)


def export_tensorboard(run: str, folder: str) -> dict[str, int]:
    """Write one RUN's metrics and GPU samples as TensorBoard event files in ``folder``."""
    try:
        import tensorboardX  # noqa: F401 - the extra's presence, before any file is made
    except ImportError as exc:
        raise RunError("--to tensorboard needs tensorboardX: pip install 'gputui[tensorboard]'") from exc
    counts = {"metric values": 0, "GPU samples": 0}
    order: dict[str, int] = {}
    gpu_steps: dict[tuple[str, str], int] = {}
    writer = _EventFile(folder)
    try:
        for path in run_files(run):
            for record in file_records(path):
                f = record.fields
                if record.kind == "metric" and isinstance(f.get("value"), int | float):
                    writer.add_scalar(f["name"], f["value"], metric_step(f, order), record.time)
                    counts["metric values"] += 1
                elif record.kind == "gpu":
                    key = (str(f.get("host")), str(f.get("index", f.get("gpu_id"))))
                    step = gpu_steps[key] = gpu_steps.get(key, -1) + 1
                    for field in GPU_SCALARS:
                        value = f.get(field)
                        if isinstance(value, int | float) and not isinstance(value, bool):
                            tag = f"system/{key[0]}/gpu{key[1]}/{field}"
                            writer.add_scalar(tag, value, step, record.time)
                    counts["GPU samples"] += 1
    finally:
        writer.close()
    return counts


def main(args: argparse.Namespace) -> int:
    if len(args.paths) < 2:
        print("gputui: error: give RUN... then DIR: gputui export RUN... --to FORMAT DIR", file=sys.stderr)
        return 2
    runs, target = args.paths[:-1], args.paths[-1]
    if args.to == "mlflow":
        from gputui.commands.export_mlflow import export_mlflow

        export = export_mlflow
    else:
        export = export_csv if args.to == "csv" else export_tensorboard
    for run in runs:
        folder = os.path.join(target, SAFE.sub("_", os.path.basename(run.rstrip("/"))) or "run")
        if args.to == "mlflow":
            folder = target  # one store, one MLflow run per RUN
        try:
            counts = export(run, folder)
        except RunError as exc:
            print(f"gputui: error: {exc}", file=sys.stderr)
            return 1
        except OSError as exc:  # reading the RUN (a failed write is WriteFailed: gputui.cli names the file)
            print(f"gputui: error: cannot read {run}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        written = ", ".join(f"{name}: {rows}" for name, rows in counts.items())
        print(f"{run} → {folder}: {written}")
    return 0
