"""A page of a follow (`show --follow`, docs/cli.md), for the interfaces that answer once per call: the MCP
tool `blackboard_follow` and the web view's live output panel. Each asks again with the page's `after`."""

from __future__ import annotations

from typing import Any

from blackboard.application.commands import FollowSignal
from blackboard.application.errors import WaitTimedOut
from blackboard.application.output import PAGE, Cursor, OutputLine
from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure import documents


def page(watcher: Any, query: FollowSignal) -> documents.FollowedOutput:
    """The lines after `query.after` that are there now (or, waiting up to `query.timeout`, the first that
    come), at most PAGE, and the signal once it ended: one page of a follow (the MCP tool's, the web view's)."""
    cursor = Cursor.parse(query.after)
    lines: list[OutputLine] = []
    outcome: AgentSignal | None = None
    try:
        for item in watcher.following(query.signal_id, cursor, query.timeout):
            if item is None:  # caught up: a page ends here once it has a line
                if lines:
                    break
                continue
            if isinstance(item, AgentSignal):
                outcome = item
                break
            lines.append(item)
            if len(lines) >= PAGE:
                break
    except WaitTimedOut:
        pass  # nothing came in time: an empty page, to call again with the same `after`
    after = str(lines[-1].cursor) if lines else str(cursor)
    return documents.followed(query.signal_id, lines, after, outcome)
