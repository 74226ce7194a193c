"""A real browser on ``gputui serve demo``: headless Chromium (Debian's ``chromium``) opens the address
the server printed, with its token, and shows the demo's dashboard; the same page without the token
shows the refusal.

Chromium is driven through its DevTools protocol (a websocket, spoken with aiohttp): the page's own
websocket frames are read from the Network events (xterm.js draws on a canvas, so the page has no text
to query), the token's cookie is checked to be out of the page's JavaScript's reach, and a screenshot
of each page is written (``GPUTUI_SERVE_SCREENSHOTS=DIR`` keeps them, for a person to look at).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from ci_helpers import in_ci, require_module
from serve_helpers import Served, screen_text, wait_until

aiohttp = require_module("aiohttp", "pip install -e '.[serve]'")
require_module("textual_serve", "pip install -e '.[serve]'")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
LOSS = re.compile(r"loss\s+\d+\.\d+")


@pytest.fixture
def chromium(tmp_path: Path):
    if CHROMIUM is None:
        if in_ci():
            pytest.fail("chromium is required in CI (apt-get install -y chromium)", pytrace=False)
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    profile = tmp_path / "chromium-profile"
    argv = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--remote-debugging-port=0",
        "--window-size=1400,900",
        "about:blank",
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        active = profile / "DevToolsActivePort"
        wait_until(lambda: active.exists() and len(active.read_text().split()) >= 2, 60, "Chromium to start")
        yield int(active.read_text().split()[0])
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class DevTools:
    """One page of Chromium over the DevTools protocol: commands, and the events they cause."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.events: asyncio.Queue[dict] = asyncio.Queue()
        self.answers: dict[int, asyncio.Future] = {}
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.ws:
            data = message.json()
            if "id" in data and data["id"] in self.answers:
                self.answers.pop(data["id"]).set_result(data)
            elif "method" in data:
                await self.events.put(data)

    async def send(self, method: str, **params: object) -> dict:
        key = next(self.ids)
        self.answers[key] = asyncio.get_running_loop().create_future()
        await self.ws.send_json({"id": key, "method": method, "params": params})
        answer = await asyncio.wait_for(self.answers[key], 60)
        assert "error" not in answer, answer
        return answer.get("result", {})

    async def evaluate(self, expression: str) -> object:
        result = await self.send(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        return result["result"].get("value")

    async def screenshot(self, path: Path) -> None:
        shot = await self.send("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))
        keep = os.environ.get("GPUTUI_SERVE_SCREENSHOTS")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(keep) / path.name)

    async def screen_until(self, words: tuple[str, ...], pattern: re.Pattern[str], timeout: float) -> str:
        """The text of the page's websocket frames (the app's output) until it holds ``words`` and
        ``pattern``."""
        frames = b""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not (all(w in screen_text(frames) for w in words) and pattern.search(screen_text(frames))):
            left = deadline - loop.time()
            assert left > 0, f"not on the page: {words} {pattern.pattern}: {screen_text(frames)[-1500:]!r}"
            event = await asyncio.wait_for(self.events.get(), left)
            if event["method"] == "Network.webSocketFrameReceived":
                response = event["params"]["response"]
                if response["opcode"] == 2:  # binary: the app's terminal output
                    frames += base64.b64decode(response["payloadData"])
        return screen_text(frames)


async def page_of(port: int) -> tuple[aiohttp.ClientSession, DevTools]:
    client = aiohttp.ClientSession()
    async with client.get(f"http://127.0.0.1:{port}/json/list") as answer:
        targets = await answer.json(content_type=None)
    target = next(t for t in targets if t["type"] == "page")
    ws = await client.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0)
    return client, DevTools(ws)


async def test_chromium_shows_the_demo_dashboard_with_the_token_and_the_refusal_without(
    chromium: int, tmp_path: Path
) -> None:
    require_module("torch", "make demo, or pip install -e '.[demo]'")
    served = Served(tmp_path, "demo", "--ranks", "1", "--epochs", "50")
    client, page = await page_of(chromium)
    try:
        printed = next(line for line in served.lines if "then open:" in line).split()[-1]
        assert printed == f"http://localhost:{served.port}/?token={served.token}"
        await page.send("Network.enable")
        await page.send("Page.enable")
        await page.send("Page.navigate", url=printed)
        screen = await page.screen_until(("SIMULATED",), LOSS, timeout=180)
        assert "SIMULATED" in screen and LOSS.search(screen)
        await page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        assert await page.evaluate("document.body.classList.contains('-first-byte')") is True
        assert await page.evaluate("location.href") == f"http://localhost:{served.port}/"  # token gone
        assert served.token not in str(await page.evaluate("document.cookie"))  # HttpOnly
        await page.screenshot(tmp_path / "serve-demo.png")
        assert len(served.apps()) == 1

        await page.send("Network.clearBrowserCookies")
        await page.send("Page.navigate", url=f"http://localhost:{served.port}/")
        text = await _body_text_when(page, "token required")
        assert "Open the address that gputui serve printed" in text
        await page.screenshot(tmp_path / "serve-refused.png")
        wait_until(lambda: len(served.apps()) == 0, 60, "the first page's app to end once it was left")
    finally:
        page.reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await page.reader
        await page.ws.close()
        await client.close()
        served.close()


async def _body_text_when(page: DevTools, words: str, timeout: float = 30) -> str:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        text = str(await page.evaluate("document.body ? document.body.innerText : ''"))
        if words in text:
            return text
        assert loop.time() < deadline, f"{words!r} not on the page: {text!r}"
        await asyncio.sleep(0.2)
