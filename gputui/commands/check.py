"""``gputui check FILE...``: read record files as every gputui reader does and say what it skipped.

Every FILE is read as a record file, whatever its first line (:class:`gputui.sources.inputs.RunFile` of
kind ``records``): a log given by mistake shows as lines skipped, never as a clean file."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from gputui.cli import CommandError
from gputui.sources.inputs import RECORDS, RunFile, cannot_read
from gputui.stream.io import ReadStats


def main(args: argparse.Namespace) -> int:
    """Print one summary line per file; exit 1 if any line had to be skipped."""
    clean = True
    for path in args.files:
        stats, kinds = ReadStats(), Counter()
        try:
            for record in RunFile(path, RECORDS).records(stats):
                kinds[record.kind] += 1
        except OSError as exc:
            raise CommandError(cannot_read(path, exc)) from None
        by_kind = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none"
        print(f"{path}: {stats.summary()} ({by_kind})")
        for example in stats.examples:
            print(f"  {example}", file=sys.stderr)
        clean = clean and stats.skipped == 0
    return 0 if clean else 1
