"""Headers every answer carries (pages, the JSON endpoints, the live stream, static files, and errors,
the token gate's 401 and the Host check's 400 included): a Content-Security-Policy that lets the page
run only its own script and style (no inline script, nothing from elsewhere, never in a frame), no
content sniffing, no Referer sent on."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]
_NAMES = {name for name, _ in SECURITY_HEADERS}


class SecurityHeaders:
    """ASGI middleware, the outermost: it adds the headers to the start of every HTTP answer."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in _NAMES]
                message["headers"] = [*kept, *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, sending)
