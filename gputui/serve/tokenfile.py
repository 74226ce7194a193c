"""``gputui serve --token-file F``: the token written to a file only its owner can read, for scripts.

The file is created with mode 0600. An existing file is replaced only if it is a regular file of ours
that no one else can read or write (mode 0600 or stricter); a looser one, a link or another user's file
is refused, since the token would leak or be swapped. Written once the port is listening, and whole (a
rename), so a script that waits for the file finds a server that answers.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path


class TokenFileError(Exception):
    """The token file cannot be written safely; ``str()`` is one line."""


def write_token_file(path: str | Path, token: str) -> None:
    """Write ``token`` and a newline to ``path`` with mode 0600 (see the module docstring). The file
    appears whole: written beside it first, then renamed over it, so a script never reads it half done."""
    path = Path(path)
    try:
        before = os.lstat(path)
    except FileNotFoundError:
        before = None
    except OSError as exc:
        raise TokenFileError(f"token file {path}: {exc.strerror or exc}") from None
    if before is not None:
        _check_existing(path, before)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(partial, flags, 0o600)
        try:
            os.write(fd, (token + "\n").encode())
        finally:
            os.close(fd)
        os.replace(partial, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise TokenFileError(f"cannot write the token file {path}: {exc.strerror or exc}") from None


def _check_existing(path: str | Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise TokenFileError(f"token file {path} is not a regular file: refused")
    if info.st_uid != os.getuid():
        raise TokenFileError(f"token file {path} belongs to another user: refused")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise TokenFileError(
            f"token file {path} has mode {mode:04o}, readable or writable by others: refused "
            f"(remove it, or chmod 600 it)"
        )
