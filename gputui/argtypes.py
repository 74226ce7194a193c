"""argparse value types shared by the ``gputui`` CLI and the trainers (clear one-line messages), and the
ranges every number gputui reads must fall in (flags, settings file, environment: one rule each)."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

DAY_S = 86400.0


@dataclass(frozen=True)
class Range:
    """A closed range of finite numbers (``above``: the low end itself is excluded), with its unit."""

    low: float
    high: float
    unit: str = ""
    above: bool = False

    def problem(self, value: object) -> str | None:
        """Why ``value`` is not in the range (``"must be ..."``), or None when it is."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"must be a number {self.text()}"
        if not math.isfinite(value):
            return f"must be a finite number {self.text()}"
        too_low = value <= self.low if self.above else value < self.low
        if too_low or value > self.high:
            return f"must be {self.text()}"
        return None

    def text(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if self.above:
            return f"more than {self.low:.10g} and at most {self.high:.10g}{unit}"
        return f"from {self.low:.10g} to {self.high:.10g}{unit}"

    def parse(self, text: str) -> float:
        """An argparse ``type``: the number in ``text``, or a one-line ArgumentTypeError."""
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        problem = self.problem(value)
        if problem:
            raise argparse.ArgumentTypeError(f"{text!r} {problem}")
        return value


#: Seconds between Slurm calls (squeue on the jobs screen): slurmctld is shared by everyone.
SLURM_REFRESH_S = Range(0.5, 3600.0, "s")
#: Seconds between redraws of a screen that calls nothing.
SCREEN_REFRESH_S = Range(0.1, 3600.0, "s")
#: Seconds between GPU samples (NVML/sysfs reads on one node).
SAMPLE_INTERVAL_S = Range(0.001, DAY_S, "s")
#: How long to run or stay attached (--duration, --detach-after): up to 30 days.
DURATION_S = Range(0.0, 30 * DAY_S, "s", above=True)
#: --rotate-mb: up to 1 TiB.
ROTATE_MB = Range(0.0, float(1 << 20), "MiB", above=True)


def positive_int(text: str) -> int:
    """A whole number ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def int_in(low: int, high: int):
    """An argparse ``type``: a whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} must be at least {low} and at most {high}")
        return value

    return parse


def positive_float(text: str) -> float:
    """A finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be greater than 0")
    return value


def positive_int_list(text: str) -> list[int]:
    """Comma-separated whole numbers ≥ 1 (``1,2,4``)."""
    values = [positive_int(part.strip()) for part in text.split(",") if part.strip()]
    if not values:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of whole numbers (e.g. 1,2,4)")
    return values
