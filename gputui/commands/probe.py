"""``gputui probe``: stream this node's GPU and host samples to stdout, one flushed JSON line each.

This is what the attach step runs on every node (``srun --overlap ... gputui probe``). The first record is
a ``probe_started`` event (version, Python, backend, host) so the attaching side can spot a version
mismatch between login and compute nodes. It exits quietly when its reader goes away (EPIPE).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from gputui.cli import CommandError
from gputui.probes.backends import make_backend
from gputui.probes.base import ProbeError
from gputui.stream.io import RecordWriteError
from gputui.stream.records import Record


class GuardedEmit:
    """Writes records; on a closed pipe or a failed write it remembers why and asks the loop to stop."""

    def __init__(self, write: Callable[[Record], None], observe: Callable[[Record], None] | None = None):
        self._write = write
        self._observe = observe
        self.broken_pipe = False
        self.error: str | None = None
        self.stop: Callable[[str], None] | None = None

    def __call__(self, record: Record) -> None:
        if self.broken_pipe or self.error:
            return
        try:
            self._write(record)
        except BrokenPipeError:
            self.broken_pipe = True
            _silence_stdout()
            self._request("stdout_closed")
            return
        except RecordWriteError as exc:
            self.error = exc.strerror or str(exc)
            self._request("write_error")
            return
        if self._observe is not None:
            self._observe(record)

    def _request(self, reason: str) -> None:
        if self.stop is not None:
            self.stop(reason)


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null so that nothing at exit complains about the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


def open_backend(args: argparse.Namespace):
    try:
        return make_backend(args.backend)
    except ProbeError as exc:
        raise CommandError(str(exc)) from None


def main(args: argparse.Namespace) -> int:
    from gputui.probes.sampler import run_sampling
    from gputui.stream.io import RecordWriter

    backend = open_backend(args)
    writer = RecordWriter("-")
    emit = GuardedEmit(writer.write)
    try:
        run_sampling(
            backend,
            emit,
            interval=args.interval,
            count=args.count,
            duration=args.duration,
            survive_hup=False,
            on_start=lambda sampler: setattr(emit, "stop", sampler.request_stop_quiet),
        )
    except ProbeError as exc:
        raise CommandError(str(exc)) from None
    if emit.error:
        raise CommandError(emit.error)
    return 0
