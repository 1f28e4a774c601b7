"""The flow tools (docs/flows.md): run a flow's steps on a board, and see how a flow stands or wait for it to
end. A person's server offers them (as search): an agent's tool list is at its cap (tools.MAX_TOOLS_JSON)."""

from __future__ import annotations

import time
from typing import Any

from pydantic import Field

from blackboard.application.errors import WaitTimedOut
from blackboard.application.fields import Seconds
from blackboard.application.flows.commands import GetFlow, RunFlow, WaitForFlow
from blackboard.application.flows.queries import until_ended
from blackboard.domain.errors import InvalidInput
from blackboard.domain.flows import progress
from blackboard.infrastructure import documents
from blackboard.infrastructure.mcp.schemas import derive, same
from blackboard.infrastructure.mcp.session import Progress, Session, build
from blackboard.infrastructure.mcp.signal_tools import ON_BOARD
from blackboard.infrastructure.mcp.tools import Tool

FILE = {"file": (str | None, Field(default=None, description="a flow file's path, read by the server"))}
WAIT = {
    "timeout_seconds": (
        Seconds | None,
        Field(default=None, description="wait until no step is open, up to this many seconds"),
    )
}


def flow_run(session: Session, given: dict[str, Any], progress_: Progress) -> Any:
    """Every step posted in one transaction; `flow` (the front matter as an object) or `file` (its path)."""
    from blackboard.infrastructure.agents.flow_files import flow_of, read_flow_file

    file, flow = given.pop("file", None), given.pop("flow", None)
    if (file is None) == (flow is None):
        raise InvalidInput(
            "flow", "give the flow (name, description, steps) or a flow file's path (file), one"
        )
    spec = read_flow_file(file) if file is not None else flow_of(flow)
    given["blackboard_id"] = session.board(given)
    posted = session.service.run_flow(build(RunFlow, {}, **given, flow=spec))
    return _document(session, progress(posted[0].flow_id or "", given["blackboard_id"], posted))


def flow_status(session: Session, given: dict[str, Any], progress_: Progress) -> Any:
    """The flow step by step; with `timeout_seconds`, once no step is open (a timeout is an error). Waits a
    second at a time, so progress goes out (to a client that asked) about once a second."""
    flows = session.flows
    board, timeout = session.board(given), given.get("timeout_seconds")
    if timeout is None:
        return _document(
            session, flows.flow(build(GetFlow, {}, blackboard_id=board, flow_id=given["flow_id"]))
        )
    started = time.monotonic()
    while True:
        left = timeout - (time.monotonic() - started)
        query = build(
            WaitForFlow, {}, blackboard_id=board, flow_id=given["flow_id"], timeout=max(0.0, min(left, 1.0))
        )
        try:
            return _document(session, until_ended(flows, session.watcher, query))
        except WaitTimedOut:
            if left <= 1.0:
                raise WaitTimedOut(f"flow {query.flow_id} to end", timeout) from None
        progress_(time.monotonic() - started, timeout, f"waiting for flow {query.flow_id} to end")


def _document(session: Session, shown: Any) -> Any:
    return documents.flow(shown, session.queries.waiting_for_workers([s.signal for s in shown.steps]))


def flow_tools() -> list[Tool]:
    on_board = {"blackboard_id": ON_BOARD}
    return [
        Tool(
            "blackboard_flow_run",
            "Run a flow: post every step on the board in one transaction (all or none), each after the steps "
            "it names; `flow` holds name, description and steps ({id, capability | agent, topic, prompt, "
            "after, gate}), or `file` names a flow file. Returns the flow step by step.",
            derive(
                "FlowRunArguments",
                RunFlow,
                same("blackboard_id", "flow", "flow_id", "posted_by", "correlation_id"),
                optional=("blackboard_id", "flow"),
                own=FILE,
                notes=on_board,
            ),
            flow_run,
        ),
        Tool(
            "blackboard_flow_status",
            "Show a flow step by step: each step's status, its signal and the steps it waits for; with "
            "timeout_seconds, once no step is open.",
            derive(
                "FlowStatusArguments",
                GetFlow,
                same("blackboard_id", "flow_id"),
                optional=("blackboard_id",),
                own=WAIT,
                notes=on_board,
            ),
            flow_status,
            waits=True,
        ),
    ]
