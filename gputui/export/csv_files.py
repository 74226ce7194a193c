"""``gputui export RUN --to csv``: one RUN as three CSV files in its folder: ``metrics.csv`` (one row per
metric record), ``gpus.csv`` (one row per GPU sample, the system metrics) and ``epochs.csv`` (the
per-epoch table of ``gputui parse``)."""

from __future__ import annotations

import csv
import os

from gputui.export import make_folder
from gputui.logs.epochs import EpochTable
from gputui.output import open_output
from gputui.sources.inputs import run_records

METRIC_FIELDS = ("time", "name", "value", "step", "epoch", "epoch_base", "rank", "scope", "source", "job")
GPU_FIELDS = ("time", "host", "gpu_id", "index", "name", "util_gpu_pct", "util_mem_bw_pct", "mem_used_bytes")
GPU_FIELDS += ("mem_total_bytes", "temp_c", "power_w", "energy_j", "clock_sm_mhz", "clock_mem_mhz")
GPU_FIELDS += ("simulated",)


def export_csv(run: str, folder: str) -> dict[str, int | str]:
    """Write the three files of one RUN into ``folder``; returns the rows written per file."""
    records = run_records(run)  # the RUN resolved before anything is written
    make_folder(folder)
    table = EpochTable()
    metric_rows = gpu_rows = 0
    with (
        open_output(os.path.join(folder, "metrics.csv"), newline="", encoding="utf-8") as mf,
        open_output(os.path.join(folder, "gpus.csv"), newline="", encoding="utf-8") as gf,
    ):
        metrics = csv.DictWriter(mf, METRIC_FIELDS, extrasaction="ignore")
        gpus = csv.DictWriter(gf, GPU_FIELDS, extrasaction="ignore")
        metrics.writeheader()
        gpus.writeheader()
        for record in records:
            table.add(record)
            if record.kind == "metric":
                metrics.writerow({"time": record.time, **record.fields})
                metric_rows += 1
            elif record.kind == "gpu":
                gpus.writerow({"time": record.time, **record.fields})
                gpu_rows += 1
    rows = table.rows()
    names = list(dict.fromkeys(n for row in rows for n in row.values))
    with open_output(os.path.join(folder, "epochs.csv"), newline="", encoding="utf-8") as ef:
        epochs = csv.writer(ef)
        epochs.writerow(["run", "rank", "epoch", "epoch_time_s", "images_per_s", *names])
        for row in rows:
            values = [row.values.get(n, "") for n in names]
            epochs.writerow([row.run, row.rank, row.epoch, row.epoch_time_s, row.images_per_s, *values])
    return {"metrics.csv": metric_rows, "gpus.csv": gpu_rows, "epochs.csv": len(rows)}
