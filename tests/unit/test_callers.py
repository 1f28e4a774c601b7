"""Who may do what (application/callers.py, application/authority.py): every cell of the table as the use cases
apply it, a run's claim checked as stored, and every use case that writes asking the table (the service over the
in-memory fakes)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from blackboard.application.authority import Authority
from blackboard.application.callers import (
    NO,
    PERSON,
    RULES,
    TABLE,
    WEB_WHY,
    WEB_WITHOUT_TOKEN,
    Act,
    Caller,
    Kind,
)
from blackboard.application.commands import (
    ApproveGate,
    CancelSignal,
    CancelSignals,
    ClaimSignal,
    CompleteSignal,
    ExpireSignals,
    GetSignalById,
    ListSignals,
    PostSignal,
    RejectGate,
    RenewClaim,
    RetrySignal,
    SetBudget,
)
from blackboard.application.errors import NotPermitted
from blackboard.application.flows.commands import CancelFlow, FlowSpec, RetryFlow, RunFlow
from blackboard.application.knowledge.commands import (
    ListEntries,
    ReadEntry,
    ResolveEntry,
    SummarizeBoard,
    WriteEntry,
)
from blackboard.domain.knowledge.permissions import KeyPermissionDenied
from blackboard.domain.signals import AgentSignal, SignalPayload, SignalType
from tests.fakes import Board, agent

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TIMEOUT = timedelta(minutes=5)


def held(signal_id: str = "sig-0000000a", token: str = "tok", **changes) -> AgentSignal:
    base = AgentSignal(
        signal_id=signal_id,
        blackboard_id="b",
        signal_type=SignalType.RESEARCH,
        payload=SignalPayload(ps_id="ps-1", entry_id="e-1", topic="t"),
        target_capabilities=("RESEARCH",),
        posted_by="ps-skill",
        created_at=T0,
    ).claimed("ps-researcher", T0, token)
    return replace(base, **changes)


class Signals:
    def __init__(self, *signals: AgentSignal) -> None:
        self._by_id = {s.signal_id: s for s in signals}

    def get(self, signal_id: str) -> AgentSignal | None:
        return self._by_id.get(signal_id)


class At:
    def __init__(self, now: datetime) -> None:
        self._now = now

    def now(self) -> datetime:
        return self._now


def caller_of(kind: Kind, token: str = "tok") -> Caller:
    if kind in (Kind.RUN, Kind.SESSION):
        return Caller(kind, "ps-researcher", "sig-0000000a", token, "b")
    return Caller(kind, "ps-researcher" if kind is Kind.AGENT else None)


def authority(caller: Caller, *signals: AgentSignal, now: datetime = T0) -> Authority:
    return Authority(lambda: caller, Signals(*(signals or (held(),))), At(now), TIMEOUT)


CELLS = [(rule, kind) for rule in TABLE for kind in Kind]


@pytest.mark.parametrize(("rule", "kind"), CELLS, ids=[f"{r.act.name}-{k.name}" for r, k in CELLS])
def test_each_cell_of_the_table_is_what_the_check_does(rule, kind):
    caller = caller_of(kind)
    if rule.cell(kind) != NO:
        assert authority(caller).check(rule.act) == caller  # allowed (within its limit: see below)
        return
    with pytest.raises(NotPermitted) as refused:
        authority(caller).check(rule.act)
    why = rule.why
    if kind in (Kind.WEB, Kind.WEB_READ):
        why = WEB_WHY if rule.cell(Kind.WEB) == NO else WEB_WITHOUT_TOKEN
    assert str(refused.value) == f"{caller.who} may not {rule.act.value}: {why}"


def test_the_web_view_with_its_token_does_a_person_s_acts_on_gates_and_runs_and_without_it_none():
    allowed = {rule.act for rule in TABLE if rule.cell(Kind.WEB) != NO}
    assert allowed == {Act.READ, Act.DECIDE, Act.NUDGE, Act.CANCEL}
    assert {rule.act for rule in TABLE if rule.cell(Kind.WEB_READ) != NO} == {Act.READ}
    with pytest.raises(NotPermitted, match="nudges and cancels runs only when it runs with a token"):
        authority(caller_of(Kind.WEB_READ)).check(Act.NUDGE)


def test_a_person_may_do_everything_and_only_a_person_sets_limits_imports_and_rebuilds():
    assert all(rule.cell(Kind.PERSON) != NO for rule in TABLE)
    for act in (Act.LIMITS, Act.IMPORT, Act.REBUILD, Act.AS_ANOTHER, Act.RETRY):
        assert [k for k in Kind if RULES[act].cell(k) != NO] == [Kind.PERSON]


@pytest.mark.parametrize(
    ("caller", "stored", "now", "why"),
    [
        (
            Caller(Kind.RUN, "ps-researcher"),
            held(),
            T0,
            "it presents no claim the board can check (no signal, token)",
        ),
        (caller_of(Kind.RUN), held("sig-0000000b"), T0, "the board has no signal sig-0000000a"),
        (caller_of(Kind.RUN), held(status="COMPLETED"), T0, "its claim is over: sig-0000000a is COMPLETED"),
        (
            caller_of(Kind.RUN, "guess"),
            held(),
            T0,
            "its claim is over: sig-0000000a is held by another claim",
        ),
        (caller_of(Kind.SESSION), held(claimed_by="ps-other"), T0, "is held by another claim"),
        (caller_of(Kind.RUN), held(), T0 + TIMEOUT, "its claim is over: it ran past its claim timeout"),
    ],
)
def test_a_run_whose_claim_is_not_live_as_stored_writes_nothing(caller, stored, now, why):
    with pytest.raises(NotPermitted) as refused:
        authority(caller, stored, now=now).check(Act.POST)
    assert why in str(refused.value)
    assert authority(caller, stored, now=now).check(Act.READ) == caller  # reading needs no claim


ONE_STEP = FlowSpec(name="f", steps=[{"id": "review", "capability": "REVIEW", "topic": "look"}])


def run_board() -> tuple[Board, AgentSignal, Caller]:
    board = Board(agent("ps-researcher", RESEARCH=0.9), agent("ps-lead", REVIEW=0.9))
    posted = board.service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t", write_keys=("ok/*",))
    )
    board.service.claim_signal(ClaimSignal(signal_id=posted.signal_id, agent_id="ps-researcher", token="tok"))
    return board, posted, Caller(Kind.RUN, "ps-researcher", posted.signal_id, "tok", "ps-1")


def test_every_use_case_that_writes_asks_the_table():
    board, work, run = run_board()
    other = board.service.post_signal(
        PostSignal(signal_type="REVIEW", ps_id="ps-1", entry_id="e-2", topic="o")
    )
    gate = board.service.post_signal(
        PostSignal(signal_type="DECISION", ps_id="ps-1", entry_id="e-3", topic="g", gate=True)
    )
    service, knowledge = board.service.acting(run), board.container.knowledge().acting(run)
    before = board.event_types()
    refused = {
        "approve": lambda: service.approve_gate(ApproveGate(signal_id=gate.signal_id, approved_by="me")),
        "reject": lambda: service.reject_gate(
            RejectGate(signal_id=gate.signal_id, rejected_by="me", reason="r")
        ),
        "budget": lambda: service.set_budget(SetBudget(board="ps-9", usd=1000)),
        "cancel": lambda: service.cancel_signal(CancelSignal(signal_id=other.signal_id)),
        "cancel all": lambda: service.cancel_signals(CancelSignals(blackboard_id="ps-1")),
        "retry": lambda: service.retry_signal(RetrySignal(signal_id=other.signal_id)),
        "claim": lambda: service.claim_signal(
            ClaimSignal(signal_id=other.signal_id, agent_id="ps-researcher")
        ),
        "complete other": lambda: service.complete_signal(
            CompleteSignal(signal_id=other.signal_id, agent_id="ps-researcher")
        ),
        "renew as another": lambda: service.renew_claim(
            RenewClaim(signal_id=work.signal_id, agent_id="ps-lead")
        ),
        "post as another": lambda: service.post_signal(
            PostSignal(signal_type="REVIEW", ps_id="ps-1", entry_id="e-4", topic="p", posted_by="ps-lead")
        ),
        "write as another": lambda: knowledge.write(
            WriteEntry(blackboard_id="ps-1", key="ok/a", value=1, author="ps-lead")
        ),
        "resolve as another": lambda: knowledge.resolve(
            ResolveEntry(blackboard_id="ps-1", key="ok/a", author="ps-lead", rationale="r", value=1)
        ),
        "run a flow as another": lambda: service.run_flow(
            RunFlow(blackboard_id="ps-1", flow=ONE_STEP, posted_by="ps-lead")
        ),
        "cancel a flow": lambda: service.cancel_flow(CancelFlow(blackboard_id="ps-1", flow_id="f-1")),
        "retry a flow": lambda: service.retry_flow(RetryFlow(blackboard_id="ps-1", flow_id="f-1")),
        "write under another signal": lambda: knowledge.write(
            WriteEntry(
                blackboard_id="ps-1", key="ok/a", value=1, author="ps-researcher", signal_id=other.signal_id
            )
        ),
    }
    for name, act in refused.items():
        with pytest.raises(NotPermitted):
            act()
        assert board.event_types() == before, name
    with pytest.raises(KeyPermissionDenied, match="secret/x is not in its write keys"):
        knowledge.write(WriteEntry(blackboard_id="ps-1", key="secret/x", value=1, author="ps-researcher"))
    with pytest.raises(KeyPermissionDenied, match="its write keys are keys of board ps-1, not ps-2"):
        knowledge.write(WriteEntry(blackboard_id="ps-2", key="ok/a", value=1, author="ps-researcher"))
    assert board.event_types() == before

    follow_up = service.post_signal(PostSignal(signal_type="REVIEW", ps_id="ps-1", entry_id="e-5", topic="f"))
    [flowed] = service.run_flow(RunFlow(blackboard_id="ps-1", flow=ONE_STEP, flow_id="f-2"))  # as itself
    assert flowed.posted_by == "ps-researcher"
    written = knowledge.write(WriteEntry(blackboard_id="ps-1", key="ok/a", value=1, author="ps-researcher"))
    service.renew_claim(RenewClaim(signal_id=work.signal_id, agent_id="ps-researcher", token="tok"))
    service.expire_signals(ExpireSignals())
    done = service.complete_signal(
        CompleteSignal(signal_id=work.signal_id, agent_id="ps-researcher", token="tok")
    )
    assert (follow_up.posted_by, written.current.author, done.status) == (
        "ps-researcher",
        "ps-researcher",
        "COMPLETED",
    )
    with pytest.raises(NotPermitted, match="its claim is over"):  # and once its claim is over, nothing more
        service.post_signal(PostSignal(signal_type="REVIEW", ps_id="ps-1", entry_id="e-6", topic="late"))


def test_import_and_rebuild_ask_the_table_for_whoever_calls():
    board, _, run = run_board()
    container = board.compose()
    container.authority.override(Authority(lambda: run))
    with pytest.raises(NotPermitted, match="may not import board ps-9: only a person imports a board"):
        container.transfer().import_board("ps-9", lambda: iter(()))
    with pytest.raises(NotPermitted, match="may not rebuild the read model: only a person rebuilds"):
        container.projector().rebuild()


def test_an_agent_s_server_claims_and_ends_its_own_claims_only_and_acts_as_itself():
    board, work, _ = run_board()
    other = board.service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-2", topic="o")
    )
    server = board.service.acting(Caller(Kind.AGENT, "ps-lead"))
    with pytest.raises(NotPermitted, match="ps-lead's MCP server may not claim a signal as ps-researcher"):
        server.claim_signal(ClaimSignal(signal_id=other.signal_id, agent_id="ps-researcher"))
    with pytest.raises(NotPermitted, match="may not complete as ps-researcher"):
        server.complete_signal(
            CompleteSignal(signal_id=work.signal_id, agent_id="ps-researcher", token="tok")
        )
    cancelled = server.cancel_signal(CancelSignal(signal_id=other.signal_id))  # as itself, not ps-skill
    assert (cancelled.status, board.store.read_all()[-1].metadata["actor"]) == ("CANCELLED", "ps-lead")
    person = board.service.acting(PERSON)
    assert (
        person.cancel_signal(CancelSignal(signal_id=work.signal_id, cancelled_by="alice")).status
        == "CANCELLED"
    )


def test_a_confined_caller_reaches_its_board_only_and_a_call_naming_none_is_of_its_board():
    confined = authority(Caller(Kind.AGENT, "ps-researcher", confined_to="b"))
    assert (confined.reach("b"), confined.reach(None)) == ("b", "b")
    with pytest.raises(NotPermitted, match="may not reach board c: it is confined to board b"):
        confined.reach("c")
    assert (authority(PERSON).reach("c"), authority(PERSON).reach(None)) == ("c", None)
    assert Caller(Kind.PERSON, confined_to="b").who == "a person's server"


def test_every_use_case_keeps_a_confined_caller_to_its_board():
    board, _, _ = run_board()
    other = board.service.post_signal(
        PostSignal(signal_type="REVIEW", ps_id="ps-2", entry_id="e-2", topic="elsewhere")
    )
    board.container.knowledge().write(WriteEntry(blackboard_id="ps-2", key="k", value=1, author="alice"))
    there = Caller(Kind.PERSON, confined_to="ps-1")
    service, knowledge = board.service.acting(there), board.container.knowledge().acting(there)
    queries = board.container.queries().acting(there)
    notes = board.container.knowledge_queries().acting(there)
    watcher = board.container.watcher().acting(there)
    before = board.event_types()
    reaching = {
        "post": lambda: service.post_signal(
            PostSignal(signal_type="REVIEW", ps_id="ps-2", entry_id="e-3", topic="t", blackboard_id="ps-2")
        ),
        "cancel its signal": lambda: service.cancel_signal(CancelSignal(signal_id=other.signal_id)),
        "cancel it naming our board": lambda: service.cancel_signal(
            CancelSignal(signal_id=other.signal_id, blackboard_id="ps-1")
        ),
        "cancel all": lambda: service.cancel_signals(CancelSignals(blackboard_id="ps-2")),
        "budget": lambda: service.set_budget(SetBudget(board="ps-2", usd=1)),
        "write": lambda: knowledge.write(WriteEntry(blackboard_id="ps-2", key="k", value=2, author="a")),
        "resolve": lambda: knowledge.resolve(
            ResolveEntry(blackboard_id="ps-2", key="k", author="a", rationale="r", value=2)
        ),
        "show": lambda: queries.get_signal(GetSignalById(signal_id=other.signal_id)),
        "list": lambda: queries.list_signals(ListSignals(blackboard_id="ps-2")),
        "events": lambda: queries.events(blackboard_id="ps-2"),
        "budget shown": lambda: queries.budget("ps-2"),
        "read": lambda: notes.read(ReadEntry(blackboard_id="ps-2", key="k")),
        "entries": lambda: notes.entries(ListEntries(blackboard_id="ps-2")),
        "summary": lambda: notes.summary(SummarizeBoard(blackboard_id="ps-2")),
        "wait": lambda: watcher.wait_for_signal(other.signal_id, 0),
        "topic": lambda: watcher.watch_topic("ps-2", "news", 0, 0),
    }
    for name, act in reaching.items():
        with pytest.raises(NotPermitted, match="may not reach board ps-2: it is confined to board ps-1"):
            act()
        assert board.event_types() == before, name
    assert {s.blackboard_id for s in queries.list_signals(ListSignals())} == {"ps-1"}
    assert {e.event.blackboard_id for e in queries.events()} == {"ps-1"}
    # a bulk cancel by correlation id that names no board cancels on its board alone
    ours, theirs = (
        board.service.post_signal(
            PostSignal(signal_type="REVIEW", ps_id=ps, entry_id="e-9", topic="t", correlation_id="run-1")
        )
        for ps in ("ps-1", "ps-2")
    )
    cancelled = service.cancel_signals(CancelSignals(posted_with="run-1"))
    assert [s.signal_id for s in cancelled] == [ours.signal_id]
    assert board.queries.get_signal(GetSignalById(signal_id=theirs.signal_id)).status == "POSTED"
