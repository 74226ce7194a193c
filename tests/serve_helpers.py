"""A real ``gputui serve`` subprocess for the tests (tests/test_serve*.py): its port, token and output.

The server listens on a free port (``--port 0``) and writes its token with ``--token-file`` once it
listens, so a test knows both without parsing. Its output is drained by a thread (a full pipe would stop
it) and kept in :attr:`Served.lines`. Waits poll with a deadline; nothing sleeps and hopes.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psutil

GPUTUI = [sys.executable, "-m", "gputui"]
ANSI = re.compile(r"\x1b\[[0-9;?<>=!]*[ -/]*[@-~]|\x1b[()][A-Z0-9]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)")


def wait_until(predicate: Callable[[], object], timeout: float, what: str) -> object:
    """Poll ``predicate`` until it is true (returned) or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


def screen_text(frames: bytes) -> str:
    """What an app drew, as text: its output with the escape sequences taken out."""
    return ANSI.sub("", frames.decode("utf-8", "replace"))


class Served:
    """``gputui serve --port 0 --token-file F [options] COMMAND...`` started in ``cwd``."""

    def __init__(self, cwd: Path, *words: str, options: tuple[str, ...] = ()) -> None:
        self.token_file = cwd / "serve.token"
        self.token_file.unlink(missing_ok=True)
        argv = [*GPUTUI, "serve", "--port", "0", "--token-file", str(self.token_file), *options, *words]
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTUI_")}
        env["GPUTUI_CONFIG"] = str(cwd / "settings.toml")  # none unless a test writes one
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.lines: list[str] = []
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()
        wait_until(lambda: self.token_file.exists() or self.proc.poll() is not None, 60, "the token file")
        if self.proc.poll() is not None:
            self.close()
            raise AssertionError(f"gputui serve ended at start: {self.output()}")
        self.token = self.token_file.read_text().strip()
        banner = re.compile(r"^gputui serve: .* on \S+:(\d+), for at most")
        first = wait_until(lambda: next(filter(None, map(banner.match, self.lines)), None), 10, "the banner")
        self.port = int(first.group(1))  # type: ignore[union-attr]
        self.base = f"http://127.0.0.1:{self.port}"
        self.cookie = f"gputui_serve_{self.port}"

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def output(self) -> str:
        return "\n".join(self.lines)

    def descendants(self) -> list[psutil.Process]:
        """Every process below the server (its viewers' apps and what they started)."""
        try:
            return psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def apps(self) -> list[psutil.Process]:
        """The viewers' app processes (``python -m gputui ...``), alive."""
        return [p for p in self.descendants() if _alive(p) and _cmdline(p)[1:3] == ["-m", "gputui"]]

    def interrupt(self, timeout: float = 60) -> int:
        """Ctrl-C: SIGINT to the server; its exit status."""
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.interrupt(60)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._drainer.join(10)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    return [p for p in processes if _alive(p)]
