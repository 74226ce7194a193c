"""A real ``gputui serve`` subprocess for the tests (tests/test_serve*.py): its port, token and output.

The server listens on a free port (``--port 0``) and writes its token with ``--token-file`` once it
listens, so a test knows both without parsing. Its output is drained by a thread (a full pipe would stop
it) and kept in :attr:`Served.lines`. Waits poll with a deadline; nothing sleeps and hopes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import psutil
from ci_helpers import require_module

aiohttp = require_module("aiohttp", "pip install -e '.[serve]'")
require_module("textual_serve", "pip install -e '.[serve]'")

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

    def __init__(
        self, cwd: Path, *words: str, options: tuple[str, ...] = (), base_env: Mapping[str, str] | None = None
    ) -> None:
        self.token_file = cwd / "serve.token"
        self.token_file.unlink(missing_ok=True)
        argv = [*GPUTUI, "serve", "--port", "0", "--token-file", str(self.token_file), *options, *words]
        env = {k: v for k, v in (base_env or os.environ).items() if not k.startswith("GPUTUI_")}
        env["GPUTUI_CONFIG"] = str(cwd / "settings.toml")  # none unless a test writes one
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.lines: list[str] = []
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()
        try:
            self.port, self.token = self._started()
        except BaseException:
            self.close()  # a server that did not start as expected is not left running
            raise
        self.base = f"http://127.0.0.1:{self.port}"
        self.cookie = f"gputui_serve_{self.port}"

    def _started(self) -> tuple[int, str]:
        """Its port and token, once it listens (the token file is written then)."""
        wait_until(lambda: self.token_file.exists() or self.proc.poll() is not None, 60, "the token file")
        if self.proc.poll() is not None:
            raise AssertionError(f"gputui serve ended at start: {self.output()}")
        token = self.token_file.read_text().strip()
        banner = re.compile(r"^gputui serve: .* on \S+:(\d+), for at most")
        first = wait_until(lambda: next(filter(None, map(banner.match, self.lines)), None), 10, "the banner")
        return int(first.group(1)), token  # type: ignore[union-attr]

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


def session(**kwargs) -> aiohttp.ClientSession:
    """A client that keeps cookies of 127.0.0.1 (aiohttp's jar refuses IP hosts unless told)."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True), **kwargs)


async def upgrade_status(served: Served, **kwargs) -> int:
    """The HTTP status that refuses a websocket upgrade (0: it was accepted)."""
    async with session(cookies=kwargs.pop("cookies", None)) as client:
        try:
            async with client.ws_connect(served.base + "/ws", **kwargs):
                return 0
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status


class Viewer:
    """A browser stand-in: loads the page with the token, then opens the websocket as textual.js does."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.frames = b""

    async def __aenter__(self) -> Viewer:
        self.client = session()
        async with self.client.get(f"{self.served.base}/?token={self.served.token}") as page:
            assert page.status == 200, await page.text()
        self.ws = await self.client.ws_connect(self.served.base + "/ws?width=120&height=40")
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.ws.close()
        await self.client.close()

    async def read_until(self, *words: str, timeout: float = 60) -> str:
        """Read the app's frames until every word is on screen; the screen text."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not all(word in screen_text(self.frames) for word in words):
            left = deadline - loop.time()
            assert left > 0, f"{words} not on screen: {screen_text(self.frames)[-2000:]!r}"
            try:
                message = await self.ws.receive(timeout=left)
            except TimeoutError:
                continue  # the assertion above says what the screen held
            if message.type == aiohttp.WSMsgType.BINARY:
                self.frames += message.data
            elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                raise AssertionError(f"the server closed the viewer: {self.served.output()}")
        return screen_text(self.frames)

    async def closed_by_server(self, timeout: float = 60) -> bool:
        while True:
            message = await self.ws.receive(timeout=timeout)
            if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
                return True
