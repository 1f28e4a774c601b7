"""`blackboard ui` as a server: loopback by default, a token required off loopback, read-only, and a
malformed request answered with a 4xx while the server goes on answering."""

from __future__ import annotations

import re
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
        for path in ("/", "/api/boards", "/api/board/ps-t", "/api/stream", "/static/app.js", "/metrics"):
            status, _, body = server.get(path)
            assert status == 401, (path, status)
            assert b"token" in body
        assert server.get("/api/boards", {"X-Blackboard-Token": "wrong-token-123"})[0] == 401
        assert server.get(f"/api/boards?token={TOKEN}x")[0] == 401

        assert server.get("/api/boards", {"X-Blackboard-Token": TOKEN})[0] == 200
        assert server.get("/api/boards", {"Authorization": f"Bearer {TOKEN}"})[0] == 200
        scraped = server.get("/metrics", {"Authorization": f"Bearer {TOKEN}"})  # as Prometheus sends it
        assert scraped[0] == 200 and b'blackboard_signals{board="ps-t",status="POSTED"} 1.0' in scraped[2]
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


SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}


def assert_guarded(path: str, headers: dict[str, str]) -> None:
    for name, value in SECURITY_HEADERS.items():
        assert headers.get(name) == value, (path, name, headers)
    policy = headers.get("content-security-policy", "")
    assert "frame-ancestors 'none'" in policy, (path, policy)
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy, (path, policy)
    assert "default-src 'none'" in policy, (path, policy)


def test_every_answer_carries_the_security_headers_pages_api_stream_assets_and_errors(cli: Cli):
    cli.post("--blackboard", "ps-h")
    server = UiServer(cli).wait_ready()
    try:
        for path, expected in {
            "/": 200,
            "/api/boards": 200,
            "/api/board/ps-h": 200,
            "/api/events?board=ps-h": 200,
            "/static/app.js": 200,
            "/static/style.css": 200,
            "/api/board/ps-h?at=abc": 400,
            "/nothing": 404,
            "/static/../pyproject.toml": 404,
        }.items():
            status, headers, _ = server.get(path)
            assert status == expected, (path, status)
            assert_guarded(path, headers)
        status, headers, _ = server.get("/api/boards", method="POST")
        assert status == 405
        assert_guarded("POST /api/boards", headers)
        status, headers, _ = server.get("/", {"Host": "attacker.example"})
        assert status == 400
        assert_guarded("/ from another Host", headers)

        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:  # the live stream
            raw.sendall(b"GET /api/stream?since=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            head = b""
            while b"\r\n\r\n" not in head:
                head += raw.recv(4096)
        lines = head.split(b"\r\n\r\n")[0].decode().split("\r\n")
        assert lines[0].startswith("HTTP/1.1 200"), lines
        assert_guarded("/api/stream", {k.lower(): v.strip() for k, v in (x.split(":", 1) for x in lines[1:])})
    finally:
        server.stop()


def test_the_token_gate_s_refusal_carries_the_security_headers_too(cli: Cli):
    server = UiServer(cli, "--host", "0.0.0.0", env={"BLACKBOARD_UI_TOKEN": TOKEN}).wait_ready()
    try:
        status, headers, _ = server.get("/")
        assert status == 401
        assert_guarded("/ without a token", headers)
    finally:
        server.stop()


def test_the_page_has_no_inline_script_or_style(cli: Cli):
    server = UiServer(cli).wait_ready()
    try:
        _, _, page = server.get("/")
    finally:
        server.stop()
    text = page.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)|<style|\sstyle=|\son[a-z]+=", text, re.IGNORECASE), text
    assert '<script src="/static/app.js"></script>' in text


def test_a_board_whose_id_holds_a_slash_opens_by_path_or_by_query(cli: Cli):
    signal_id = cli.post("--blackboard", "team/ps-1")["signal_id"]
    cli.ok("write", "notes/a", "--blackboard", "team/ps-1", "--value", '"x"', "--author", "ana")
    server = UiServer(cli).wait_ready()
    try:
        for path in ("/api/board?board=team%2Fps-1", "/api/board/team%2Fps-1", "/api/board/team/ps-1"):
            status, _, body = server.get(path)
            assert status == 200, (path, status, body)
            assert signal_id.encode() in body and b'"blackboard_id":"team/ps-1"' in body, (path, body)
        status, _, body = server.get("/api/entry?board=team%2Fps-1&key=notes%2Fa")
        assert status == 200 and b'"x"' in body, (status, body)
        assert server.get("/api/entry?board=team%2Fps-1")[0] == 400
        assert server.get("/api/board")[0] == 400
    finally:
        server.stop()


@pytest.mark.parametrize("resumed", ["9" * 20, "9" * 19, "1" * 400, "-1", "12a", "\u00b2"])
def test_a_last_event_id_that_is_no_position_is_a_400_naming_it_and_the_server_goes_on(cli: Cli, resumed):
    cli.post("--blackboard", "ps-r")
    server = UiServer(cli).wait_ready()
    try:
        status, _, body = server.get("/api/stream", {"Last-Event-ID": resumed})
        assert status == 400, (resumed, status, body)
        assert b"Last-Event-ID" in body
        assert server.get("/api/board/ps-r")[0] == 200
    finally:
        printed = server.stop()
    assert "Traceback" not in printed and "failed" not in printed, printed


def test_with_a_token_the_host_check_holds_and_allow_host_adds_the_names_a_proxy_uses(cli: Cli):
    """A token does not turn the Host check off (a page reached through DNS rebinding names its own Host):
    only the loopback names, the bind host and the names of --allow-host are answered."""
    cli.post("--blackboard", "ps-hosts")
    token = {"X-Blackboard-Token": TOKEN}
    server = UiServer(cli, "--host", "0.0.0.0", env={"BLACKBOARD_UI_TOKEN": TOKEN}).wait_ready(token)
    try:
        for host in ("attacker.example", f"attacker.example:{server.port}", "0.0.0.0"):  # 0.0.0.0: no name
            status, headers, _ = server.get("/api/boards", {**token, "Host": host})
            assert status == 400, (host, status)
            assert_guarded(f"Host {host}", headers)
        assert server.get("/api/boards", {"Host": "attacker.example"})[0] == 400  # before the token gate
        assert server.get("/api/boards", {**token, "Host": f"localhost:{server.port}"})[0] == 200
    finally:
        server.stop()
    allowing = ("--allow-host", "board.example.com", "--allow-host", "https://proxy.example.org")
    server = UiServer(cli, "--host", "0.0.0.0", *allowing, env={"BLACKBOARD_UI_TOKEN": TOKEN}).wait_ready(
        token
    )
    try:
        for host, expected in {
            "attacker.example": 400,
            f"board.example.com:{server.port}": 200,
            "proxy.example.org": 200,
            f"127.0.0.1:{server.port}": 200,
        }.items():
            assert server.get("/api/boards", {**token, "Host": host})[0] == expected, host
    finally:
        server.stop()


@pytest.mark.parametrize("name", ["*", "a/b", "https://board.example.com/path", "ftp://board", "me@board"])
def test_an_allow_host_that_is_no_name_or_origin_is_refused_naming_it(cli: Cli, name):
    refused = cli("ui", "--port", str(free_port()), "--allow-host", name).expect(2)

    assert refused.stderr.startswith("blackboard: --allow-host: must be a host name"), refused.stderr
