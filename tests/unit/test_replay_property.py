"""Whatever commands a board receives, its events rebuild it exactly: by replay and in the read model."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blackboard.application.ports import Recorded, SignalFilter
from blackboard.domain.admission import admit
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.errors import BlackboardError
from blackboard.domain.events import (
    AgentSignalApproved,
    AgentSignalCancelled,
    AgentSignalClaimed,
    AgentSignalCompleted,
    AgentSignalExpired,
    AgentSignalFailed,
    AgentSignalPosted,
    AgentSignalRejected,
    AgentSignalUnclaimed,
    BlackboardEvent,
)
from blackboard.domain.signals import SignalPayload, SignalResult, SignalStatus, SignalType
from blackboard.infrastructure.memory.read_model import InMemorySignalReadModel
from tests.fakes import T0, agent

BB = "bb-prop"
UNKNOWN = "sig-ffffffff"
AGENTS = [
    agent("ps-researcher", RESEARCH=0.9, INVESTIGATION=0.7),
    agent("ps-analyst", ANALYSIS=0.95, RESEARCH=0.8),  # exactly at the default threshold for RESEARCH
    agent("ps-reviewer", threshold=0.5, REVIEW=0.6, DECISION=0.55),
    agent("ps-weak", RESEARCH=0.5, SYNTHESIS=0.81),
    agent("ps-lax", threshold=0.0, INVESTIGATION=0.1),
]
TYPES = list(SignalType)
EXTRA_CAPS = [None, "RESEARCH", "REVIEW", "INVESTIGATION"]

# What each event may find its signal in before it is applied (design 003 §7).
ALLOWED_FROM = {
    AgentSignalClaimed: {SignalStatus.POSTED},
    AgentSignalCompleted: {SignalStatus.CLAIMED},
    AgentSignalFailed: {SignalStatus.CLAIMED},
    AgentSignalExpired: {SignalStatus.POSTED, SignalStatus.CLAIMED},
    AgentSignalUnclaimed: {SignalStatus.POSTED},
    AgentSignalCancelled: {SignalStatus.POSTED, SignalStatus.CLAIMED},
    AgentSignalApproved: {SignalStatus.POSTED},  # a gate, open: only a person decides it
    AgentSignalRejected: {SignalStatus.POSTED},
}

# A signal reference is one integer n: the (n // 12)-th signal (modulo) of the pool REF_POOLS[n % 12], which is
# "any" signal on the board or one that is "POSTED" or "CLAIMED" now (any signal when there is none), or "unknown":
# a signal that is not on the board. One draw per reference keeps generation and shrinking quick.
REF_POOLS = ["any"] * 3 + ["POSTED"] * 4 + ["CLAIMED"] * 4 + ["unknown"]
signal_ref = st.integers(0, len(REF_POOLS) * 30 - 1)


def ref(pool: str, index: int) -> int:
    return index * len(REF_POOLS) + REF_POOLS.index(pool)


agent_ref = st.one_of(st.just("best"), st.integers(min_value=0, max_value=len(AGENTS) - 1))
who = st.one_of(st.just("claimer"), st.integers(min_value=0, max_value=len(AGENTS) - 1))

ARGUMENTS = {
    "post": [
        st.integers(0, len(TYPES) - 1),
        st.sampled_from(EXTRA_CAPS),
        st.lists(signal_ref, max_size=3),
        st.one_of(st.none(), st.sampled_from(["k0", "k1", "k2"])),
    ],
    "repost": [signal_ref],
    "claim": [signal_ref, agent_ref],
    "complete": [signal_ref, who],
    "fail": [signal_ref, who],
    "expire": [signal_ref],
    "unclaim": [signal_ref],
    "cancel": [signal_ref],
    "gate": [st.lists(signal_ref, max_size=2), st.sampled_from([None, 30, 300])],
    "approve": [signal_ref],
    "reject": [signal_ref],
    "tick": [st.one_of(st.integers(0, 20), st.integers(0, 400))],
    "overdue": [st.sampled_from([10, 30]), st.sampled_from([60, 300])],
}
# Repeated kinds weigh the draw towards the commands that move signals along.
KINDS = (
    ["post"] * 4
    + ["claim"] * 4
    + ["complete"] * 3
    + [
        "fail",
        "expire",
        "unclaim",
        "cancel",
        "tick",
        "tick",
        "overdue",
        "repost",
        "gate",
        "approve",
        "reject",
    ]
)
commands = st.one_of([st.tuples(st.just(kind), *ARGUMENTS[kind]) for kind in KINDS])


def run(board: BlackboardAggregate, script: list[tuple]) -> tuple[list[BlackboardEvent], list[str]]:
    """Apply the script, ignoring refusals; return every recorded event and the refusals' error names."""
    ids: list[str] = []
    recorded: list[BlackboardEvent] = []
    refused: list[str] = []
    now = T0

    def pick(ref: int) -> str:
        kind, index = REF_POOLS[ref % len(REF_POOLS)], ref // len(REF_POOLS)
        if kind == "unknown" or not ids:
            return UNKNOWN
        pool = [i for i in ids if board.signal(i).status == kind] or ids
        return pool[index % len(pool)]

    def deps(refs: list[int]) -> list[str]:
        return [pick(r) for r in refs if ids]  # nothing on the board yet: no upstream to name

    def claimant(signal_id: str, choice: object):
        if choice == "best":
            signal = board.signals.get(signal_id)
            return max(AGENTS, key=lambda a: a.score(signal)) if signal else AGENTS[0]
        return AGENTS[choice]

    def actor(signal_id: str, choice: object) -> str:
        if choice == "claimer" and signal_id in board.signals:
            return board.signal(signal_id).claimed_by or "ps-nobody"
        return AGENTS[choice].agent_id if isinstance(choice, int) else "ps-nobody"

    for step in script:
        now += timedelta(seconds=1)
        kind, *args = step
        try:
            if kind == "post":
                type_index, extra, refs, key = args
                signal_type = TYPES[type_index]
                signal_id = f"sig-{len(ids) + 1:08x}"
                caps = [signal_type.value] + ([extra] if extra else [])
                signal = board.post_signal(
                    signal_id=signal_id,
                    signal_type=signal_type,
                    posted_by="ps-orchestrator",
                    at=now,
                    payload=SignalPayload(ps_id="PS-1", entry_id=f"e-{len(ids) + 1}", topic="t"),
                    target_capabilities=caps,
                    after=deps(refs),
                    dedupe_key=key,
                )
                if signal.signal_id == signal_id:
                    ids.append(signal_id)
            elif kind == "repost" and ids:  # the id of a signal already on the board
                board.post_signal(
                    signal_id=ids[args[0] % len(ids)],
                    signal_type=SignalType.RESEARCH,
                    posted_by="ps-o",
                    at=now,
                    payload=SignalPayload(ps_id="PS-1", entry_id="e-0", topic="t"),
                )
            elif kind == "claim":
                sid = pick(args[0])
                board.claim_signal(sid, claimant(sid, args[1]), now)
            elif kind == "complete":
                sid = pick(args[0])
                board.complete_signal(sid, actor(sid, args[1]), SignalResult(artifact_path=f"{sid}.md"), now)
            elif kind == "fail":
                sid = pick(args[0])
                board.fail_signal(sid, actor(sid, args[1]), "boom", now)
            elif kind == "expire":
                board.expire_signal(pick(args[0]), "expired by hand", now)
            elif kind == "unclaim":
                board.mark_unclaimed(pick(args[0]), "nobody able", now)
            elif kind == "cancel":
                board.cancel_signal(pick(args[0]), "ps-human", "the plan changed", now)
            elif kind == "gate":
                signal_id = f"sig-{len(ids) + 1:08x}"
                board.post_signal(
                    signal_id=signal_id,
                    signal_type=SignalType.DECISION,
                    posted_by="ps-orchestrator",
                    at=now,
                    payload=SignalPayload(ps_id="PS-1", entry_id=f"e-{len(ids) + 1}", topic="ship it?"),
                    after=deps(args[0]),
                    gate=True,
                    timeout_s=args[1],
                )
                ids.append(signal_id)
            elif kind == "approve":
                board.approve_gate(pick(args[0]), "alice", "looks right", now)
            elif kind == "reject":
                board.reject_gate(pick(args[0]), "bob", "not now", now)
            elif kind == "tick":
                now += timedelta(seconds=args[0])
            elif kind == "overdue":
                board.expire_overdue(now, timedelta(seconds=args[0]), timedelta(seconds=args[1]))
        except BlackboardError as error:
            refused.append(type(error).__name__)
            assert not board.has_pending_events, f"{step} was refused but recorded events"
        recorded += board.collect_events()
    return recorded, refused


def check_transitions(events: list[BlackboardEvent]) -> None:
    """Fold event by event and check each one moves its signal along an edge of the state machine."""
    board = BlackboardAggregate(BB)
    for event in events:
        if isinstance(event, AgentSignalPosted):
            assert event.signal_id not in board.signals
        else:
            before = board.signal(event.signal_id)
            assert before.status in ALLOWED_FROM[type(event)], f"{type(event).__name__} from {before.status}"
            if isinstance(event, AgentSignalClaimed):
                assert not before.waiting_for and not before.gate  # no agent claims a gate
            if isinstance(event, (AgentSignalApproved, AgentSignalRejected)):
                assert before.gate and not before.waiting_for
        board.apply(event)


def check_dependencies(board: BlackboardAggregate) -> None:
    """A live signal waits exactly for its unfinished upstreams, and none of them ended badly."""
    signals = board.signals
    for signal in signals.values():
        if signal.status.is_final:
            continue
        upstream = {u: signals[u].status for u in signal.after}
        assert not {
            u for u, status in upstream.items() if status.is_final and status is not SignalStatus.COMPLETED
        }
        assert signal.waiting_for == {
            u for u, status in upstream.items() if status is not SignalStatus.COMPLETED
        }
        assert (signal.claimable_since is None) == bool(signal.waiting_for)
        if signal.status is SignalStatus.CLAIMED:
            assert not signal.waiting_for and signal.claimed_at >= signal.claimable_since


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=st.lists(commands, min_size=15, max_size=50))
def test_replaying_the_recorded_events_rebuilds_the_live_board_and_the_read_model(script):
    live = BlackboardAggregate(BB)

    events, _ = run(live, script)

    assert [e.version for e in events] == list(range(1, len(events) + 1))
    assert live.version == len(events)
    replayed = BlackboardAggregate.replay(BB, events)
    assert replayed.version == live.version
    assert replayed.signals == live.signals
    for key in ("k0", "k1", "k2"):
        assert replayed.find_by_key(key) == live.find_by_key(key)
    check_transitions(events)
    check_dependencies(live)

    read_model = InMemorySignalReadModel()
    records = [
        Recorded(position=n, event=e, recorded_at=e.occurred_at) for n, e in enumerate(events, start=1)
    ]
    half = len(records) // 2
    read_model.apply(records[:half])
    read_model.apply(records)  # the first half again: already folded, so ignored
    assert read_model.position() == len(records)
    assert {s.signal_id: s for s in read_model.find(SignalFilter())} == dict(live.signals)
    for signal_id, signal in live.signals.items():
        assert read_model.get(signal_id) == signal


def test_the_command_generator_reaches_every_event_type_and_refusal():
    # A fixed script, so the property above is known to be able to exercise every edge.
    script = [
        ("post", 0, None, [], "k0"),  # sig-1 RESEARCH
        ("post", 1, None, [ref("any", 0)], None),  # sig-2 ANALYSIS after sig-1
        ("post", 0, None, [], "k0"),  # dedupe: nothing recorded
        ("claim", ref("any", 1), 1),  # DependenciesPending
        ("claim", ref("any", 0), 1),  # BelowThreshold (0.8 is not above 0.8)
        ("claim", ref("any", 0), "best"),  # claimed by ps-researcher
        ("complete", ref("any", 0), 1),  # NotTheClaimer
        ("complete", ref("any", 0), "claimer"),  # completed; sig-2 becomes claimable
        ("claim", ref("POSTED", 0), 1),  # sig-2 claimed by ps-analyst
        ("fail", ref("any", 1), "claimer"),  # failed
        ("post", 2, None, [], None),  # sig-3 REVIEW
        ("unclaim", ref("POSTED", 0)),  # sig-3 unclaimed
        ("post", 0, None, [ref("any", 2)], None),  # sig-4 after an unclaimed one: expired at once
        ("post", 0, None, [], None),  # sig-5
        ("post", 3, "REVIEW", [], None),  # sig-6 SYNTHESIS or REVIEW, after nothing
        ("claim", ref("any", 5), 2),  # ps-reviewer, 0.6 over its own 0.5
        ("tick", 400),
        ("overdue", 30, 300),  # sig-5 and sig-6 expired by timeout
        ("expire", ref("any", 4)),  # InvalidTransition
        ("repost", ref("any", 0)),  # DuplicateSignal
        ("claim", ref("unknown", 0), 0),  # SignalNotFound
        ("post", 0, None, [], None),  # sig-7
        ("post", 0, None, [ref("POSTED", 0)], None),  # sig-8 after sig-7
        ("cancel", ref("POSTED", 0)),  # sig-7 cancelled, and sig-8 with it
        ("gate", [], None),  # sig-9, a gate
        ("post", 0, None, [ref("any", 8)], None),  # sig-10 after the gate
        ("claim", ref("any", 8), "best"),  # GateNotClaimable
        ("approve", ref("any", 9)),  # NotAGate
        ("approve", ref("any", 8)),  # approved: sig-10 becomes claimable
        ("gate", [], 30),  # sig-11, a gate with a timeout of its own
        ("post", 0, None, [ref("any", 10)], None),  # sig-12 after it
        ("reject", ref("any", 10)),  # rejected: sig-12 expires with it
        ("reject", ref("any", 10)),  # InvalidTransition: it is FAILED
    ]
    board = BlackboardAggregate(BB)

    events, refused = run(board, script)

    assert {type(e) for e in events} == {
        AgentSignalPosted,
        AgentSignalClaimed,
        AgentSignalCompleted,
        AgentSignalFailed,
        AgentSignalExpired,
        AgentSignalUnclaimed,
        AgentSignalCancelled,
        AgentSignalApproved,
        AgentSignalRejected,
    }
    assert board.signal("sig-00000008").result.error.startswith("upstream sig-00000007 was cancelled")
    assert refused == [
        "DependenciesPending",
        "BelowThreshold",
        "NotTheClaimer",
        "InvalidTransition",
        "DuplicateSignal",
        "SignalNotFound",
        "GateNotClaimable",
        "NotAGate",
        "InvalidTransition",
    ]
    assert board.signal("sig-0000000a").is_claimable  # its gate was approved
    assert board.signal("sig-0000000c").result.error == (
        "upstream sig-0000000b ended FAILED: rejected by bob: not now"
    )
    assert [board.signal(f"sig-{n:08x}").status for n in range(1, 7)] == [
        SignalStatus.COMPLETED,
        SignalStatus.FAILED,
        SignalStatus.UNCLAIMED,
        SignalStatus.EXPIRED,
        SignalStatus.EXPIRED,
        SignalStatus.EXPIRED,
    ]
    assert "ps-reviewer did not finish" in board.signal("sig-00000006").result.error  # claim timeout, 300s
    assert board.signal("sig-00000005").result.error.startswith("not claimed within 30s")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=st.lists(commands, min_size=15, max_size=50))
def test_every_history_the_commands_record_passes_the_import_rules(script):
    """domain/admission.py judges nothing a command could record as broken (an import of a genuine
    export never fails on its rules), and folds it as a replay does."""
    live = BlackboardAggregate(BB)
    events, _ = run(live, script)

    imported = BlackboardAggregate(BB)
    for event in events:
        admit(imported, event)

    assert imported.signals == live.signals
