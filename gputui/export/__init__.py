"""Exporters: a run's record stream for the tools users already look at (``docs/analysis.md``).

Each exporter is a function ``export(run, target) -> {what: how many}`` over one RUN's records
(:func:`gputui.sources.inputs.run_records`): :mod:`~gputui.export.csv_files` (``metrics.csv``,
``gpus.csv``, ``epochs.csv``), :mod:`~gputui.export.tensorboard` (event files, tensorboardX) and
:mod:`~gputui.export.mlflow` (one MLflow run, MLflow's client). A RUN that cannot be read, or a missing
optional package, is a :class:`~gputui.sources.inputs.RunError`; a failed write is a
:class:`~gputui.output.WriteFailed` naming what could not be written. Nothing here imports Textual.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable

from gputui.output import WriteFailed

#: format → (module, function), imported only when asked (the optional packages stay unloaded).
EXPORTERS = {
    "csv": ("gputui.export.csv_files", "export_csv"),
    "tensorboard": ("gputui.export.tensorboard", "export_tensorboard"),
    "mlflow": ("gputui.export.mlflow", "export_mlflow"),
}
Exporter = Callable[[str, str], dict[str, int | str]]


def exporter(fmt: str) -> Exporter:
    """The export function of a format of :data:`EXPORTERS`."""
    module, name = EXPORTERS[fmt]
    return getattr(importlib.import_module(module), name)


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


def make_folder(folder: str) -> None:
    """``mkdir -p``; a failure is a WriteFailed naming the folder."""
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise WriteFailed(folder, exc) from None
