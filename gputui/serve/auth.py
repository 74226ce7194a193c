"""The token that guards ``gputui serve``: every HTTP path and the websocket upgrade need it.

textual-serve has no authentication of its own, and a localhost port on a shared login node is open to
every user of that node: whoever reaches it gets an app running as you (which can cancel your jobs). So
each start makes a random token (:func:`new_token`). The first page load carries it as ``?token=...``;
the answer sets it as a cookie (HttpOnly, SameSite=Strict) and redirects to the same address without it,
so the page's own requests (scripts, fonts, the websocket) carry the cookie. Without a token a request
is refused with 401, with a wrong one 403; a websocket upgrade from another site's page (its ``Origin``
is not this server) with 403 too. Tokens are compared with :func:`hmac.compare_digest`.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable
from html import escape

from aiohttp import hdrs, web
from yarl import URL

TOKEN_PARAM = "token"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def cookie_name(port: int) -> str:
    """The cookie holding the token; named by port, as cookies are shared by every port of a host."""
    return f"gputui_serve_{port}"


def page(status: int, title: str, text: str) -> web.Response:
    """A small HTML page saying why a request was refused (the body names no token)."""
    body = (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{escape(title)}</title></head>"
        f"<body style='font-family: monospace; background: #0c181f; color: #eee; padding: 2em'>"
        f"<h1>{escape(title)}</h1><p>{escape(text)}</p></body></html>"
    )
    return web.Response(
        status=status, text=body, content_type="text/html", headers={"Cache-Control": "no-store"}
    )


def _same_origin(request: web.Request) -> bool:
    """A websocket upgrade must come from this server's own page (browsers always send ``Origin``)."""
    origin = request.headers.get(hdrs.ORIGIN)
    if origin is None:  # not a browser (a script holding the token)
        return True
    return URL(origin).raw_authority == request.host


def token_gate(token: str, cookie: str) -> Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]:
    """The aiohttp middleware that refuses every request without ``token`` (query or cookie)."""
    expected = token.encode()

    def matches(supplied: str) -> bool:
        return hmac.compare_digest(supplied.encode(), expected)

    @web.middleware
    async def require_token(request: web.Request, handler: Handler) -> web.StreamResponse:
        upgrade = request.headers.get(hdrs.UPGRADE, "").lower() == "websocket"
        supplied = request.query.get(TOKEN_PARAM)
        from_query = supplied is not None
        if supplied is None:
            supplied = request.cookies.get(cookie)
        if supplied is None:
            return page(
                401,
                "gputui serve: token required",
                "Open the address that gputui serve printed in its terminal: it ends in ?token=... "
                "(each start of gputui serve makes a new token).",
            )
        if not matches(supplied) or (upgrade and not _same_origin(request)):
            return page(
                403,
                "gputui serve: wrong token",
                "This token is not the one of this gputui serve: open the address it printed at its "
                "last start.",
            )
        if (
            from_query and not upgrade
        ):  # first page load: keep the token in a cookie, drop it from the address
            target = request.rel_url.without_query_params(TOKEN_PARAM)
            answer = web.HTTPSeeOther(location=str(target))
            answer.set_cookie(cookie, token, httponly=True, samesite="Strict", path="/")
            return answer
        return await handler(request)

    return require_token
