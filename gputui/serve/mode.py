"""Whether this gputui process draws into a browser (started by ``gputui serve``) rather than a terminal.

The server sets :data:`SERVED_ENV` for every app process it starts; this module is the one place that
reads it. A served app has no terminal (its standard streams are the server's pipes), yet it has a screen;
what needs a real terminal (a shell inside a job, an editor) says :func:`not_in_browser` instead.
"""

from __future__ import annotations

import os
import sys

SERVED_ENV = "GPUTUI_SERVED"


def served() -> bool:
    """True in an app process started by ``gputui serve``."""
    return os.environ.get(SERVED_ENV) == "1"


def has_screen() -> bool:
    """Whether a full-screen app can run here: a terminal on both standard streams, or a browser."""
    return served() or (sys.stdout.isatty() and sys.stdin.isatty())


def not_in_browser(what: str) -> str:
    """The one line shown instead of ``what`` (``the shell``) when it needs a terminal."""
    return f"{what} needs a terminal: not available in the browser (run gputui in a terminal for it)"
