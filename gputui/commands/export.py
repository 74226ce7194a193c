"""``gputui export RUN... --to csv|tensorboard|mlflow DIR``: a run's record stream for the tools users already
look at (``docs/analysis.md``); the exporters are :mod:`gputui.export`. Per RUN a folder ``DIR/<run>/``
(``csv``: ``metrics.csv``, ``gpus.csv``, ``epochs.csv``; ``tensorboard``: event files); ``mlflow``: one
MLflow run per RUN in DIR, an MLflow store or tracking URI.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from gputui.export import exporter
from gputui.sources.inputs import RunError

SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def run_folder(target: str, run: str) -> str:
    """``DIR/<run>``: the RUN's base name, made safe for a folder name."""
    return os.path.join(target, SAFE.sub("_", os.path.basename(run.rstrip("/"))) or "run")


def main(args: argparse.Namespace) -> int:
    if len(args.paths) < 2:
        print("gputui: error: give RUN... then DIR: gputui export RUN... --to FORMAT DIR", file=sys.stderr)
        return 2
    runs, target = args.paths[:-1], args.paths[-1]
    export = exporter(args.to)
    for run in runs:
        folder = target if args.to == "mlflow" else run_folder(target, run)  # mlflow: one store
        try:
            counts = export(run, folder)
        except RunError as exc:  # a failed write is WriteFailed: gputui.cli names the file
            print(f"gputui: error: {exc}", file=sys.stderr)
            return 1
        written = ", ".join(f"{name}: {rows}" for name, rows in counts.items())
        print(f"{run} → {folder}: {written}")
    return 0
