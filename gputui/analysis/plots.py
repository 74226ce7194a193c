"""Plots of a run report and of a scaling comparison: image files with matplotlib (the optional extra
``gputui[plot]``), a terminal chart with plotext when matplotlib is not installed (``docs/analysis.md``).

The scaling figure is the one the courses draw: epoch time, throughput and speedup (with the ideal line)
against the number of GPUs, first epoch left out.
"""

from __future__ import annotations

import os

from gputui.analysis.run import RunReport
from gputui.analysis.scaling import ScalePoint

SUFFIXES = (".png", ".svg", ".pdf")


class PlotUnavailable(Exception):
    """matplotlib is not installed: the caller shows a terminal chart instead."""


def _pyplot():
    try:
        import matplotlib
    except ImportError as exc:
        raise PlotUnavailable("matplotlib is not installed (pip install 'gputui[plot]')") from exc
    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    return plt


def check_path(path: str) -> None:
    if not path.lower().endswith(SUFFIXES):
        raise ValueError(f"--plot {path}: give a .png, .svg or .pdf file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"--plot {path}: no such directory {folder}")


def _series(points: list[ScalePoint]) -> tuple[list[int], list, list, list]:
    shown = [p for p in points if p.gpus]
    gpus = [p.gpus for p in shown]
    return gpus, [p.epoch_time_s for p in shown], [p.throughput for p in shown], [p.speedup for p in shown]  # type: ignore[return-value]


def scale_figure(points: list[ScalePoint], scaling: str, path: str) -> None:
    """Epoch time, throughput and speedup against GPUs, in one figure file."""
    plt = _pyplot()
    gpus, times, rates, speedups = _series(points)
    unit = next((p.throughput_unit for p in points if p.throughput_unit), "throughput")
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), layout="constrained")
    for ax, values, title in ((axes[0], times, "epoch time (s)"), (axes[1], rates, unit)):
        ax.plot(gpus, [v if v is not None else float("nan") for v in values], "o-")
        ax.set_title(title)
    axes[2].plot(gpus, [s if s is not None else float("nan") for s in speedups], "o-", label="measured")
    if gpus:
        axes[2].plot(gpus, [g / gpus[0] for g in gpus], "--", color="grey", label="ideal")
    axes[2].set_title("speedup")
    axes[2].legend()
    for ax in axes:
        ax.set_xlabel("GPUs")
        ax.set_xticks(gpus)
        ax.grid(alpha=0.3)
    fig.suptitle(f"{scaling} scaling (first epoch left out)")
    fig.savefig(path)
    plt.close(fig)


def report_figure(report: RunReport, path: str) -> None:
    """Epoch time and the run's loss (or first metric) per epoch, in one figure file."""
    plt = _pyplot()
    epochs = [r.epoch for r in report.epochs]
    names = [n for r in report.epochs for n in r.values if n != "epoch_time_s"]
    metric = "loss" if "loss" in names else (names[0] if names else None)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")
    axes[0].bar(epochs, [r.epoch_time_s or 0 for r in report.epochs])
    axes[0].set_title("epoch time (s)")
    if metric:
        axes[1].plot(epochs, [r.values.get(metric, float("nan")) for r in report.epochs], "o-")
        axes[1].set_title(metric)
    for ax in axes:
        ax.set_xlabel("epoch")
        ax.grid(alpha=0.3)
    fig.suptitle(report.name + ("  (SIMULATED GPUs)" if report.simulated else ""))
    fig.savefig(path)
    plt.close(fig)


def terminal_scale_chart(points: list[ScalePoint], width: int = 100, height: int = 18) -> str:
    """Speedup (and the ideal line) against GPUs as text, with plotext."""
    import plotext as plx

    gpus, _, _, speedups = _series(points)
    plx.clear_figure()
    plx.plotsize(width, height)
    plx.plot(gpus, [s or 0.0 for s in speedups], marker="dot", label="measured speedup")
    if gpus:
        plx.plot(gpus, [g / gpus[0] for g in gpus], label="ideal")
    plx.xlabel("GPUs")
    plx.title("speedup")
    plx.theme("clear")
    return plx.build()


def terminal_report_chart(report: RunReport, width: int = 100, height: int = 14) -> str:
    """Epoch times as a text bar chart, with plotext."""
    import plotext as plx

    plx.clear_figure()
    plx.plotsize(width, height)
    plx.bar([str(r.epoch) for r in report.epochs], [r.epoch_time_s or 0.0 for r in report.epochs])
    plx.title("epoch time (s)")
    plx.theme("clear")
    return plx.build()
