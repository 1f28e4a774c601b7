"""Local stand-ins for the model APIs the runners call: an HTTP server on 127.0.0.1 that speaks the
Anthropic Messages API (streaming SSE as the API sends it: message_start, content_block_start/delta/stop,
message_delta with usage, message_stop; or one JSON message) and the OpenAI Chat Completions API, and
answers from a script of turns. It records every request, so a test asserts what the client sent.

No test calls a real model: Claude Code, the anthropic SDK and the openai SDK reach this server through
ANTHROPIC_BASE_URL / OPENAI_BASE_URL.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Turn:
    """One answer of the model: text, tool calls, or an HTTP error; after `delay` seconds."""

    text: str = ""
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    input_tokens: int = 100
    output_tokens: int = 20
    status: int = 200
    error_type: str = ""
    error_message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    # sent as it is instead of an answer built from the fields above: for the Messages API, the stream's
    # events as (name, data) with data an object or raw text; for Chat Completions, the body (an object, or
    # raw text sent as JSON)
    raw: Any = None


def raw(body: Any) -> Turn:
    """An answer exactly as given (a hostile or broken server): see Turn.raw."""
    return Turn(raw=body)


def say(text: str, **usage: int) -> Turn:
    return Turn(text=text, **usage)


def call(name: str, arguments: dict[str, Any], text: str = "", **usage: int) -> Turn:
    return Turn(text=text, tool_calls=((name, arguments),), **usage)


def fail(status: int, error_type: str, message: str, headers: dict[str, str] | None = None) -> Turn:
    return Turn(status=status, error_type=error_type, error_message=message, headers=headers or {})


def slow(seconds: float, turn: Turn) -> Turn:
    return Turn(**{**turn.__dict__, "delay": seconds})


class ApiLimit:
    """A model API's own rate limit, kept as Anthropic documents its own: a bucket of a minute's worth of
    requests (and tokens), refilled continuously. A call past it gets a 429 with `retry-after`; every answer
    carries the rate-limit headers (Anthropic's `anthropic-ratelimit-*` and OpenAI's `x-ratelimit-*`).
    `answered` keeps (time.monotonic, status) of each model call, for a bench to count."""

    def __init__(self, requests_per_minute: int, tokens_per_minute: int | None = None) -> None:
        self.rpm, self.tpm = requests_per_minute, tokens_per_minute
        self._requests, self._tokens = float(requests_per_minute), float(tokens_per_minute or 0)
        self._at = time.monotonic()
        self._lock = threading.Lock()
        self.answered: list[tuple[float, int]] = []

    def admit(self, tokens: int) -> tuple[bool, dict[str, str]]:
        """Whether a call costing `tokens` goes through now, and the headers its answer carries."""
        with self._lock:
            now = time.monotonic()
            elapsed, self._at = now - self._at, now
            self._requests = min(float(self.rpm), self._requests + self.rpm * elapsed / 60)
            if self.tpm is not None:
                self._tokens = min(float(self.tpm), self._tokens + self.tpm * elapsed / 60)
            short = [(1 - self._requests) * 60 / self.rpm] if self._requests < 1 else []
            if self.tpm is not None and self._tokens < tokens:
                short.append((tokens - self._tokens) * 60 / self.tpm)
            admitted = not short
            if admitted:
                self._requests -= 1
                if self.tpm is not None:
                    self._tokens -= tokens
            self.answered.append((now, 200 if admitted else 429))
            headers = {
                "anthropic-ratelimit-requests-limit": str(self.rpm),
                "anthropic-ratelimit-requests-remaining": str(int(max(0.0, self._requests))),
                "x-ratelimit-limit-requests": str(self.rpm),
                "x-ratelimit-remaining-requests": str(int(max(0.0, self._requests))),
            }
            if self.tpm is not None:
                left = str(int(max(0.0, self._tokens)))
                headers |= {
                    "anthropic-ratelimit-tokens-limit": str(self.tpm),
                    "anthropic-ratelimit-tokens-remaining": left,
                    "x-ratelimit-limit-tokens": str(self.tpm),
                    "x-ratelimit-remaining-tokens": left,
                }
            if not admitted:
                headers["retry-after"] = str(max(1, round(max(short) + 0.5)))
            return admitted, headers


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def is_model_call(self) -> bool:
        return self.method == "POST" and (
            self.path.startswith("/v1/messages")
            and "count_tokens" not in self.path
            or self.path.startswith("/v1/chat/completions")
        )


class StandIn:
    """Answers the model calls with `script`'s turns in order (a function gets each request's body and
    returns its turn); once the script is spent, every further call gets `after` (a plain answer)."""

    def __init__(
        self, script: Sequence[Turn] | Callable[[dict[str, Any]], Turn] = (), limit: ApiLimit | None = None
    ) -> None:
        """`limit`: the API's own rate limit (a 429 past it), none by default."""
        self._script = script if callable(script) else list(script)
        self.limit = limit
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._served = 0
        self.after = say("(the stand-in's script is spent)")
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def model_calls(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.is_model_call]

    def start(self) -> StandIn:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next_turn(self, body: dict[str, Any]) -> Turn:
        with self._lock:
            if callable(self._script):
                return self._script(body)
            turn = self._script[self._served] if self._served < len(self._script) else self.after
            self._served += 1
            return turn

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _record(self, body: Any) -> Request:
                request = Request(self.command, self.path, dict(self.headers), body)
                with stand_in._lock:
                    stand_in.requests.append(request)
                return request

            def do_HEAD(self) -> None:  # Claude Code's connectivity check (/api/hello)
                self._record(None)
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._record(None)
                self._json(200, {"data": [], "has_more": False, "first_id": None, "last_id": None})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", errors="replace")
                request = self._record(body)
                if not request.is_model_call:  # count_tokens, telemetry, anything else
                    self._json(200, {"input_tokens": 10})
                    return
                turn = stand_in._next_turn(body)
                if turn.delay:
                    time.sleep(turn.delay)
                self._limit_headers: dict[str, str] = {}
                if stand_in.limit is not None and turn.status == 200:
                    admitted, self._limit_headers = stand_in.limit.admit(
                        turn.input_tokens + turn.output_tokens
                    )
                    if not admitted:
                        turn = fail(429, "rate_limit_error", "rate limited (the stand-in's own limit)", {})
                try:
                    if turn.status != 200:
                        self._error(turn)
                    elif turn.raw is not None and self.path.startswith("/v1/chat/completions"):
                        self._json(200, turn.raw)
                    elif turn.raw is not None:
                        self._sse(turn.raw)
                    elif self.path.startswith("/v1/chat/completions"):
                        self._json(200, chat_completion(body, turn))
                    elif body.get("stream"):
                        self._sse(message_events(body, turn))
                    else:
                        self._json(200, message(body, turn))
                except (
                    BrokenPipeError,
                    ConnectionResetError,
                ):  # the client gave up on the call (a stopped run)
                    self.close_connection = True

            def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
                out = (data if isinstance(data, str) else json.dumps(data)).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(out)))
                for name, value in {**(headers or {}), **getattr(self, "_limit_headers", {})}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(out)

            def _error(self, turn: Turn) -> None:
                if self.path.startswith("/v1/chat/completions"):
                    data: dict[str, Any] = {
                        "error": {"message": turn.error_message, "type": turn.error_type, "code": None}
                    }
                else:
                    data = {
                        "type": "error",
                        "error": {"type": turn.error_type, "message": turn.error_message},
                    }
                self._json(turn.status, data, {"x-should-retry": "false", **turn.headers})

            def _sse(self, events: list[tuple[str, Any]]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                for name, value in getattr(self, "_limit_headers", {}).items():
                    self.send_header(name, value)
                self.end_headers()
                for name, data in events:
                    text = data if isinstance(data, str) else json.dumps(data)
                    self.wfile.write(f"event: {name}\ndata: {text}\n\n".encode())
                    self.wfile.flush()
                self.close_connection = True

        return Handler


def _blocks(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
    for name, arguments in turn.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": name, "input": arguments}
        )
    return blocks


def message(body: dict[str, Any], turn: Turn) -> dict[str, Any]:
    """A Messages API answer as one JSON message."""
    return {
        "id": f"msg_{uuid.uuid4().hex[:20]}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude"),
        "content": _blocks(turn),
        "stop_reason": "tool_use" if turn.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens},
    }


def message_events(body: dict[str, Any], turn: Turn) -> list[tuple[str, dict[str, Any]]]:
    """A Messages API answer as the stream of server-sent events the API sends."""
    start = {**message(body, turn), "content": [], "stop_reason": None}
    start["usage"] = {"input_tokens": turn.input_tokens, "output_tokens": 1}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(_blocks(turn)):
        if block["type"] == "text":
            opened, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opened}),
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": "tool_use" if turn.tool_calls else "end_turn",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": turn.output_tokens},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def chat_completion(body: dict[str, Any], turn: Turn) -> dict[str, Any]:
    """An OpenAI Chat Completions answer."""
    calls = [
        {
            "id": f"call_{uuid.uuid4().hex[:16]}",
            "type": "function",
            "function": {"name": n, "arguments": json.dumps(a)},
        }
        for n, a in turn.tool_calls
    ]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "gpt"),
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": turn.text or None,
                    **({"tool_calls": calls} if calls else {}),
                },
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": turn.input_tokens,
            "completion_tokens": turn.output_tokens,
            "total_tokens": turn.input_tokens + turn.output_tokens,
        },
    }


@contextmanager
def stand_in(
    script: Sequence[Turn] | Callable[[dict[str, Any]], Turn] = (), limit: ApiLimit | None = None
) -> Iterator[StandIn]:
    server = StandIn(script, limit).start()
    try:
        yield server
    finally:
        server.stop()


MISSING: Any = object()  # a field left out of an answer


def stream_of(
    blocks: Sequence[tuple[dict[str, Any], dict[str, Any] | None]],
    start_usage: Any = MISSING,
    delta_usage: Any = MISSING,
    stop: Any = "end_turn",
) -> list[tuple[str, Any]]:
    """A Messages API stream, each part as given (for a raw Turn): the blocks as (content_block_start's block,
    its one delta or None), the usage of message_start and of message_delta (MISSING: left out), the stop."""
    message: dict[str, Any] = {
        "id": "msg_odd",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
    }
    if start_usage is not MISSING:
        message["usage"] = start_usage
    events: list[tuple[str, Any]] = [("message_start", {"type": "message_start", "message": message})]
    for index, (opened, delta) in enumerate(blocks):
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opened})
        )
        if delta is not None:
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    ended: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}}
    if delta_usage is not MISSING:
        ended["usage"] = delta_usage
    return [*events, ("message_delta", ended), ("message_stop", {"type": "message_stop"})]


def text_block(text: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    return {"type": "text", "text": ""}, {"type": "text_delta", "text": text}


def completion_of(
    message: Any = MISSING, usage: Any = MISSING, finish: Any = "stop", **body: Any
) -> dict[str, Any]:
    """A Chat Completions body, each part as given (for a raw Turn)."""
    choice = {"index": 0, "finish_reason": finish}
    if message is not MISSING:
        choice["message"] = message
    answer: dict[str, Any] = {"id": "chatcmpl-odd", "object": "chat.completion", "created": 1, "model": "m"}
    answer["choices"] = [choice]
    if usage is not MISSING:
        answer["usage"] = usage
    return {**answer, **body}


class Endless:
    """A model API whose answer never ends: a Messages API stream goes on with an event every tenth of a second,
    a Chat Completions call gets no answer at all. Each call's connection is watched until the client closes
    it: `calls` counts the model calls, `closed` holds when (time.monotonic()) each was seen closed."""

    def __init__(self) -> None:
        self.calls = 0
        self.closed: list[float] = []
        endless = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                endless.calls += 1
                try:
                    if self.path.startswith("/v1/messages"):
                        self._stream(body)
                    while not self._gone():  # no answer: only a look, every tenth of a second, at the client
                        pass
                except (BrokenPipeError, ConnectionResetError):
                    pass
                endless.closed.append(time.monotonic())
                self.close_connection = True

            def _stream(self, body: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                events = message_events(body, say(""))[:1] + [
                    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {}})
                ]
                events[1][1]["content_block"] = {"type": "text", "text": ""}
                while True:
                    for name, data in events:
                        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                        self.wfile.flush()
                    if self._gone():
                        return
                    events = [
                        (
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": 0,
                                "delta": {"type": "text_delta", "text": "more "},
                            },
                        )
                    ]

            def _gone(self) -> bool:
                """Whether the client closed its side (waiting a tenth of a second for a sign of it)."""
                readable, _, _ = select.select([self.connection], [], [], 0.1)
                return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Endless:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
