"""What must hold of a store after any fault, checked against its event log alone.

- the log: positions strictly increasing, each stream's versions 1, 2, ... without a gap;
- each signal's events are legal transitions: posted first; claimed only from POSTED with every
  upstream COMPLETED (so one claimer per claim: a second claim would come from CLAIMED); renewed,
  completed or failed only while CLAIMED and only by its claimer; expired from POSTED or CLAIMED;
  UNCLAIMED only from POSTED; nothing after an ending; a run charged once per attempt, for an attempt whose
  claim lapsed or while the signal is CANCELLED or EXPIRED;
- the read model equals a replay of the log, board by board.
"""

from __future__ import annotations

from collections import defaultdict

from blackboard.application.ports import EventStore, SignalFilter, SignalReadModel
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.events import EntryEvent

FROM = {  # event type -> the statuses it may come from, and the status it leaves
    "AgentSignalClaimed": ({"POSTED"}, "CLAIMED"),
    "AgentSignalClaimRenewed": ({"CLAIMED"}, "CLAIMED"),
    "AgentSignalCompleted": ({"CLAIMED"}, "COMPLETED"),
    "AgentSignalFailed": ({"CLAIMED"}, "FAILED"),
    "AgentSignalExpired": ({"POSTED", "CLAIMED"}, "EXPIRED"),
    "AgentSignalUnclaimed": ({"POSTED"}, "UNCLAIMED"),
    "AgentSignalCancelled": ({"POSTED", "CLAIMED"}, "CANCELLED"),
    "AgentSignalApproved": ({"POSTED"}, "COMPLETED"),  # a gate, by a person
    "AgentSignalRejected": ({"POSTED"}, "FAILED"),
    "AgentSignalAttemptFailed": ({"CLAIMED"}, "POSTED"),  # a retry: attempts were left
    "AgentSignalNudged": ({"CLAIMED"}, "CLAIMED"),  # a person's word to the run: the status stays
}
BY = {
    "AgentSignalClaimRenewed": "claimed_by",
    "AgentSignalCompleted": "completed_by",
    "AgentSignalFailed": "failed_by",
}


def violations(store: EventStore, read_model: SignalReadModel) -> list[str]:
    """Every broken rule, as a sentence; [] when the store is sound."""
    found: list[str] = []
    status: dict[str, str] = {}
    claimer: dict[str, str] = {}
    after: dict[str, tuple[str, ...]] = {}
    lapsed: dict[str, set[int]] = defaultdict(set)  # the attempts whose claim lapsed (retried)
    charged: set[tuple[str, int]] = set()
    versions: dict[str, int] = defaultdict(int)
    boards: set[str] = set()
    last = 0
    for record in store.read_all():
        event = record.event
        if record.position <= last:
            found.append(f"position {record.position} after {last}")
        last = record.position
        stream = event.stream_id
        versions[stream] += 1
        if event.version != versions[stream]:
            found.append(f"{stream}: version {event.version} where {versions[stream]} was due")
            versions[stream] = event.version
        boards.add(event.blackboard_id)
        if isinstance(event, EntryEvent) or not hasattr(event, "signal_id"):
            continue  # an entry's, or the board's own (a budget)
        sid, kind = event.signal_id, event.event_type
        if kind == "AgentSignalPosted":
            if sid in status:
                found.append(f"{sid} posted twice")
            status[sid], after[sid] = "POSTED", event.after
            continue
        if sid not in status:
            found.append(f"{kind} of {sid}, never posted")
            continue
        if kind == "AgentSignalRunCharged":  # a stopped run's spend: the signal's status stays
            if (sid, event.attempt) in charged:
                found.append(f"{sid}: attempt {event.attempt}'s run charged twice")
            charged.add((sid, event.attempt))
            if event.attempt not in lapsed[sid] and status[sid] not in ("CANCELLED", "EXPIRED"):
                found.append(f"{sid}: attempt {event.attempt}'s run charged while {status[sid]}")
            continue
        if kind == "AgentSignalAttemptFailed" and event.expired:
            lapsed[sid].add(event.attempt)
        allowed, then = FROM[kind]
        if status[sid] not in allowed:
            found.append(f"{sid}: {kind} from {status[sid]}")
        if kind == "AgentSignalClaimed":
            if pending := [u for u in after[sid] if status.get(u) != "COMPLETED"]:
                found.append(f"{sid} claimed with upstreams not COMPLETED: {pending}")
            claimer[sid] = event.claimed_by
        elif kind in BY and getattr(event, BY[kind]) != claimer.get(sid):
            found.append(f"{sid}: {kind} by {getattr(event, BY[kind])}, claimed by {claimer.get(sid)}")
        status[sid] = then
    found += _read_model_differs(store, read_model, sorted(boards))
    return found


def _read_model_differs(store: EventStore, read_model: SignalReadModel, boards: list[str]) -> list[str]:
    found = []
    for board_id in boards:
        replayed = BlackboardAggregate.replay(board_id, store.load(board_id)).signals
        rows = {s.signal_id: s for s in read_model.find(SignalFilter(blackboard_id=board_id))}
        for sid in sorted(set(replayed) | set(rows)):
            if replayed.get(sid) != rows.get(sid):
                found.append(
                    f"{board_id}/{sid}: read model {rows.get(sid)!r} != replay {replayed.get(sid)!r}"
                )
    return found


def counts(store: EventStore) -> dict[str, int]:
    """How many events of each type the log holds (what a fault run did)."""
    seen: dict[str, int] = defaultdict(int)
    for record in store.read_all():
        seen[record.event.event_type] += 1
    return dict(seen)
