"""Gates that call a person (docs/webhooks.md): the body a webhook POSTs, and a delivery as `webhooks` lists it."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from blackboard.infrastructure.documents.base import Document, Time

if TYPE_CHECKING:
    from blackboard.domain.signals import AgentSignal

MAX_WAITING = 50  # the waiting work a body names at most (`waiting_more` counts the others)


class WaitingWork(Document):
    """A signal that waits on the gate: it runs (or expires) once the gate is decided."""

    signal_id: str
    signal_type: str
    topic: str
    status: str


class GateCall(Document):
    """What a webhook POSTs when a gate opens, is decided, times out or is cancelled. Every value taken from
    the board (the topic, a name, a note) is a JSON string; `text` is the same news in one line, which a
    Slack incoming webhook shows as its message."""

    event: str  # gate.opened, gate.approved, gate.rejected, gate.timed_out, gate.cancelled
    board: str
    signal_id: str
    topic: str
    waiting: list[WaitingWork]  # what waits on the gate (at most MAX_WAITING)
    waiting_more: int  # how many more wait on it than `waiting` names
    approve_url: str  # the web view's approve route (POST, with its token: docs/web.md)
    reject_url: str
    at: Time  # when it opened, or ended
    status: str  # the gate's status: POSTED while it waits, then COMPLETED, FAILED, EXPIRED or CANCELLED
    decided_by: str | None  # who approved, rejected or cancelled it; null while it waits or once it timed out
    note: str | None  # the approval's note, the rejection's or the cancel's reason
    text: str


WORDS = {
    "gate.opened": "waits for a person",
    "gate.approved": "was approved",
    "gate.rejected": "was rejected",
    "gate.timed_out": "timed out",
    "gate.cancelled": "was cancelled",
}


def gate_call(
    event: str, gate: AgentSignal, waiting: list[AgentSignal], ui_url: str, at: datetime
) -> GateCall:
    approve = f"{ui_url}/api/gates/{gate.signal_id}/approve"
    reject = f"{ui_url}/api/gates/{gate.signal_id}/reject"
    named = waiting[:MAX_WAITING]
    return GateCall(
        event=event,
        board=gate.blackboard_id,
        signal_id=gate.signal_id,
        topic=gate.payload.topic,
        waiting=[
            WaitingWork(
                signal_id=w.signal_id,
                signal_type=str(w.signal_type),
                topic=w.payload.topic,
                status=str(w.status),
            )
            for w in named
        ],
        waiting_more=len(waiting) - len(named),
        approve_url=approve,
        reject_url=reject,
        at=at,
        status=str(gate.status),
        decided_by=gate.decided_by,
        note=gate.decision_note,
        text=_text(event, gate, len(waiting), approve, reject),
    )


def _text(event: str, gate: AgentSignal, waiting: int, approve: str, reject: str) -> str:
    """One message for a chat: Slack reads `&`, `<` and `>` as markup, so the board's words have them escaped."""
    said = f"Gate {gate.signal_id} on board {_escaped(gate.blackboard_id)} {WORDS.get(event, event)}: "
    said += _escaped(gate.payload.topic)
    if waiting:
        said += f" ({waiting} signal{'s wait' if waiting != 1 else ' waits'} on it)"
    if gate.decided_by:
        said += f"; by {_escaped(gate.decided_by)}"
        if gate.decision_note:
            said += f": {_escaped(gate.decision_note)}"
    if event == "gate.opened":
        said += f". Approve: POST {approve} ; reject: POST {reject} (with the web view's token)"
    return said


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class WebhookDelivery(Document):
    """One announcement of a gate to one URL, as `webhooks --blackboard ID` lists it."""

    delivery_id: int
    event: str
    signal_id: str
    url: str
    status: str  # pending, delivered, given up
    attempts: int
    last_status: int | None  # the receiver's HTTP status at the last try; null: no answer (or none yet)
    last_error: str | None
    created_at: Time
    last_try_at: Time | None
    next_try_at: Time | None  # when it is tried (again); null once delivered or given up
