"""`GET /api/workers`: the live workers as the board sees them, for the page's Workers panel (static/workers.js,
which polls it: beats are not log events, so the live stream does not carry them). `?board=ID` keeps the
workers that serve that board (a board id by its one rule: a 400 naming `board` otherwise)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from blackboard.application.commands import ListSignals
from blackboard.application.status import StatusQueries
from blackboard.infrastructure import documents
from blackboard.infrastructure.web.routes import Handler, answers, given


def live_workers(status: StatusQueries) -> Handler:
    def workers(request: Request) -> Any:
        board = ListSignals(**given(request, "blackboard_id")).blackboard_id
        return documents.jsonable(documents.fleet(status.fleet(board)))

    return answers(workers)
