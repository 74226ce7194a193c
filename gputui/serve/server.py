"""The web server of ``gputui serve``: textual-serve's page and protocol, behind the token, capped.

textual-serve's :class:`~textual_serve.server.Server` gives the page, its scripts and the websocket
protocol; this subclass adds the token middleware (:mod:`gputui.serve.auth`), a cap on viewers (each one
is a whole gputui process), a websocket address taken from the browser's own (through a tunnel the
laptop's port may differ), and its own start and end: the port is bound first (a port in use is one
line), and SIGINT/SIGTERM/SIGHUP end every viewer's app before the server goes. Each app process is
``python -m gputui COMMAND`` started without a shell, in its own session (a Ctrl-C in the terminal reaches
only the server, which ends the apps in order: SIGTERM, then SIGKILL of what is left after
:data:`END_WAIT_S`), with ``GPUTUI_SERVED=1`` set (:mod:`gputui.serve.mode`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
from collections.abc import Callable

import aiohttp_jinja2
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from gputui.hangup import EXIT_GRACE_S, STOP_WAIT_S
from gputui.serve.auth import cookie_name, page, token_gate
from gputui.serve.mode import SERVED_ENV

END_WAIT_S = STOP_WAIT_S + EXIT_GRACE_S  # an app stops its probe step (or ranks), then returns
QUIT_WAIT_S = 5.0  # a viewer who left: how long its app gets to quit before SIGTERM
APP_FPS = 15  # Textual's default 60 is far too chatty over a tunnel (notes: Textual over SSH)
ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: any free port); OSError when it cannot be had."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # not a second listener: TIME_WAIT only
        sock.bind(address)
        sock.listen(16)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


class ViewerApp(AppService):
    """One viewer's gputui process: ``argv`` run without a shell, in its own session, marked as served."""

    def __init__(self, argv: list[str], **kwargs) -> None:
        super().__init__(" ".join(argv), **kwargs)
        self.argv = argv

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        environment[SERVED_ENV] = "1"
        environment["TEXTUAL_FPS"] = str(APP_FPS)
        return environment

    async def _open_app_process(self, width: int = 80, height: int = 24) -> asyncio.subprocess.Process:
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width, height),
            start_new_session=True,
        )
        self._stdin = process.stdin
        return process

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def signal(self, signum: int) -> None:
        """Send ``signum`` to the app process, if it still runs."""
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.send_signal(signum)

    async def end(self, first: int | None = None) -> None:
        """End the app. A viewer who left: the quit message, SIGTERM if it is still there after
        :data:`QUIT_WAIT_S`. The server stopping: signal ``first`` (SIGTERM). Then SIGKILL of its session
        if it is still there after :data:`END_WAIT_S` more."""
        process = self._process
        if process is None:
            return
        steps: list[tuple[int, float]] = [(signal.SIGKILL, END_WAIT_S)]
        if process.returncode is not None:
            steps = []  # it quit by itself (q in the browser)
        elif first is None:
            await self.send_meta({"type": "quit"})
            steps.insert(0, (signal.SIGTERM, QUIT_WAIT_S))
        else:
            self.signal(first)
        for signum, wait_s in steps:
            try:
                await asyncio.wait_for(asyncio.shield(process.wait()), wait_s)
                break
            except TimeoutError:
                if signum == signal.SIGKILL:
                    _kill_session(process.pid)
                else:
                    self.signal(signum)
        await process.wait()
        if self._task is not None:
            await self._task  # the reader of its output: ends once the pipe is closed
            self._task = None


def _kill_session(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # the app leads its own session: pgid == pid


class GputuiServer(Server):
    """textual-serve's server for ``python -m gputui ARGS``, behind ``token``, at most ``max_viewers``."""

    def __init__(self, argv: list[str], *, title: str, token: str, max_viewers: int) -> None:
        super().__init__(" ".join(argv), title=title)
        self.argv = argv
        self.token = token
        self.max_viewers = max_viewers
        self.viewers: dict[ViewerApp, web.WebSocketResponse] = {}
        self.closing = False
        self.say: Callable[[str], None] = _say

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(token_gate(self.token, cookie_name(self.port)))
        return app

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve prints its logo here; gputui serve prints its own lines once it listens."""

    def _full(self) -> web.Response | None:
        if self.closing:
            return page(503, "gputui serve: stopping", "gputui serve is stopping.")
        if len(self.viewers) < self.max_viewers:
            return None
        self.say(f"gputui serve: refused a viewer: {self.max_viewers} already (--max-viewers)")
        return page(
            503,
            "gputui serve: viewer limit reached",
            f"{self.max_viewers} viewers are open already, the most this gputui serve allows (each is a "
            "whole gputui process): close one, then reload this page. The limit is --max-viewers, "
            "or [serve] max_viewers in the settings.",
        )

    async def handle_index(self, request: web.Request) -> web.StreamResponse:  # type: ignore[override]
        """textual-serve's page, with the websocket at the address the browser used."""
        refused = self._full()
        if refused is not None:
            return refused
        scheme = "wss" if request.secure else "ws"
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": f"{scheme}://{request.host}/ws",
            "config": {"static": {"url": "/static/"}},
            "application": {"name": self.title},
        }
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        """One viewer: its own gputui process for as long as its websocket is open."""
        refused = self._full()
        if refused is not None:
            return refused
        websocket = web.WebSocketResponse(heartbeat=15)
        if not websocket.can_prepare(request).ok:
            return page(400, "gputui serve: not a websocket", "This address is the viewer's websocket.")
        viewer = ViewerApp(
            self.argv,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
        )
        self.viewers[viewer] = websocket  # before any await: concurrent upgrades see the cap
        try:
            await websocket.prepare(request)
            await viewer.start(
                to_int(request.query.get("width", "80"), 80), to_int(request.query.get("height", "24"), 24)
            )
            self.say(
                f"gputui serve: viewer from {request.remote} connected "
                f"(app pid {viewer.pid}, {len(self.viewers)} open)"
            )
            await self._process_messages(websocket, viewer)
        except (asyncio.CancelledError, ConnectionError):
            pass
        except Exception as exc:  # a malformed message from the page: that viewer ends
            self.say(f"gputui serve: viewer ended by an error: {exc!r}")
        finally:
            if not self.closing:
                await viewer.end()
            self.viewers.pop(viewer, None)
            await websocket.close()
        if not self.closing:
            self.say(f"gputui serve: viewer left (app pid {viewer.pid} ended, {len(self.viewers)} open)")
        return websocket

    async def end_viewers(self) -> None:
        """SIGTERM to every viewer's app (each stops its probe step or ranks, then returns), SIGKILL of
        what is left after :data:`END_WAIT_S`; then their websockets close."""
        self.closing = True
        viewers = list(self.viewers.items())
        await asyncio.gather(*(viewer.end(signal.SIGTERM) for viewer, _ in viewers))
        await asyncio.gather(*(websocket.close() for _, websocket in viewers))

    async def run(self, sock: socket.socket, ready: Callable[[], None]) -> None:
        """Serve on ``sock`` until SIGINT, SIGTERM or SIGHUP; then end every viewer's app, then return."""
        self.host, self.port = sock.getsockname()[:2]
        app = await self._make_app()
        runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=2.0)
        await runner.setup()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in ENDING_SIGNALS:
            loop.add_signal_handler(signum, stop.set)
        try:
            await web.SockSite(runner, sock).start()
            ready()
            await stop.wait()
            self.say("gputui serve: stopping: ending every viewer's gputui (jobs keep running)")
            await self.end_viewers()
        finally:
            await runner.cleanup()
            for signum in ENDING_SIGNALS:
                loop.remove_signal_handler(signum)


def _say(line: str) -> None:
    """A line on the server's terminal; nothing once the terminal is gone (SIGHUP)."""
    with contextlib.suppress(OSError):
        print(line, flush=True)


def app_argv(command: list[str]) -> list[str]:
    """The app process for ``gputui COMMAND``: this interpreter, this gputui."""
    return [sys.executable, "-m", "gputui", *command]
