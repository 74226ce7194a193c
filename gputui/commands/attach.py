"""``gputui attach JOBID``: probe every node of a running job and follow its output.

In a terminal it opens the dashboard (:class:`gputui.sources.attach.AttachSource`). ``--json`` writes
the merged record stream (all nodes, plus events) to stdout as JSON lines; ``--output FILE`` appends it
to FILE (events are also printed to stderr); ``--text`` (also the default when stdout is not a
terminal) prints a short human-readable line per record. Ctrl-C, SIGTERM, SIGHUP (the terminal closed;
a write to it failing with EIO counts the same) or ``--detach-after S`` stop only the probe step; the job
keeps running.
"""

from __future__ import annotations

import argparse
import sys
import threading

from gputui.cli import EXIT_USAGE, CommandError
from gputui.hangup import OrderlyStop, terminal_gone
from gputui.serve.mode import has_screen
from gputui.slurm.attach import Attacher, AttachError, AttachOptions
from gputui.slurm.commands import SlurmError
from gputui.slurm.jobid import JobIdError, validate_jobid
from gputui.stream.io import RecordWriteError, RecordWriter
from gputui.stream.records import Record

_GIB = 1024**3


def describe(record: Record) -> str | None:
    """One human-readable line for a record (None for records not worth a line)."""
    if record.kind == "event":
        return f"[{record.get('event')}] {record.get('message', '')}"
    if record.kind == "gpu":
        used, total = record.get("mem_used_bytes"), record.get("mem_total_bytes")
        mem = f"{used / _GIB:.1f}/{total / _GIB:.1f} GiB" if used is not None and total else "mem ?"
        util = record.get("util_gpu_pct")
        return (
            f"{record.get('host')} gpu{record.get('index', '?')} util {util if util is not None else '?'}% "
            f"{mem} {record.get('temp_c', '?')}°C {record.get('power_w', '?')} W"
        )
    if record.kind == "metric":
        rank = record.get("rank")
        return f"metric {record.get('name')}={record.get('value')}" + (
            f" (rank {rank})" if rank is not None else ""
        )
    return None


def _options(args: argparse.Namespace) -> AttachOptions:
    backend = getattr(args, "probe_backend", None) or getattr(args, "backend", None) or "auto"
    interval = getattr(args, "probe_interval", None) or getattr(args, "interval", None) or 1.0
    return AttachOptions(
        backend=backend,
        interval=float(interval),
        wait_pending=not getattr(args, "no_wait", False),
        follow_logs=not getattr(args, "no_logs", False),
    )


def attach_job(job_id: str, args: argparse.Namespace) -> int:
    """Attach to ``job_id`` with the output options of ``args`` (shared by ``attach`` and ``run``)."""
    try:
        job_id = validate_jobid(job_id)
    except JobIdError as exc:  # bad input: a usage error, as with cancel/hold/release (nothing reaches Slurm)
        print(f"gputui: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    as_json, output = getattr(args, "json", False), getattr(args, "output", None)
    if not (as_json or output or getattr(args, "text", False)) and has_screen():
        from gputui.commands.dashboard import open_dashboard
        from gputui.sources.attach import AttachSource

        return open_dashboard(
            AttachSource(job_id, _options(args)),
            duration=getattr(args, "detach_after", None),
            low_bandwidth=getattr(args, "low_bandwidth", False),
        )
    try:
        writer = RecordWriter("-" if as_json else output) if (as_json or output) else None
    except RecordWriteError as exc:
        raise CommandError(str(exc)) from None

    def emit(record: Record) -> None:
        if writer is not None:
            writer.write(record)
            if output and record.kind == "event":
                to_terminal(describe(record), sys.stderr)
        else:
            line = describe(record)
            if line:
                to_terminal(line, sys.stdout)

    def to_terminal(line: str | None, stream) -> None:
        try:
            print(line, file=stream, flush=True)
        except OSError as exc:
            if isinstance(exc, BrokenPipeError) or not terminal_gone(exc):
                raise
            attacher.stop.set()  # the terminal hung up: end as SIGHUP does (the file keeps every record)

    attacher = Attacher(job_id, emit, _options(args))
    after = getattr(args, "detach_after", None)
    timer = threading.Timer(after, attacher.stop.set) if after else None
    if timer:
        timer.daemon = True
        timer.start()
    try:
        with OrderlyStop(lambda _signum: attacher.stop.set()):
            return attacher.run()
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:
        return 0
    except (AttachError, SlurmError, RecordWriteError) as exc:
        raise CommandError(str(exc)) from None
    finally:
        if timer:
            timer.cancel()
        if writer is not None:
            writer.close()


def main(args: argparse.Namespace) -> int:
    return attach_job(args.jobid, args)
