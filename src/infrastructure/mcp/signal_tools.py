"""The signal tools: post, claim, complete, fail, show, signals, match, wait (docs/mcp.md)."""

from __future__ import annotations

import copy
import time
from typing import Any

from pydantic import Field

from blackboard.application.commands import (
    ApproveGate,
    CancelSignal,
    CancelSignals,
    ClaimSignal,
    CompleteSignal,
    FailSignal,
    GetSignalById,
    ListSignals,
    NudgeSignal,
    PostSignal,
    RejectGate,
)
from blackboard.application.errors import WaitTimedOut
from blackboard.application.fields import Seconds
from blackboard.domain.errors import SignalNotFound
from blackboard.infrastructure import documents
from blackboard.infrastructure.agents.outcome import checked_artifact
from blackboard.infrastructure.mcp.schemas import derive, named, same
from blackboard.infrastructure.mcp.session import Progress, Session, build
from blackboard.infrastructure.mcp.tools import Tool

WAITING = {  # WaitForSignal's `timeout`, required here: a tool call that may never return blocks its client
    "timeout_seconds": (Seconds, Field(description="give up after this many seconds"))
}
ON_BOARD = "default: the server's --blackboard"


def post(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    if session.agent is not None:
        given["posted_by"] = session.agent
    given.setdefault("blackboard_id", session.default_board)
    posted = session.service.post_signal(build(PostSignal, {}, **given))
    # with the CLI's warnings: no fitting agent can run it, or no live worker fits it (it waits for one)
    return documents.posted(posted, session.registry, session.queries)


def claim(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    agent, signal_id = session.acting("blackboard_claim"), given["signal_id"]
    given.setdefault("blackboard_id", session.default_board)
    held = session.token(signal_id)
    try:
        return documents.signal(
            session.service.claim_signal(
                build(ClaimSignal, {}, **given, agent_id=agent, token=session.new_token(signal_id))
            )
        )
    except Exception:
        if held is None:
            session.forget(signal_id)
        raise


def complete(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    return _finish(session, "blackboard_complete", CompleteSignal, given)


def fail(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    return _finish(session, "blackboard_fail", FailSignal, given)


def _finish(session: Session, tool: str, model: Any, given: dict[str, Any]) -> Any:
    agent, signal_id = session.acting(tool), given["signal_id"]
    given.setdefault("blackboard_id", session.default_board)
    command = build(model, {}, **given, agent_id=agent, token=session.token(signal_id))
    if model is CompleteSignal:  # inside the server's working folder, or the artifacts folder
        checked_artifact(command.artifact_path, session.artifacts_dir, "artifact_path")
    done = (session.service.complete_signal if model is CompleteSignal else session.service.fail_signal)(
        command
    )
    session.forget(signal_id)
    return documents.signals_now([done], session.queries)[0]  # a failed attempt may be POSTED again


def cancel(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    """CANCELLED, with what waits on it; the server's agent (if it runs as one) is who cancels."""
    _on_board(session, given.pop("blackboard_id", None), GetSignalById(signal_id=given["signal_id"]))
    if session.agent is not None:
        given["by"] = session.agent
    return documents.signal(session.service.cancel_signal(build(CancelSignal, {}, **given)))


def cancel_all(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    if session.agent is not None:
        given["by"] = session.agent
    given.setdefault("blackboard_id", session.default_board)
    cancelled = session.service.cancel_signals(build(CancelSignals, {}, **given))
    return [documents.signal(s) for s in cancelled]


def approve(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    """A person's server only (tools.py leaves the gate tools out of an agent's)."""
    _on_board(session, given.pop("blackboard_id", None), GetSignalById(signal_id=given["signal_id"]))
    return documents.signal(session.service.approve_gate(build(ApproveGate, {}, **given)))


def reject(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    _on_board(session, given.pop("blackboard_id", None), GetSignalById(signal_id=given["signal_id"]))
    return documents.signal(session.service.reject_gate(build(RejectGate, {}, **given)))


def nudge(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    """A person's server only (tools.py): a person's word to the running agent (docs/agents.md, "Nudges")."""
    _on_board(session, given.pop("blackboard_id", None), GetSignalById(signal_id=given["signal_id"]))
    return documents.signal(session.service.nudge_signal(build(NudgeSignal, {}, **given)))


def gate_tools() -> list[Tool]:
    """A person decides a gate, and nudges a run: these are offered by a server started without --agent only."""
    on_board = {"blackboard_id": ON_BOARD}
    mine = same("signal_id")
    return [
        Tool(
            "blackboard_approve",
            "Approve an open gate as a person (`by`): it completes and what waits on it runs.",
            derive(
                "ApproveArguments",
                ApproveGate,
                mine | named("approved_by", "note"),
                own=_board(),
                notes=on_board,
            ),
            approve,
        ),
        Tool(
            "blackboard_reject",
            "Reject an open gate as a person (`by`, `reason`): it fails and what waits on it expires.",
            derive(
                "RejectArguments",
                RejectGate,
                mine | named("rejected_by", "reason"),
                own=_board(),
                notes=on_board,
            ),
            reject,
        ),
        Tool(
            "blackboard_nudge",
            "Nudge the agent running a CLAIMED signal as a person (`by`): `text` reaches it at its next turn.",
            derive(
                "NudgeArguments",
                NudgeSignal,
                mine | named("nudged_by", "text"),
                own=_board(),
                notes=on_board,
            ),
            nudge,
        ),
    ]


def show(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    board = given.pop("blackboard_id", None)
    found = _on_board(session, board, GetSignalById(**given))
    return (
        documents.signal(found)
        if given.get("at") is not None
        else documents.signals_now([found], session.queries)[0]
    )


def _on_board(session: Session, board: str | None, query: GetSignalById) -> Any:
    """The signal, if it is on the board the call (or the server) names: GetSignalById finds it anywhere."""
    board = board or session.default_board
    found = session.queries.get_signal(query)
    if board is not None and found.blackboard_id != board:
        raise SignalNotFound(query.signal_id, board)
    return found


def signals(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    given.setdefault("blackboard_id", session.default_board)
    found = session.queries.list_signals(ListSignals(**given))
    return (
        [documents.signal(s) for s in found]
        if given.get("at") is not None
        else documents.signals_now(found, session.queries)
    )


def match(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    query = GetSignalById(signal_id=given["signal_id"])
    _on_board(session, given.get("blackboard_id"), query)
    return documents.ranking(session.queries.match(query))


def wait(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    """The signal once it is final, whatever its end (its status says which); a timeout is an error.
    Waits a second at a time, so progress goes out (to a client that asked) about once a second."""
    signal_id, timeout = given["signal_id"], given["timeout_seconds"]
    _on_board(session, given.get("blackboard_id"), GetSignalById(signal_id=signal_id))
    started = time.monotonic()
    while True:
        left = timeout - (time.monotonic() - started)
        try:
            return documents.signal(session.watcher.wait_for_signal(signal_id, max(0.0, min(left, 1.0))))
        except WaitTimedOut:
            if left <= 1.0:
                raise WaitTimedOut(f"{signal_id} to finish", timeout) from None
        progress(time.monotonic() - started, timeout, f"waiting for {signal_id} to finish")


def _board() -> dict[str, Any]:
    """A `blackboard_id` argument for a query that finds a signal by its id alone (as ClaimSignal's)."""
    field = ClaimSignal.model_fields["blackboard_id"]
    return {"blackboard_id": (field.annotation, copy.deepcopy(field))}


def signal_tools(with_agent: bool) -> list[Tool]:
    board = {"blackboard_id": "default: the server's --blackboard, else ps_id"}
    # seed 003's payload fields have defaults (docs/mcp.md): the board's next e-N for entry_id, the board for
    # ps_id (as the board's note says the other way round), and for the type:
    post_notes = {**board, "signal_type": "default RESEARCH if capabilities"}
    post_fields = named(
        "signal_type",
        "ps_id",
        "entry_id",
        "topic",
        "prompt",
        "context",
        "target_capabilities",
        "after",
        "dedupe_key",
        "read_keys",
        "write_keys",
        "budget_usd",
        "priority",
        "not_before",
        "max_attempts",
        "gate",
        "timeout_s",
        "labels",
        "blackboard_id",
        "correlation_id",
        *(() if with_agent else ("posted_by",)),
    )
    one = same("signal_id", "blackboard_id", "correlation_id")
    on_board = {"blackboard_id": ON_BOARD}
    return [
        Tool(
            "blackboard_post_signal",
            "Post a signal (a unit of work) for an agent to claim; returns the signal. "
            "`key` dedupes: posting again with it on the same board returns the first signal.",
            derive(
                "PostSignalArguments",
                PostSignal,
                post_fields,
                optional=(
                    "signal_type",
                    "ps_id",
                ),  # the command model fills them (from capabilities, the board)
                notes=post_notes,
            ),
            post,
        ),
        Tool(
            "blackboard_claim",
            "Claim a POSTED signal as the server's agent; returns the signal.",
            derive("ClaimArguments", ClaimSignal, one, notes=on_board),
            claim,
        ),
        Tool(
            "blackboard_complete",
            "Complete a signal the server's agent claimed, with its result; returns the signal.",
            derive(
                "CompleteArguments",
                CompleteSignal,
                one | same("artifact_path", "knowledge_items"),
                notes=on_board,
            ),
            complete,
        ),
        Tool(
            "blackboard_fail",
            "Report that a signal the server's agent claimed could not be done; returns the signal.",
            derive("FailArguments", FailSignal, one | same("error", "retry_after"), notes=on_board),
            fail,
        ),
        Tool(
            "blackboard_cancel",
            "Cancel a signal that is not final: it becomes CANCELLED, with every signal that waits on it, "
            "and a worker running it stops; returns the signal.",
            derive(
                "CancelArguments",
                CancelSignal,
                named("signal_id", "reason", "correlation_id", *(() if with_agent else ("cancelled_by",))),
                own=_board(),
                notes=on_board,
            ),
            cancel,
        ),
        Tool(
            "blackboard_cancel_all",
            "Cancel every open signal of a board (`blackboard_id`), or those posted with a correlation id "
            "(`posted_with`); returns them.",
            derive(
                "CancelAllArguments",
                CancelSignals,
                named(
                    "blackboard_id",
                    "posted_with",
                    "reason",
                    "correlation_id",
                    *(() if with_agent else ("cancelled_by",)),
                ),
                notes=on_board,
            ),
            cancel_all,
        ),
        Tool(
            "blackboard_show",
            "Show one signal (`at`: as it was right after that log position).",
            derive("ShowArguments", GetSignalById, same("signal_id", "at"), own=_board(), notes=on_board),
            show,
        ),
        Tool(
            "blackboard_signals",
            "List signals, oldest first, filtered.",
            derive(
                "SignalsArguments",
                ListSignals,
                same("status", "signal_type", "capability", "labels", "limit", "blackboard_id", "at"),
            ),
            signals,
        ),
        Tool(
            "blackboard_match",
            "Rank the registry's agents for a signal, best first.",
            derive("MatchArguments", GetSignalById, same("signal_id"), own=_board(), notes=on_board),
            match,
        ),
        Tool(
            "blackboard_wait",
            "Block until a signal is COMPLETED, FAILED, EXPIRED, UNCLAIMED or CANCELLED, and return it; "
            "a tool error after timeout_seconds.",
            derive(
                "WaitArguments", GetSignalById, same("signal_id"), own={**WAITING, **_board()}, notes=on_board
            ),
            wait,
            waits=True,
        ),
    ]
