"""The follow tool (`blackboard_follow`, docs/mcp.md): a page of a run's output as it comes, and its outcome
once it ended, as `blackboard show SIG --follow` prints them. A person's server offers it (as search and the
flow tools): an agent's tool list is at its cap (tools.MAX_TOOLS_JSON), and a run has its own output.

A tool call returns once: each call is a page, the lines after `after` (what is there now, or with
`timeout_seconds` the next lines once at least one comes, or the end), with the `after` to call again with."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from blackboard.application.commands import FollowSignal, GetSignalById
from blackboard.application.fields import Seconds
from blackboard.infrastructure.interfaces.following import page
from blackboard.infrastructure.mcp.schemas import derive, same
from blackboard.infrastructure.mcp.session import Progress, Session, build
from blackboard.infrastructure.mcp.signal_tools import ON_BOARD, _board, _on_board
from blackboard.infrastructure.mcp.tools import Tool

WAIT = {
    "timeout_seconds": (
        Seconds | None,
        Field(
            default=None,
            description="wait up to this many seconds for the next lines or the end (default: what is there now)",
        ),
    )
}


def follow(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    wait, board = given.pop("timeout_seconds", None), given.pop("blackboard_id", None)
    query = build(FollowSignal, {"timeout": "timeout_seconds"}, **given, timeout=wait or 0)
    _on_board(session, board, GetSignalById(signal_id=query.signal_id))  # on the board named, if one is
    return page(session.watcher, query)


def follow_tools() -> list[Tool]:
    return [
        Tool(
            "blackboard_follow",
            "A running signal's output as it comes (a runner's transcript a step a line, a handler's stdout "
            "and stderr), a page a call: the lines after `after` (a previous page's `after`; none: from the "
            "first), the `after` to call again with, and `outcome`, the signal once it ended (null while "
            "it runs). With timeout_seconds, waits that long at most for the next lines or the end.",
            derive(
                "FollowArguments",
                FollowSignal,
                same("signal_id", "after"),
                own={**WAIT, **_board()},
                notes={"blackboard_id": ON_BOARD},
            ),
            follow,
            waits=True,
        )
    ]
