"""`make demo`: a short scripted story through the use cases, ending with the event log."""

from __future__ import annotations

from pathlib import Path

from application.commands import (
    ClaimSignal,
    CompleteSignal,
    GetOpenSignals,
    PostSignal,
    WatchSignals,
)
from application.dispatcher import EventDispatcher
from application.queries import BlackboardQueries
from application.service import BlackboardService, Settings
from domain.capabilities import AgentCapability, AgentProfile
from domain.errors import BlackboardError
from domain.events import AgentSignalCompleted, BlackboardEvent
from application.ports import SignalFilter
from infrastructure.clock import RandomSignalIds, SystemClock
from infrastructure.memory.agents import FixedAgentRegistry
from infrastructure.persistence.engine import StoreSettings, make_engine
from infrastructure.persistence.event_store import SqlAlchemyEventStore
from infrastructure.persistence.read_model import SqlSignalReadModel
from infrastructure.persistence.rebuild import BlackboardProjectionRebuilder
from infrastructure.persistence.schema import ensure_schema
from infrastructure.persistence.snapshots import SqlSnapshotStore

DEMO_DB = Path(".blackboard/demo.db")


def _agent(name: str, **scores: float) -> AgentProfile:
    caps = tuple(AgentCapability(type=t, score=s) for t, s in scores.items())
    return AgentProfile(agent_id=name, capabilities=caps)


AGENTS = [
    _agent("ps-researcher", RESEARCH=0.95, INVESTIGATION=0.7),
    _agent("ps-analyst", ANALYSIS=0.9, RESEARCH=0.85),
    _agent("ps-reviewer", REVIEW=0.95),
]


def say(text: str) -> None:
    print(text)


def main() -> None:
    for leftover in DEMO_DB.parent.glob(DEMO_DB.name + "*"):
        leftover.unlink()  # a fresh board every run
    engine = make_engine(StoreSettings(url=f"sqlite:///{DEMO_DB}"))
    ensure_schema(engine)
    say(f"An event store on the embedded default: SQLite file {DEMO_DB} (WAL), created and migrated now.\n")
    store, read_model = SqlAlchemyEventStore(engine), SqlSignalReadModel(engine)
    registry, dispatcher = FixedAgentRegistry(AGENTS), EventDispatcher()
    settings = Settings()
    service = BlackboardService(
        store, read_model, registry, dispatcher, SystemClock(), RandomSignalIds(), settings, SqlSnapshotStore(engine)
    )
    queries = BlackboardQueries(store, read_model, registry, settings.claim_threshold)
    dispatcher.register(
        AgentSignalCompleted, lambda e: say(f"  [dispatcher] ps-reviewer hears that {e.signal_id} completed")
    )

    say("1. The PS skill posts a RESEARCH signal, and a REVIEW signal that must wait for it.")
    research = service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id="ps-demo", entry_id="e-1", topic="event sourcing for agents")
    )
    review = service.post_signal(
        PostSignal(signal_type="REVIEW", ps_id="ps-demo", entry_id="e-2", topic="review the research",
                   after=(research.signal_id,))
    )
    say(f"   {research.signal_id} RESEARCH {research.status}; {review.signal_id} REVIEW waits for {research.signal_id}")

    say("2. Agents self-select. Claimable RESEARCH work right now:")
    for signal in queries.open_signals(GetOpenSignals(capabilities=("RESEARCH", "REVIEW"))):
        say(f"   {signal.signal_id} {signal.signal_type}")
    say("3. ps-researcher (0.95) claims it; ps-analyst (0.85) tries too and loses.")
    service.claim_signal(ClaimSignal(signal_id=research.signal_id, agent_id="ps-researcher"))
    try:
        service.claim_signal(ClaimSignal(signal_id=research.signal_id, agent_id="ps-analyst"))
    except BlackboardError as refused:
        say(f"   refused: {refused}")
    say("4. The reviewer cannot start before the research is done:")
    try:
        service.claim_signal(ClaimSignal(signal_id=review.signal_id, agent_id="ps-reviewer"))
    except BlackboardError as refused:
        say(f"   refused: {refused}")

    mark = store.last_position()
    say("5. ps-researcher completes with an artifact.")
    service.complete_signal(
        CompleteSignal(signal_id=research.signal_id, agent_id="ps-researcher",
                       artifact_path="docs/research/event-sourcing.md", knowledge_items=("use an append-only log",))
    )
    done = queries.watch(WatchSignals(signal_types=("RESEARCH",), since=mark))
    say(f"   watch(RESEARCH) sees: {[s.signal_id for s in done.signals]} with {done.signals[0].result.artifact_path}")
    say("6. Now the review is claimable; ps-reviewer claims and completes it.")
    service.claim_signal(ClaimSignal(signal_id=review.signal_id, agent_id="ps-reviewer"))
    service.complete_signal(
        CompleteSignal(signal_id=review.signal_id, agent_id="ps-reviewer", knowledge_items=("looks sound",))
    )

    say("\nThe event log (every change is a fact, in order):")
    for record in store.read_all():
        say(f"  {record.position:>3}  {record.event.blackboard_id}@{record.event.version}  "
            f"{record.event.event_type:<22} {_summary(record.event)}")

    live = read_model.find(SignalFilter())
    say("\nThe read model (blackboard_signals), folded in the same transactions as the events:")
    for signal in live:
        say(f"  {signal.signal_id} {signal.signal_type:<9} {signal.status:<10} by {signal.claimed_by}")
    replayed = BlackboardProjectionRebuilder(engine).rebuild()
    same = read_model.find(SignalFilter()) == live
    say(f"\nRebuilt the read model from the log: {replayed} events replayed, "
        f"{'identical to the live one' if same else 'DIFFERENT from the live one'}.")
    if not same:
        raise SystemExit(1)


def _summary(event: BlackboardEvent) -> str:
    data = event.data()
    keep = ("signal_id", "signal_type", "after", "claimed_by", "completed_by", "reason", "error")
    return " ".join(f"{k}={data[k]}" for k in keep if data.get(k))


if __name__ == "__main__":
    main()
