"""The model API runners' HTTP calls, cut off when their run stops.

A run's loop thread spends its time in an SDK call, reading its socket: the next event of a stream, an answer
not yet sent. A stop (a cancel, the timeout, the claim lost, the worker's grace over) abandons that thread at
once (api_loop.run_watched); without more, its call would go on: a streamed answer read to its end, tokens
spent, a connection held open for an answer nobody wants. So every connection of an SDK client made here
notes which thread is reading or writing it, and `CALLS.cut(thread)` shuts down the socket that thread is in
(the server sees the connection end at once; the thread's read ends with an error) and refuses that thread
any further read or write, a new connection's included.

The SDK client is the SDK's own default one (its timeouts, connection limits, keep-alive and proxies as the
SDK sets them); its transports' network backend is wrapped, which reaches into httpx2's and httpcore2's
attributes: should an SDK release move them, the client is used as it is and a warning says that a stopped
run's call will no longer be cut off (tests/runners/test_api_runners.py fails then).
"""

from __future__ import annotations

import logging
import socket
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

logger = logging.getLogger("blackboard.worker")

CUT = "the run was stopped: its model call was closed"


class Calls:
    """Which socket each thread is reading or writing now, and the threads whose calls were cut off."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._using: dict[threading.Thread, Any] = {}
        self._cut: weakref.WeakSet[threading.Thread] = (
            weakref.WeakSet()
        )  # a thread, not its number: never reused

    @contextmanager
    def using(self, sock: Any) -> Iterator[None]:
        me = threading.current_thread()
        with self._lock:
            if me in self._cut:
                import httpcore2  # the SDKs' HTTP library, there when a runner's SDK is

                raise httpcore2.ReadError(CUT)
            self._using[me] = sock
        try:
            yield
        finally:
            with self._lock:
                if self._using.get(me) is sock:
                    del self._using[me]

    def cut(self, thread: threading.Thread) -> None:
        """End the call `thread` is in, and any it would make next."""
        with self._lock:  # shut down while the thread cannot hand the connection back to the pool
            self._cut.add(thread)
            sock = self._using.get(thread)
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)  # never blocks
                except OSError:
                    pass  # closed already


CALLS = Calls()


class _Stream:
    """A connection (an httpcore2.NetworkStream) that tells CALLS which thread reads or writes it."""

    def __init__(self, stream: Any, calls: Calls) -> None:
        self._stream, self._calls = stream, calls

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with self._calls.using(self._stream.get_extra_info("socket")):
            return self._stream.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        with self._calls.using(self._stream.get_extra_info("socket")):
            self._stream.write(buffer, timeout)

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> Any:
        return _Stream(self._stream.start_tls(ssl_context, server_hostname, timeout), self._calls)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend:
    """The pool's own backend (an httpcore2.NetworkBackend), its connections wrapped in _Stream."""

    def __init__(self, backend: Any, calls: Calls) -> None:
        self._backend, self._calls = backend, calls

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> _Stream:
        stream = self._backend.connect_tcp(host, port, timeout, local_address, socket_options)
        return _Stream(stream, self._calls)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> _Stream:
        return _Stream(self._backend.connect_unix_socket(path, timeout, socket_options), self._calls)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def cuttable(make: Callable[[], Any], calls: Calls = CALLS) -> Any:
    """The SDK's default HTTP client (`make`: anthropic.DefaultHttpxClient, openai.DefaultHttpxClient), its
    connections (proxied ones too) watched by `calls`."""
    client = make()
    try:
        transports = [client._transport, *client._mounts.values()]
        for transport in transports:
            if transport is not None:
                pool = transport._pool
                pool._network_backend = _Backend(pool._network_backend, calls)
    except AttributeError as exc:
        logger.warning(
            "a stopped run's model call will not be cut off (the SDK's HTTP client changed: %s)", exc
        )
    return client
