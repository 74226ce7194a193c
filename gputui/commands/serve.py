"""``gputui serve [COMMAND ...]``: what ``gputui COMMAND`` shows, in a browser, through an SSH tunnel.

The jobs screen by default; ``attach JOBID``, ``demo`` or ``replay FILE...`` too. Each browser viewer
gets its own gputui process (the same code as in a terminal), at most ``--max-viewers`` at once. The
server listens on 127.0.0.1 unless ``--host`` says otherwise (then it warns), makes a random token per
start and prints the address with it and the ``ssh -L`` line to run on the laptop. docs/serve.md says
what the token protects and what it does not.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import getpass
import os
import socket

from gputui.cli import CommandError, build_parser
from gputui.extras import MissingExtra, require

#: COMMAND → what the browser shows (None: the jobs screen, ``gputui`` alone).
SCREENS: dict[str | None, str] = {
    None: "the jobs screen",
    "attach": "the job's dashboard",
    "demo": "the demo dashboard",
    "replay": "the replay dashboard",
}
NO_SCREEN_OPTIONS = {"headless": "--headless", "json": "--json", "output": "--output", "text": "--text"}
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
DEFAULT_MAX_VIEWERS = 2


def served_command(words: list[str]) -> tuple[list[str], str | None]:
    """``gputui serve``'s COMMAND words, checked as ``gputui`` would parse them; returns them with the
    command's name. A command without a screen (``jobs``, ``run``: every viewer would submit a job) or
    a screenless option is refused in one line."""
    words = words[1:] if words[:1] == ["--"] else list(words)
    parsed, extra = build_parser().parse_known_args(words)  # a usage error: argparse's message, exit 2
    if extra:
        raise CommandError(
            f"gputui serve: unrecognized arguments: {' '.join(extra)} (serve's own options go before COMMAND)"
        )
    if parsed.command not in SCREENS or parsed.log:
        shown = parsed.command or "--log"
        raise CommandError(
            f"gputui serve shows a screen: no COMMAND (the jobs screen), attach JOBID, demo or replay "
            f"FILE...; not {shown}"
        )
    for name, option in NO_SCREEN_OPTIONS.items():
        if getattr(parsed, name, None):
            raise CommandError(f"gputui serve shows the screen: {option} has none to serve")
    return words, parsed.command


def login_node() -> str:
    """This machine's name as the laptop's ssh should reach it (the full name where DNS has one)."""
    name = ""
    with contextlib.suppress(OSError):
        name = socket.getfqdn()
    if not name or name.startswith("localhost"):
        name = os.environ.get("HOSTNAME") or socket.gethostname()
    return name


def tunnel_lines(host: str, port: int, token: str) -> list[str]:
    """What to run on the laptop, and the address to open there."""
    target = "localhost" if host in LOCAL_HOSTS else host
    user = os.environ.get("USER") or getpass.getuser()
    node = login_node()
    cluster = os.environ.get("SLURM_CLUSTER_NAME")
    where = f"this node ({node}{', cluster ' + cluster if cluster else ''})"
    return [
        f"  on your laptop:  ssh -L {port}:{target}:{port} {user}@{node}",
        f"  then open:       http://localhost:{port}/?token={token}",
        f"  (tunnel to {where}: a cluster's alias may lead to another login node)",
    ]


def max_viewers(args: argparse.Namespace) -> int:
    """--max-viewers, else ``[serve] max_viewers`` of the settings, else 2."""
    if args.max_viewers is not None:
        return args.max_viewers
    from gputui.config import load_config_or_defaults

    config, _warning = load_config_or_defaults()
    serve = getattr(config, "serve", None)
    return int(serve.max_viewers) if serve is not None else DEFAULT_MAX_VIEWERS


def main(args: argparse.Namespace) -> int:
    try:
        require("serve", "gputui serve")
    except MissingExtra as exc:
        raise CommandError(str(exc)) from None
    words, command = served_command(list(args.served))
    if command == "demo":
        try:
            require("demo", "gputui serve demo (a real training run)")
        except MissingExtra as exc:
            raise CommandError(f"{exc} (or `make demo`)") from None
    from gputui.serve.auth import new_token
    from gputui.serve.server import GputuiServer, app_argv, bind
    from gputui.serve.tokenfile import TokenFileError, write_token_file

    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        reason = "in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
        raise CommandError(
            f"cannot listen on {args.host}:{args.port}: {reason} (try another --port)"
        ) from None
    host, port = sock.getsockname()[:2]
    token = new_token()
    viewers = max_viewers(args)
    shown = SCREENS[command] + (f" ({' '.join(words)})" if words else "")
    server = GputuiServer(
        app_argv(words), title=f"gputui {' '.join(words)}".strip(), token=token, max_viewers=viewers
    )

    def ready() -> None:
        if args.token_file:
            write_token_file(args.token_file, token)
        lines = [f"gputui serve: {shown} on {host}:{port}, for at most {viewers} viewers"]
        if args.host not in LOCAL_HOSTS:
            lines.append(
                f"gputui: warning: listening on {args.host}, not only this machine: anyone who reaches the "
                "port can try; the token is all that protects it, and nothing is encrypted"
            )
        lines += tunnel_lines(host, port, token)
        lines.append("  Ctrl-C here ends the server and every viewer's gputui (jobs keep running)")
        for line in lines:
            print(line, flush=True)

    try:
        asyncio.run(server.run(sock, ready))
    except TokenFileError as exc:
        raise CommandError(str(exc)) from None
    finally:
        sock.close()
    return 0
