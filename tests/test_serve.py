"""``gputui serve``: a real server subprocess on a free port, spoken to over real HTTP and websockets.

The token guards every path and the websocket upgrade; with it the page loads and a viewer gets its own
gputui app; the viewer cap; ``q`` in the browser ends that viewer's app only; Ctrl-C (SIGINT) of the
server ends every viewer's app and what it started (the demo's ranks); a port in use and a token file
with loose permissions are one line each. The browser itself: tests/test_serve_browser.py.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ci_helpers import require_module
from serve_helpers import GPUTUI, Served, Viewer, alive, session, upgrade_status, wait_until

from gputui.stream.io import RecordWriter
from gputui.stream.records import gpu_sample, metric

PATHS = ["/", "/ws", "/static/js/textual.js", "/static/css/xterm.css", "/download/abc", "/no/such/page"]


def write_recording(path: Path) -> None:
    """A short run on one GPU of node ``servednode`` with a falling loss."""
    writer = RecordWriter(str(path))
    try:
        for i in range(20):
            t = 1_700_000_000.0 + 5 * i
            writer.write(
                gpu_sample(
                    host="servednode",
                    gpu_id="GPU-00000000-0000-0000-0000-000000000000",
                    vendor="nvidia",
                    source="nvml",
                    time=t,
                    index=0,
                    simulated=False,
                    name="NVIDIA A100-SXM4-40GB",
                    util_gpu_pct=70,
                    mem_used_bytes=10 * 1024**3,
                    mem_total_bytes=40 * 1024**3,
                )
            )
            writer.write(metric("loss", 2.0 - 0.05 * i, step=i + 1, epoch=1, epoch_base=1, time=t))
    finally:
        writer.close()


@pytest.fixture
def replay_server(tmp_path: Path) -> Iterator[Served]:
    write_recording(tmp_path / "run.jsonl")
    served = Served(tmp_path, "replay", "run.jsonl")
    yield served
    served.close()


async def statuses(served: Served, query: str = "", cookies: dict[str, str] | None = None) -> dict[str, int]:
    async with session(cookies=cookies) as client:
        out = {}
        for path in PATHS:
            async with client.get(served.base + path + query, allow_redirects=False) as answer:
                out[path] = answer.status
        return out


# --------------------------------------------------------------------------- the token


async def test_without_the_token_every_path_and_the_websocket_are_refused(replay_server: Served) -> None:
    served = replay_server
    assert await statuses(served) == dict.fromkeys(PATHS, 401)
    assert await statuses(served, "?token=not-the-token") == dict.fromkeys(PATHS, 403)
    assert await statuses(served, cookies={served.cookie: "x" + served.token}) == dict.fromkeys(PATHS, 403)
    assert await upgrade_status(served) == 401
    assert await upgrade_status(served, cookies={served.cookie: served.token[:-1]}) == 403
    # the right token, from another site's page (a cross-site websocket): refused too
    cookies = {served.cookie: served.token}
    assert await upgrade_status(served, cookies=cookies, origin="http://evil.example") == 403
    assert served.apps() == []  # no refused request started an app
    async with session() as client, client.get(served.base + "/") as answer:
        assert "token required" in await answer.text()
        assert served.token not in await answer.text()


async def test_the_token_loads_the_page_and_moves_into_a_cookie(replay_server: Served) -> None:
    served = replay_server
    async with session() as client:
        async with client.get(f"{served.base}/?token={served.token}&fontsize=14", allow_redirects=False) as r:
            assert r.status == 303
            assert r.headers["Location"] == "/?fontsize=14"  # the token leaves the address bar
            cookie = r.cookies[served.cookie]
            assert cookie.value == served.token
            assert cookie["httponly"] is True and cookie["samesite"] == "Strict"
        async with client.get(served.base + "/?fontsize=14") as page:
            assert page.status == 200
            html = await page.text()
        assert "/static/js/textual.js" in html
        assert f'data-session-websocket-url="ws://127.0.0.1:{served.port}/ws"' in html
        async with client.get(served.base + "/static/js/textual.js") as script:
            assert script.status == 200
    assert await statuses(served, cookies={served.cookie: served.token}) == {
        "/": 200,
        "/ws": 400,  # a plain GET, not an upgrade: textual-serve's own answer, past the token
        "/static/js/textual.js": 200,
        "/static/css/xterm.css": 200,
        "/download/abc": 404,
        "/no/such/page": 404,
    }


def test_token_file_is_mode_0600_and_a_loose_one_is_refused(replay_server: Served, tmp_path: Path) -> None:
    info = replay_server.token_file.stat()
    assert stat.S_IMODE(info.st_mode) == 0o600
    assert replay_server.token_file.read_text() == replay_server.token + "\n"
    assert len(replay_server.token) >= 40
    loose = tmp_path / "loose.token"
    loose.write_text("old\n")
    loose.chmod(0o644)
    argv = [*GPUTUI, "serve", "--port", "0", "--token-file", str(loose), "replay", "run.jsonl"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"gputui: error: token file {loose} has mode 0644, readable or writable by others: refused "
        "(remove it, or chmod 600 it)"
    ]
    assert loose.read_text() == "old\n"


def test_a_new_start_makes_a_new_token(tmp_path: Path) -> None:
    write_recording(tmp_path / "run.jsonl")
    tokens = []
    for _ in range(2):
        served = Served(tmp_path, "replay", "run.jsonl")
        tokens.append(served.token)
        served.close()
    assert tokens[0] != tokens[1]


# --------------------------------------------------------------------------- viewers


async def test_two_viewers_at_once_each_its_own_app_and_the_cap(tmp_path: Path) -> None:
    write_recording(tmp_path / "run.jsonl")
    served = Served(tmp_path, "replay", "run.jsonl", options=("--max-viewers", "2"))
    try:
        async with Viewer(served) as one, Viewer(served) as two:
            for viewer in (one, two):
                assert "servednode" in await viewer.read_until("servednode", "loss")
            apps = served.apps()
            assert len(apps) == 2
            assert all(app.cmdline()[3:] == ["replay", "run.jsonl"] for app in apps)
            assert all(app.environ().get("GPUTUI_SERVED") == "1" for app in apps)
            assert await upgrade_status(served, cookies={served.cookie: served.token}) == 503
            async with session() as client, client.get(f"{served.base}/?token={served.token}") as page:
                assert page.status == 503
                assert "2 viewers are open already" in await page.text()
            assert any("refused a viewer: 2 already" in line for line in served.lines)
            await one.ws.close()  # one leaves: its app ends, a new viewer fits again
            wait_until(lambda: len(served.apps()) == 1, 60, "the first viewer's app to end")
            async with Viewer(served) as three:
                await three.read_until("servednode")
                assert len(served.apps()) == 2
    finally:
        served.close()


async def test_q_in_the_browser_ends_that_viewers_app_only(replay_server: Served) -> None:
    served = replay_server
    async with Viewer(served) as one, Viewer(served) as two:
        await one.read_until("servednode")
        await two.read_until("servednode")
        first, second = sorted(served.apps(), key=lambda p: p.create_time())
        await one.ws.send_json(["stdin", "q"])
        assert await one.closed_by_server()
        wait_until(lambda: not alive([first]), 30, "the app of the viewer who pressed q to end")
        assert alive([second]) and served.proc.poll() is None


async def test_ctrl_c_ends_every_viewers_app_and_the_ranks_it_started(tmp_path: Path) -> None:
    require_module("torch", "make demo, or pip install -e '.[demo]'")
    served = Served(tmp_path, "demo", "--ranks", "1", "--epochs", "50")
    try:
        async with Viewer(served) as one, Viewer(served) as two:
            await one.read_until("SIMULATED", timeout=120)
            await two.read_until("SIMULATED", timeout=120)

            def ranks() -> list:
                return [p for p in alive(served.descendants()) if "gputui.trainers.torch_ddp" in p.cmdline()]

            wait_until(lambda: len(ranks()) == 2, 120, "each viewer's demo rank")
            everything = served.descendants()
            assert len(served.apps()) == 2
            assert served.interrupt(90) == 0
            wait_until(lambda: not alive(everything), 30, "every app process and rank to end")
    finally:
        served.close()
    assert any("stopping: ending every viewer's gputui" in line for line in served.lines)


# --------------------------------------------------------------------------- one-line refusals


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        argv = [*GPUTUI, "serve", "--port", str(port), "replay", "run.jsonl"]
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"gputui: error: cannot listen on 127.0.0.1:{port}: in use (try another --port)"
    ]


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (
            ["jobs"],
            "gputui serve shows a screen: no COMMAND (the jobs screen), attach JOBID, demo or replay "
            "FILE...; not jobs",
        ),
        (
            ["run", "--", "true"],
            "gputui serve shows a screen: no COMMAND (the jobs screen), attach JOBID, "
            "demo or replay FILE...; not run",
        ),
        (["replay", "--headless", "x"], "gputui serve shows the screen: --headless has none to serve"),
        (["attach", "12", "--json"], "gputui serve shows the screen: --json has none to serve"),
        (
            ["attach", "12", "--port", "9"],
            "gputui serve: unrecognized arguments: --port 9 (serve's own options go before COMMAND)",
        ),
    ],
)
def test_commands_without_a_screen_are_one_line(tmp_path: Path, words: list[str], message: str) -> None:
    done = subprocess.run(
        [*GPUTUI, "serve", *words], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr.splitlines()) == (1, [f"gputui: error: {message}"])


def test_without_the_serve_extra_one_line_names_it(tmp_path: Path) -> None:
    blocked = "import sys; sys.modules['textual_serve'] = None; from gputui.cli import main; sys.exit(main())"
    argv = [sys.executable, "-c", blocked, "serve", "demo"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "gputui: error: gputui serve needs textual_serve: pip install 'gputui[serve]'"
    ]


def test_another_host_than_localhost_warns(tmp_path: Path) -> None:
    write_recording(tmp_path / "run.jsonl")
    served = Served(tmp_path, "replay", "run.jsonl", options=("--host", "0.0.0.0"))
    try:
        wait_until(lambda: any("on your laptop" in line for line in served.lines), 10, "the banner")
        assert any(line.startswith("gputui: warning: listening on 0.0.0.0") for line in served.lines)
    finally:
        served.close()
    local = Served(tmp_path, "replay", "run.jsonl")
    try:
        wait_until(lambda: any("Ctrl-C here" in line for line in local.lines), 10, "the banner")
        assert not any("warning" in line for line in local.lines)
        user = os.environ.get("USER") or __import__("getpass").getuser()
        tunnel = f"ssh -L {local.port}:localhost:{local.port} {user}@"
        assert any(tunnel in line for line in local.lines), local.output()
        assert any(f"http://localhost:{local.port}/?token={local.token}" in line for line in local.lines)
    finally:
        local.close()


async def test_the_settings_cap_applies_and_the_flag_wins(tmp_path: Path) -> None:
    write_recording(tmp_path / "run.jsonl")
    (tmp_path / "settings.toml").write_text("[serve]\nmax_viewers = 1\n")
    served = Served(tmp_path, "replay", "run.jsonl")
    try:
        assert "for at most 1 viewers" in served.lines[0]
        async with Viewer(served) as one:
            await one.read_until("servednode")
            assert await upgrade_status(served, cookies={served.cookie: served.token}) == 503
    finally:
        served.close()
    flagged = Served(tmp_path, "replay", "run.jsonl", options=("--max-viewers", "3"))
    flagged.close()
    assert "for at most 3 viewers" in flagged.lines[0]


def test_token_file_rules(tmp_path: Path) -> None:
    from gputui.serve.tokenfile import TokenFileError, write_token_file

    fresh = tmp_path / "fresh.token"
    old_umask = os.umask(0)
    try:
        write_token_file(fresh, "abc")
    finally:
        os.umask(old_umask)
    assert (fresh.read_text(), stat.S_IMODE(fresh.stat().st_mode)) == ("abc\n", 0o600)
    write_token_file(fresh, "def")  # an own 0600 file is replaced
    assert fresh.read_text() == "def\n"
    target = tmp_path / "elsewhere"
    target.write_text("keep\n")
    target.chmod(0o600)
    link = tmp_path / "link.token"
    link.symlink_to(target)
    with pytest.raises(TokenFileError, match="is not a regular file: refused"):
        write_token_file(link, "ghi")
    assert target.read_text() == "keep\n"
    with pytest.raises(TokenFileError, match="cannot write the token file"):
        write_token_file(tmp_path / "no" / "such" / "dir.token", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "fresh.token", "link.token"]


async def test_the_jobs_screen_served_says_the_shell_needs_a_terminal(tmp_path: Path) -> None:
    served = Served(tmp_path)  # no COMMAND: the jobs screen, as `gputui` alone
    try:
        async with Viewer(served) as viewer:
            await viewer.read_until("o shell", "e edit", "q quit")
            assert served.apps()[0].cmdline()[1:] == ["-m", "gputui"]
            await viewer.ws.send_json(["stdin", "o"])
            await viewer.read_until("(o) needs a terminal: not available in the browser")
            assert served.apps(), "the app keeps running"
    finally:
        served.close()
