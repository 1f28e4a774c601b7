"""The page's read-only endpoints: GET only; a bad parameter is a 400 naming it, never a crash."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.error_families import NAMED, UNEXPECTED, family_of
from blackboard.infrastructure.web.view import BoardView

logger = logging.getLogger(__name__)
MAX_POSITION = 2**63 - 1
MAX_EVENTS = 10_000

Handler = Callable[[Request], Awaitable[Response]]


def position(request: Request, name: str, default: int | None = None) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if len(raw) > 20 or not (raw.isascii() and raw.isdigit()) or int(raw) > MAX_POSITION:
        raise InvalidInput(name, f"must be a log position, a whole number from 0, got {raw[:40]!r}")
    return int(raw)


def resumed_position(raw: str) -> int:
    """An EventSource's `Last-Event-ID`: a position this server gave, so anything else is a 400 naming it."""
    if len(raw) > 19 or not (raw.isascii() and raw.isdigit()) or int(raw) > MAX_POSITION:
        raise InvalidInput("Last-Event-ID", f"must be a log position, 0 to {MAX_POSITION}, got {raw[:40]!r}")
    return int(raw)


def board_id(request: Request) -> str:
    """The board from the path (`/api/board/ID`, where ID may hold `/`) or from `?board=ID`."""
    board = request.path_params.get("board") or request.query_params.get("board")
    if not board:
        raise InvalidInput("board", "is required: /api/board?board=ID")
    return board


def answers(handler: Callable[[Request], Any]) -> Handler:
    """Runs a blocking read off the event loop and answers an error with its family's HTTP status
    (error_families.py: 400 bad input, 404 not found, 503 the database down)."""

    @functools.wraps(handler)
    async def endpoint(request: Request) -> Response:
        try:
            return JSONResponse(await run_in_threadpool(handler, request))
        except Exception as exc:  # noqa: BLE001 - a bug answers 500 and is logged in one line; the server goes on
            family = NAMED["invalid_input"] if isinstance(exc, ValidationError) else family_of(exc)
            if family is UNEXPECTED:
                logger.error(
                    "%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, exc
                )
                return JSONResponse({"error": "unexpected error (see the server's log)"}, status_code=500)
            return JSONResponse({"error": _message(exc)}, status_code=family.http_status)

    return endpoint


def _message(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(str(part) for part in first['loc']) or 'input'}: {first['msg']}"
    return str(exc)


def api(view: BoardView) -> dict[str, Handler]:
    def boards(request: Request) -> Any:
        return view.boards()

    def board(request: Request) -> Any:
        return view.board(board_id(request), position(request, "at"))

    def entry(request: Request) -> Any:
        key = request.path_params.get("key") or request.query_params.get("key")
        if not key:
            raise InvalidInput("key", "is required: /api/entry?board=ID&key=KEY")
        return view.entry_history(board_id(request), key, position(request, "at"))

    def events(request: Request) -> Any:
        limit = position(request, "limit", MAX_EVENTS)
        if not 1 <= limit <= MAX_EVENTS:  # type: ignore[operator]
            raise InvalidInput("limit", f"must be 1 to {MAX_EVENTS}, got {limit}")
        return view.events(request.query_params.get("board") or None, position(request, "since", 0), limit)  # type: ignore[arg-type]

    return {
        name: answers(handler)
        for name, handler in (("boards", boards), ("board", board), ("entry", entry), ("events", events))
    }
