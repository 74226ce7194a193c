"""Did more GPUs help? Speedup and parallel efficiency across runs of one training at several sizes.

- **strong scaling** (same global problem, more GPUs): speedup = T(base) / T(N) from the mean epoch time
  (first epoch left out), efficiency = speedup × base GPUs / N;
- **weak scaling** (same problem *per GPU*): efficiency = (throughput per GPU at N) / (throughput per GPU
  at base); speedup = throughput(N) / throughput(base). Throughput: the run report's (images/s, ...);
- the base is the smallest run. A size is inefficient under :data:`GOOD_EFFICIENCY`; the words on why
  (from its utilisation and its run's verdicts, with the thresholds of the settings) come from the
  caller's ``diagnose`` (``gputui scale``: :func:`gputui.monitor.verdicts.scale_diagnosis`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gputui.analysis.run import RunReport

GOOD_EFFICIENCY = 0.8
ACCURACY_NAMES = ("val_accuracy", "test_accuracy", "accuracy")


@dataclass
class ScalePoint:
    run: str
    gpus: int | None
    epoch_time_s: float | None
    throughput: float | None
    throughput_unit: str | None
    speedup: float | None
    efficiency: float | None
    accuracy: float | None
    accuracy_name: str | None
    util_mean: float | None
    diagnosis: str | None


def _accuracy(report: RunReport) -> tuple[float | None, str | None]:
    for name in ACCURACY_NAMES:
        if name in report.final:
            return report.final[name], name
    return None, None


Diagnose = Callable[[RunReport, bool], "str | None"]  # (the run, inefficient) -> its words, or None


def compare(
    reports: list[RunReport], scaling: str = "strong", diagnose: Diagnose | None = None
) -> list[ScalePoint]:
    """One point per run, smallest first; speedup and efficiency against the smallest; ``diagnose``
    gives each point's diagnosis (none without it)."""
    if scaling not in ("strong", "weak"):
        raise ValueError("scaling must be 'strong' or 'weak'")
    runs = sorted(reports, key=lambda r: (r.gpu_count or 0, r.name))
    base = runs[0] if runs else None
    points = []
    for report in runs:
        n, n0 = report.gpu_count, base.gpu_count if base else None
        speedup = efficiency = None
        if base is not None and n and n0:
            if scaling == "strong" and report.epoch_time_s and base.epoch_time_s:
                speedup = base.epoch_time_s / report.epoch_time_s
                efficiency = speedup * n0 / n
            elif scaling == "weak" and report.throughput and base.throughput:
                speedup = report.throughput / base.throughput
                efficiency = (report.throughput / n) / (base.throughput / n0)
        accuracy, accuracy_name = _accuracy(report)
        util = report.util_mean
        points.append(
            ScalePoint(
                report.name,
                n,
                report.epoch_time_s,
                report.throughput,
                report.throughput_unit,
                speedup,
                efficiency,
                accuracy,
                accuracy_name,
                util,
                diagnose(report, efficiency is not None and efficiency < GOOD_EFFICIENCY)
                if diagnose
                else None,
            )
        )
    return points
