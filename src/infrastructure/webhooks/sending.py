"""One POST of a webhook's body: signed with the secret, sent with a short timeout, never following a redirect.

The timeout bounds the whole try, not each read of the socket (which is all urllib's own does: a receiver
that answers a byte at a time would hold the courier, past its lease, for as long as it likes): the POST is
made on a thread of its own, and at the timeout its connection is shut and the try is no answer.

The signature is `sha256=` and the hex HMAC-SHA256 of the exact bytes sent, keyed with the secret; the secret
is never sent, stored or shown. What a try came to is an `Answer`: the receiver's status, or why there was none.
"""

from __future__ import annotations

import hashlib
import hmac
import socket
import threading
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


class _Connections:
    """The connections a try opened, so its deadline can shut them (whatever read they are blocked in)."""

    def __init__(self) -> None:
        self.made: list[Any] = []
        self._lock = threading.Lock()
        self._shut = threading.Event()  # the deadline passed: a connection that connects later is shut too

    def handlers(self) -> list[urllib.request.BaseHandler]:
        connections = self

        def do_open(handler: Any, base: Any, http_class: Any, request: Any, **options: Any) -> Any:
            def made(*args: Any, **kwargs: Any) -> Any:
                connection = http_class(*args, **kwargs)
                connect = connection.connect

                def connected() -> None:
                    connect()
                    if connections._shut.is_set():
                        _shut(connection)

                connection.connect = connected
                with connections._lock:
                    connections.made.append(connection)
                return connection

            return base.do_open(handler, made, request, **options)

        class Http(urllib.request.HTTPHandler):
            def do_open(self, http_class: Any, request: Any, **options: Any) -> Any:
                return do_open(self, urllib.request.HTTPHandler, http_class, request, **options)

        class Https(urllib.request.HTTPSHandler):
            def do_open(self, http_class: Any, request: Any, **options: Any) -> Any:
                return do_open(self, urllib.request.HTTPSHandler, http_class, request, **options)

        return [Http(), Https()]

    def shut(self) -> None:
        self._shut.set()
        with self._lock:
            made = list(self.made)
        for connection in made:
            _shut(connection)


def _shut(connection: Any) -> None:
    try:
        if connection.sock is not None:
            connection.sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def post(url: str, body: bytes, secret: str, headers: dict[str, str], timeout: float) -> Answer:
    """POST `body` to `url`; any 2xx is received, anything else (an error status, a refused connection, no
    answer within `timeout` seconds in all) an Answer saying what, in one line. Never raises."""
    connections = _Connections()
    answered: list[Answer] = []
    sending = threading.Thread(
        target=lambda: answered.append(_post(url, body, secret, headers, timeout, connections)),
        name="webhook-post",
        daemon=True,
    )
    sending.start()
    sending.join(timeout)
    if answered:
        return answered[0]
    connections.shut()  # its thread ends at once: the read it was blocked in fails
    return Answer(None, f"no answer within {timeout:g}s")


def _post(
    url: str, body: bytes, secret: str, headers: dict[str, str], timeout: float, connections: _Connections
) -> Answer:
    opener = urllib.request.build_opener(_NoRedirects(), *connections.handlers())
    request = urllib.request.Request(url, data=body, method="POST")
    for name, value in {
        "Content-Type": "application/json",
        "User-Agent": "blackboard-webhooks",
        SIGNATURE: signature(secret, body),
        **headers,
    }.items():
        request.add_header(name, value)
    try:
        with opener.open(request, timeout=timeout) as answer:
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
