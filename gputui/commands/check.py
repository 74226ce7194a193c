"""``gputui check FILE...``: read record files as every gputui reader does and say what it skipped."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from gputui.cli import CommandError
from gputui.stream.io import ReadStats, read_file


def main(args: argparse.Namespace) -> int:
    """Print one summary line per file; exit 1 if any line had to be skipped."""
    clean = True
    for path in args.files:
        stats, kinds = ReadStats(), Counter()
        try:
            for record in read_file(path, stats):
                kinds[record.kind] += 1
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from None
        by_kind = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none"
        print(f"{path}: {stats.summary()} ({by_kind})")
        for example in stats.examples:
            print(f"  {example}", file=sys.stderr)
        clean = clean and stats.skipped == 0
    return 0 if clean else 1
