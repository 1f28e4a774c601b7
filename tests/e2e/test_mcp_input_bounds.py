"""`blackboard mcp`'s standard input, raw JSON-RPC on the pipes of a real server process: a line longer
than the maximum (BLACKBOARD_MCP_MAX_LINE, 4 MiB by default) and a message nested too deep to parse
are each answered with a JSON-RPC error (the request's id when it can be found, else null), and the
server goes on serving: the ping after them is answered (issue 27 item 3)."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from typing import Any

import pytest

from tests.e2e.conftest import Cli, start_blackboard

ANSWER_WITHIN = 60.0  # seconds: a bound so a broken server fails the test instead of hanging it
PARSE_ERROR, INVALID_REQUEST = -32700, -32600


class RawServer:
    def __init__(self, cli: Cli, env: dict[str, str] | None = None) -> None:
        self.proc = start_blackboard(
            ["mcp"],
            cli.environment(env),
            cli.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def send(self, line: bytes) -> None:
        """Written from a thread of its own: a server that stopped reading fails the test, not hangs it."""
        writer = threading.Thread(target=self._write, args=(line,), daemon=True)
        writer.start()

    def _write(self, line: bytes) -> None:
        try:
            self.proc.stdin.write(line + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass

    def message(self, **fields: Any) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", **fields}).encode())

    def answer(self) -> dict[str, Any]:
        line = self._lines.get(timeout=ANSWER_WITHIN)
        assert line, f"the server ended:\n{self.stop()}"
        return json.loads(line)

    def start(self) -> RawServer:
        self.message(
            id=1,
            method="initialize",
            params={
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        )
        assert self.answer()["id"] == 1
        self.message(method="notifications/initialized")
        return self

    def ping(self, request_id: int) -> None:
        self.message(id=request_id, method="ping")
        assert self.answer() == {"jsonrpc": "2.0", "id": request_id, "result": {}}

    def stop(self) -> str:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        finally:
            self.proc.kill()
        stderr = self.proc.stderr.read().decode()
        assert "Traceback" not in stderr, stderr
        return stderr


def error_of(answer: dict[str, Any]) -> tuple[Any, int, str]:
    return answer["id"], answer["error"]["code"], answer["error"]["message"]


def test_a_line_above_the_maximum_is_refused_with_its_id_and_the_server_goes_on(cli: Cli):
    server = RawServer(cli).start()
    try:
        big = "x" * (5 * 1024 * 1024)  # above the 4 MiB default
        call = {"name": "blackboard_post", "arguments": {"topic": big}}
        server.send(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call}).encode())
        request_id, code, message = error_of(server.answer())
        assert (request_id, code) == (7, INVALID_REQUEST)
        assert "above the maximum of 4194304 bytes" in message and "BLACKBOARD_MCP_MAX_LINE" in message, (
            message
        )
        server.ping(8)

        server.send(b"[" + b"1," * (3 * 1024 * 1024) + b"1]")  # no id to be found: null
        assert error_of(server.answer())[:2] == (None, INVALID_REQUEST)
        server.ping(9)
    finally:
        server.stop()
    assert cli("signals").expect(0).stdout == "no signals\n"  # nothing was posted


def test_the_maximum_is_a_setting(cli: Cli):
    server = RawServer(cli, {"BLACKBOARD_MCP_MAX_LINE": "2048"}).start()
    try:
        server.message(id=3, method="ping", params={"_meta": {"pad": "y" * 1500}})  # under it: served
        assert server.answer() == {"jsonrpc": "2.0", "id": 3, "result": {}}
        server.message(id=4, method="ping", params={"_meta": {"pad": "y" * 3000}})
        request_id, code, message = error_of(server.answer())
        assert (request_id, code) == (4, INVALID_REQUEST) and "maximum of 2048 bytes" in message
        server.ping(5)
    finally:
        server.stop()


@pytest.mark.parametrize("value", ["10", "abc", str(2**31)])
def test_a_bad_maximum_is_refused_before_serving_naming_the_variable(cli: Cli, value):
    refused = cli("mcp", env={"BLACKBOARD_MCP_MAX_LINE": value}).expect(2)

    assert refused.stderr.startswith("blackboard: BLACKBOARD_MCP_MAX_LINE: must be a whole number of bytes")


def test_a_message_nested_too_deep_to_parse_gets_a_parse_error_and_the_server_goes_on(cli: Cli):
    server = RawServer(cli).start()
    try:
        server.send(b"[" * 10_000)
        assert error_of(server.answer())[:2] == (None, PARSE_ERROR)
        server.ping(10)

        deep = "[" * 250 + "]" * 250
        server.send(f'{{"jsonrpc": "2.0", "id": 11, "method": "ping", "params": {{"x": {deep}}}}}'.encode())
        request_id, code, message = error_of(server.answer())
        assert (request_id, code) == (11, PARSE_ERROR) and "nested too deep" in message, message
        server.ping(12)

        server.send(b"{not json")
        assert error_of(server.answer())[:2] == (None, PARSE_ERROR)
        server.send(b'{"jsonrpc": "2.0", "id": 13, "method": 5}')  # JSON, but no JSON-RPC request
        assert error_of(server.answer())[:2] == (13, INVALID_REQUEST)
        server.send(b"")  # a blank line is no message: nothing to answer
        server.ping(14)
    finally:
        server.stop()
