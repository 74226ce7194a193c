"""What gputui writes: a write that fails (a full disk, ``> /dev/full``, a file system gone read-only) is
one line naming what could not be written, never a traceback, and never blamed on an input file.

:func:`stdout_guarded` wraps ``sys.stdout`` while a command runs, :func:`open_output` opens a file a
command writes: both turn an ``OSError`` of a write into :class:`WriteFailed`, which is not an
``OSError``, so no reader's ``except OSError`` takes it for a file it was reading. BrokenPipeError
passes through unchanged: a reader that went away (``| head``) is not an error.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any, TypeVar

STDOUT = "standard output"
_T = TypeVar("_T")


def write_reason(exc: OSError) -> str:
    """Why a write failed, in a few words (``disk full``)."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "disk full"
    return exc.strerror or str(exc)


class WriteFailed(Exception):
    """Writing ``target`` (a path, or "standard output") failed; ``str()`` is one line."""

    def __init__(self, target: str, exc: OSError) -> None:
        super().__init__(f"cannot write to {target}: {write_reason(exc)}")
        self.target = target


class GuardedText:
    """A text stream whose failed writes raise :class:`WriteFailed` naming ``target``; everything
    else (``isatty``, ``fileno``, ``encoding`` ...) is the stream's own."""

    def __init__(self, stream: IO[str], target: str) -> None:
        self._stream = stream
        self.target = target

    def _guard(self, call: Callable[..., _T], *args: Any) -> _T:
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise WriteFailed(self.target, exc) from None

    def write(self, text: str) -> int:
        return self._guard(self._stream.write, text)

    def writelines(self, lines: Any) -> None:
        self._guard(self._stream.writelines, lines)

    def flush(self) -> None:
        self._guard(self._stream.flush)

    def close(self) -> None:
        self._guard(self._stream.close)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def __enter__(self) -> GuardedText:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_output(path: str | os.PathLike[str], **options: Any) -> GuardedText:
    """``open(path, "w", **options)``, its failures (opening included) as :class:`WriteFailed`."""
    target = os.fspath(path)
    try:
        stream = open(target, "w", **options)  # noqa: SIM115 - closed by the caller's with
    except OSError as exc:
        raise WriteFailed(target, exc) from None
    return GuardedText(stream, target)


@contextmanager
def stdout_guarded() -> Iterator[None]:
    """``sys.stdout`` guarded while the block runs, and flushed at its end (a small output to a full
    disk fails only then)."""
    original = sys.stdout
    sys.stdout = GuardedText(original, STDOUT)  # type: ignore[assignment]
    try:
        yield
        sys.stdout.flush()
    finally:
        sys.stdout = original


def silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null: what is still buffered for stdout (which cannot be
    written) goes nowhere at exit instead of a second error."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError):  # not a real file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
