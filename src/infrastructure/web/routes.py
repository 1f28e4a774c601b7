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

from blackboard.application.commands import FollowSignal, ListSignals, ReadEvents
from blackboard.application.knowledge.commands import ReadEntry
from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure import documents
from blackboard.infrastructure.errors.families import UNEXPECTED, family_of
from blackboard.infrastructure.errors.input import invalid_input
from blackboard.infrastructure.interfaces.following import page
from blackboard.infrastructure.web.view import BoardView

logger = logging.getLogger(__name__)
MAX_EVENTS = 10_000

Handler = Callable[[Request], Awaitable[Response]]


# Model fields, as the page's query parameters name them (the others are spelled alike).
PARAMETERS = {"blackboard_id": "board", "signal_id": "signal"}


def given(request: Request, *names: str) -> dict[str, str]:
    """The query parameters given, by model field (an empty one is left out: the model's default applies)."""
    found = {name: request.query_params.get(PARAMETERS.get(name, name)) for name in names}
    return {name: value for name, value in found.items() if value}


def board_id(request: Request) -> str:
    """The board from the path (`/api/board/ID`, where ID may hold `/`) or from `?board=ID`."""
    board = request.path_params.get("board") or request.query_params.get("board")
    if not board:
        raise InvalidInput("board", "is required: /api/board?board=ID")
    return board


def since(request: Request) -> int | None:
    """Where the live stream starts: `?since=` or, for an EventSource reconnecting, its `Last-Event-ID`
    (a position this server gave); each a log position by ReadEvents' rule, a 400 naming it otherwise."""
    resumed = request.headers.get("last-event-id")
    if resumed:
        try:
            return ReadEvents(since=resumed).since
        except ValidationError as exc:
            raise invalid_input(exc, {"since": "Last-Event-ID"}) from None
    return ReadEvents(**given(request, "since")).since if given(request, "since") else None


def refused(exc: Exception, request: Request) -> JSONResponse:
    """The web view's one translation of an error: its family's HTTP status, with the message the CLI
    prints (a model's refusal names the query parameter and the rule, as errors/input.py words it)."""
    error = invalid_input(exc, PARAMETERS) if isinstance(exc, ValidationError) else exc
    family = family_of(error)
    if family is UNEXPECTED:
        logger.error("%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
        return JSONResponse({"error": "unexpected error (see the server's log)"}, status_code=500)
    return JSONResponse({"error": str(error)}, status_code=family.http_status)


def answers(handler: Callable[[Request], Any]) -> Handler:
    """Runs a blocking read off the event loop and answers an error with its family's HTTP status
    (errors/families.py: 400 bad input, 404 not found, 503 the database down)."""

    @functools.wraps(handler)
    async def endpoint(request: Request) -> Response:
        try:
            return JSONResponse(await run_in_threadpool(handler, request))
        except Exception as exc:  # noqa: BLE001 - a bug answers 500 and is logged in one line; the server goes on
            return refused(exc, request)

    return endpoint


def api(view: BoardView) -> dict[str, Handler]:
    def boards(request: Request) -> Any:
        return view.boards()

    def board(request: Request) -> Any:
        query = ListSignals(blackboard_id=board_id(request), **given(request, "at"))
        return view.board(query.blackboard_id, query.at)  # type: ignore[arg-type]

    def entry(request: Request) -> Any:
        key = request.path_params.get("key") or request.query_params.get("key")
        if not key:
            raise InvalidInput("key", "is required: /api/entry?board=ID&key=KEY")
        query = ReadEntry(blackboard_id=board_id(request), key=key, history=True, **given(request, "at"))
        return view.entry_history(query.blackboard_id, query.key, query.at)

    def events(request: Request) -> Any:
        query = ReadEvents(**given(request, "since", "limit", "blackboard_id"))
        limit = MAX_EVENTS if query.limit is None else query.limit
        if limit > MAX_EVENTS:  # the page's own bound: one answer of the web view holds at most this many
            raise InvalidInput("limit", f"must be 1 to {MAX_EVENTS} here, got {limit}")
        return view.events(query.blackboard_id, query.since, limit)

    def output(request: Request) -> Any:
        """A page of a run's output after `?after=` (`show --follow`'s, as the MCP tool's): never waits."""
        query = FollowSignal(**given(request, "signal_id", "after"), timeout=0)
        return documents.jsonable(page(view.watcher, query))

    return {
        name: answers(handler)
        for name, handler in (
            ("boards", boards),
            ("board", board),
            ("entry", entry),
            ("events", events),
            ("output", output),
        )
    }
