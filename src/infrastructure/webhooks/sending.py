"""One POST of a webhook's body: signed with the secret, sent with a short timeout, never following a redirect.

The signature is `sha256=` and the hex HMAC-SHA256 of the exact bytes sent, keyed with the secret; the secret
is never sent, stored or shown. What a try came to is an `Answer`: the receiver's status, or why there was none.
"""

from __future__ import annotations

import hashlib
import hmac
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

SIGNATURE = "X-Blackboard-Signature"
MAX_ERROR = 300  # characters of a failure kept in the delivery's row


@dataclass(frozen=True, slots=True)
class Answer:
    """A try's outcome: `status` the receiver's HTTP status (None: no answer), `error` why it failed."""

    status: int | None
    error: str | None

    @property
    def received(self) -> bool:
        return self.error is None


def signature(secret: str, body: bytes) -> str:
    """The header's value: what a receiver recomputes from the bytes it got and compares (docs/webhooks.md)."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx is the receiver's answer, not a place to send the body again


_OPENER = urllib.request.build_opener(_NoRedirects())


def post(url: str, body: bytes, secret: str, headers: dict[str, str], timeout: float) -> Answer:
    """POST `body` to `url`; any 2xx is received, anything else (an error status, a refused connection, a
    timeout) an Answer saying what, in one line. Never raises."""
    request = urllib.request.Request(url, data=body, method="POST")
    for name, value in {
        "Content-Type": "application/json",
        "User-Agent": "blackboard-webhooks",
        SIGNATURE: signature(secret, body),
        **headers,
    }.items():
        request.add_header(name, value)
    try:
        with _OPENER.open(request, timeout=timeout) as answer:
            answer.read(65_536)
            return Answer(answer.status, None)
    except urllib.error.HTTPError as refused:
        return Answer(refused.code, f"HTTP {refused.code} {refused.reason}"[:MAX_ERROR])
    except urllib.error.URLError as failed:
        return Answer(None, _said(failed.reason))
    except TimeoutError:
        return Answer(None, f"no answer within {timeout:g}s")
    except Exception as failed:  # noqa: BLE001 - a receiver's fault is recorded on its delivery, never raised
        return Answer(None, _said(failed))


def _said(reason: object) -> str:
    if isinstance(reason, TimeoutError):
        return "no answer in time"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    return (str(reason) or type(reason).__name__)[:MAX_ERROR]
