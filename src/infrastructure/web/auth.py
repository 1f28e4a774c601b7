"""Who may read the page: a loopback bind serves this machine only; any other bind needs a token
that every request presents (a header, `?token=`, or the cookie that `?token=` sets)."""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from blackboard.domain.errors import InvalidInput

TOKEN_ENV = "BLACKBOARD_UI_TOKEN"
COOKIE = "blackboard_ui_token"
TOKEN_RULE = re.compile(r"[A-Za-z0-9._~+/=-]{8,256}")  # safe in a header, a query and a cookie

Scope = MutableMapping[str, Any]
ASGI = Callable[[Scope, Any, Any], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """Local means loopback: `localhost`, 127.0.0.0/8, ::1. Anything else (0.0.0.0 included) is not."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, port: int, token: str | None) -> None:
    """Refuse (exit 2) a bind the page could be read through from another machine without a token."""
    if not 0 < port < 65536:
        raise InvalidInput("--port", f"must be a TCP port, 1 to 65535, got {port}")
    if not host:
        raise InvalidInput("--host", "must be an address or a host name")
    if token is not None and not TOKEN_RULE.fullmatch(token):
        raise InvalidInput("--token", "must be 8 to 256 characters of A-Z a-z 0-9 . _ ~ + / = -")
    if not is_loopback(host) and not token:
        raise InvalidInput(
            "--host",
            f"{host} is not a loopback address: give --token T (or {TOKEN_ENV}), "
            "which every request must then present",
        )


class TokenGate:
    """ASGI middleware: a request without the token gets 401; `?token=` also sets a cookie, so the
    page's own requests (fetch, EventSource, which can send no header) carry it."""

    def __init__(self, app: ASGI, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.requests import Request
        from starlette.responses import PlainTextResponse

        request = Request(scope)
        header = request.headers.get("authorization", "")
        given = [
            request.headers.get("x-blackboard-token"),
            header[7:] if header.lower().startswith("bearer ") else None,
            request.cookies.get(COOKIE),
            request.query_params.get("token"),
        ]
        if not any(g and hmac.compare_digest(g.encode(), self._token) for g in given):
            response = PlainTextResponse(
                "a token is required: open the page as /?token=T (the --token "
                "of `blackboard ui`), or send the header X-Blackboard-Token",
                status_code=401,
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, _setting_cookie(send, self._token.decode()) if given[3] else send)


def _setting_cookie(send: Any, token: str) -> Any:
    async def sending(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            cookie = f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"
            message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie.encode())]
        await send(message)

    return sending
