"""``gputui --log FILE``: headless sampling for compute nodes and batch scripts.

Appends the same records as ``gputui probe`` to FILE (Slurm patterns ``%j``/``%N``/``%n`` expanded), one
``write(2)`` per line, with optional size rotation (``--rotate-mb``). Survives SIGHUP; on SIGTERM/SIGINT
it writes a final ``probe_stopped`` event and prints a one-paragraph summary to stderr.
"""

from __future__ import annotations

import argparse
import sys

from gputui.cli import CommandError
from gputui.commands.probe import GuardedEmit, open_backend
from gputui.probes.base import ProbeError
from gputui.probes.headless import RotatingWriter, Summary, expand_log_path
from gputui.stream.io import RecordWriteError, RecordWriter


def main(args: argparse.Namespace) -> int:
    from gputui.probes.sampler import run_sampling

    path = expand_log_path(args.log)
    rotate_mb = getattr(args, "rotate_mb", None)
    keep = getattr(args, "rotate_keep", None) or 5
    backend = open_backend(args)
    try:
        backend.open()  # before creating the file: a node without GPUs leaves no empty log behind
    except ProbeError as exc:
        raise CommandError(str(exc)) from None
    try:
        if path == "-":
            writer = RecordWriter("-")
        else:
            writer = RotatingWriter(path, max_bytes=int(rotate_mb * 2**20) if rotate_mb else None, keep=keep)
    except RecordWriteError as exc:
        raise CommandError(exc.strerror or str(exc)) from None
    summary = Summary()
    emit = GuardedEmit(writer.write, summary.add)
    try:
        result = run_sampling(
            backend,
            emit,
            interval=args.interval,
            count=args.count,
            duration=args.duration,
            survive_hup=True,
            on_start=lambda sampler: setattr(emit, "stop", sampler.request_stop_quiet),
        )
    except ProbeError as exc:
        raise CommandError(str(exc)) from None
    finally:
        writer.close()
    if emit.error:
        raise CommandError(f"{emit.error} (records written before this are intact)")
    print(summary.paragraph(result.reason, result.samples), file=sys.stderr)
    return 0
