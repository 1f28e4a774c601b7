"""One webhook POST against real sockets (webhooks/sending.py): the timeout bounds the whole try, so a receiver
that answers a byte at a time is no answer and its connection is shut, as one that answers at once is
received."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from blackboard.infrastructure.webhooks.sending import post
from tests.waiting import wait_until

DRIP_EVERY = (
    0.2  # seconds between the bytes of a dripping receiver's answer: each read well within the timeout
)


class Dripping:
    """A receiver that reads the request, then answers a byte at a time for as long as the client listens."""

    def __init__(self) -> None:
        self._server = socket.socket()
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(1)
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}/hooks"
        self.cut = threading.Event()  # the client shut the connection while it dripped
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        client, _ = self._server.accept()
        with client:
            client.recv(65_536)
            answer = b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10_000
            for byte in answer:
                if self._stop.wait(DRIP_EVERY):
                    return
                try:
                    client.send(bytes([byte]))
                except OSError:
                    self.cut.set()
                    return

    def close(self) -> None:
        self._stop.set()
        self._server.close()


@pytest.fixture
def dripping() -> Iterator[Dripping]:
    made = Dripping()
    yield made
    made.close()


def test_a_receiver_that_answers_a_byte_at_a_time_is_no_answer_and_its_connection_is_shut(dripping):
    answer = post(dripping.url, b"{}", "whsec-test", {}, 1.0)

    assert (answer.status, answer.error) == (None, "no answer within 1s")
    wait_until(dripping.cut.is_set, 30, "the receiver to find its connection shut")


def test_a_receiver_that_answers_at_once_has_received_it():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    got: list[bytes] = []

    def serve() -> None:
        client, _ = server.accept()
        with client:
            got.append(client.recv(65_536))
            client.sendall(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")

    threading.Thread(target=serve, daemon=True).start()
    try:
        answer = post(f"http://127.0.0.1:{server.getsockname()[1]}/hooks", b"{}", "whsec-test", {}, 10.0)
    finally:
        server.close()

    assert (answer.status, answer.error) == (204, None)
    assert got and b"X-Blackboard-Signature: sha256=" in got[0]
