"""`blackboard ui` as a server: loopback by default, a token required off loopback, read-only, and a
malformed request answered with a 4xx while the server goes on answering."""

from __future__ import annotations

import socket

import pytest

from tests.e2e.conftest import Cli
from tests.e2e.web import UiServer, free_port

TOKEN = "s3cret-token-for-tests"


def test_a_bind_off_loopback_without_a_token_is_refused_before_anything_is_served(cli: Cli):
    port = str(free_port())
    refused = cli("ui", "--host", "0.0.0.0", "--port", port).expect(2)

    assert "--host" in refused.stderr and "--token" in refused.stderr, refused.stderr
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()


@pytest.mark.parametrize(
    "args, message",
    [
        (("--port", "0"), "--port"),
        (("--port", "70000"), "--port"),
        (("--host", "0.0.0.0", "--token", "short"), "--token"),
    ],
)
def test_a_bad_port_or_token_is_refused_naming_it(cli: Cli, args, message):
    refused = cli("ui", *args).expect(2)

    assert refused.stderr.startswith(f"blackboard: {message}"), refused.stderr


def test_a_port_in_use_is_one_line_and_exit_1(cli: Cli):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        failed = cli("ui", "--port", str(taken.getsockname()[1])).expect(1)

    assert failed.stderr.splitlines()[-1].startswith("blackboard: could not listen on 127.0.0.1:"), (
        failed.stderr
    )
    assert "address already in use" in failed.stderr


def test_off_loopback_every_request_must_present_the_token(cli: Cli):
    cli.post("--blackboard", "ps-t")
    server = UiServer(cli, "--host", "0.0.0.0", env={"BLACKBOARD_UI_TOKEN": TOKEN}).wait_ready()
    try:
        for path in ("/", "/api/boards", "/api/board/ps-t", "/api/stream", "/static/app.js"):
            status, _, body = server.get(path)
            assert status == 401, (path, status)
            assert b"token" in body
        assert server.get("/api/boards", {"X-Blackboard-Token": "wrong-token-123"})[0] == 401
        assert server.get(f"/api/boards?token={TOKEN}x")[0] == 401

        assert server.get("/api/boards", {"X-Blackboard-Token": TOKEN})[0] == 200
        assert server.get("/api/boards", {"Authorization": f"Bearer {TOKEN}"})[0] == 200
        status, headers, page = server.get(f"/?token={TOKEN}")
        assert status == 200 and b"<title>blackboard</title>" in page
        cookie = headers["set-cookie"].split(";")[0]  # what the page's own requests then carry
        assert "HttpOnly" in headers["set-cookie"]
        status, _, body = server.get("/api/board/ps-t", {"Cookie": cookie})
        assert status == 200 and b"ps-t" in body
    finally:
        server.stop()


def test_the_server_refuses_what_it_does_not_serve_and_survives_malformed_requests(cli: Cli):
    signal_id = cli.post("--blackboard", "ps-m")["signal_id"]
    server = UiServer(cli).wait_ready()
    try:
        answers = {
            "/api/board/ps-m?at=abc": 400,
            "/api/board/ps-m?at=-1": 400,
            "/api/board/ps-m?at=" + "9" * 30: 400,
            "/api/events?limit=0": 400,
            "/api/events?since=1e3": 400,
            "/api/events?limit=" + "1" * 5000: 400,
            "/api/stream?since=x": 400,
            "/api/board/%01bad": 400,
            "/api/entry/ps-m/no/such/key": 404,
            "/api/entry/ps-m/" + "k" * 300: 400,
            "/static/../pyproject.toml": 404,
            "/static/%2e%2e/%2e%2e/%2e%2e/pyproject.toml": 404,
            "/static/..%2f..%2fauth.py": 404,
            "/nothing": 404,
            "/api/board/ps-m?" + "a=1&" * 5000: 200,
        }
        for path, expected in answers.items():
            assert server.get(path)[0] == expected, path
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            assert server.get("/api/boards", method=method)[0] == 405, method
        assert server.get("/", {"Host": "attacker.example"})[0] == 400  # DNS rebinding: not our host
        for garbage in (
            b"\x00\xff\r\n\r\n",
            b"GET /" + b"a" * 200_000 + b" HTTP/1.1\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X: " + b"y" * 100_000 + b"\r\n\r\n",
            b"GET /api/boards HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
        ):
            with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
                raw.sendall(garbage)
                raw.recv(1024)  # an error status, or the connection closed: either way, not a crash

        status, _, body = server.get("/api/board/ps-m")
        assert status == 200 and signal_id.encode() in body
        assert server.proc.poll() is None
    finally:
        printed = server.stop()
    assert "Traceback" not in printed
