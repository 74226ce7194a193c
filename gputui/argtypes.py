"""argparse value types shared by the ``gputui`` CLI and the trainers (clear one-line messages)."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """A whole number ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def positive_float(text: str) -> float:
    """A number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be greater than 0")
    return value


def positive_int_list(text: str) -> list[int]:
    """Comma-separated whole numbers ≥ 1 (``1,2,4``)."""
    values = [positive_int(part.strip()) for part in text.split(",") if part.strip()]
    if not values:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of whole numbers (e.g. 1,2,4)")
    return values
