"""Fast seeding: events decided by BlackboardAggregate itself, appended straight into the store in batches.

This reaches below the application's service on purpose (the domain aggregate and the SQL event
store's `append`): posting 100,000 signals one command at a time would take minutes. The store's
`append` only appends: the rows of those events follow at one `Projector.catch_up()` (`fold`), and
until then commands decide on the event log (slow), so a seeded board is folded before anything is
measured on it. The backlog of (f) goes through the unit of work instead: one transaction holding
its events and their rows, so that every worker sees all of it at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine

from bench.common import AGENT, Timer
from blackboard.application.ports import Scope, UnitOfWork
from blackboard.application.projection import Projector
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.signals import SignalPayload, SignalResult, SignalType
from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
META = {
    "actor": "bench-seed",
    "command": "Seed",
    "causation_id": "bench-seed",
    "correlation_id": "bench-seed",
}
PAGE = 5000  # events per transaction when folding, as the container's Projector


def signal_id(prefix: int, i: int) -> str:
    """Distinct per (prefix, i) for prefix < 16 and i < 2**28; signal ids are unique across boards."""
    return f"sig-{(prefix << 28) | i:08x}"


def _payload(board: str, i: int) -> SignalPayload:
    return SignalPayload(
        ps_id=board, entry_id=f"e-{i}", topic=f"seeded topic {i}", prompt="seeded by the benchmark"
    )


class Seeder:
    """Decides events on an in-memory aggregate and appends them every `batch` events (no rows: see `fold`)."""

    def __init__(
        self,
        engine: Engine,
        board: str,
        prefix: int,
        batch: int = 1000,
        start: datetime = T0,
        step: timedelta = timedelta(milliseconds=1),
    ) -> None:
        self.store = SqlAlchemyEventStore(engine)
        self.board = BlackboardAggregate(board)
        self.prefix = prefix
        self.batch = batch
        self.posted = 0
        self.events = 0
        self._stored = 0  # the board's version in the store
        self._at = start
        self._step = step  # between two events

    def _now(self) -> datetime:
        self._at += self._step
        return self._at

    def post(self) -> str:
        sid = signal_id(self.prefix, self.posted)
        self.board.post_signal(
            signal_id=sid,
            signal_type=SignalType.RESEARCH,
            payload=_payload(self.board.id, self.posted),
            posted_by="ps-skill",
            at=self._now(),
        )
        self.posted += 1
        self._maybe_flush()
        return sid

    def claim(self, sid: str) -> None:
        self.board.claim_signal(sid, AGENT, self._now())
        self._maybe_flush()

    def complete(self, sid: str) -> None:
        self.board.complete_signal(
            sid, AGENT.agent_id, SignalResult(artifact_path=f"out/{sid}.md"), self._now()
        )
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        if self.board.version - self._stored >= self.batch:
            self.flush()

    def flush(self) -> None:
        events = self.board.collect_events()
        if events:
            self.store.append(self.board.id, self.board.version - len(events), events, META)
            self.events += len(events)
            self._stored = self.board.version


def projector(engine: Engine) -> Projector:
    """The read model's projector on `engine`, as the container builds it (pages of PAGE events)."""
    return Projector(SqlAlchemyEventStore(engine), SqlSignalReadModel(engine), page_size=PAGE)


def fold(engine: Engine) -> int:
    """One catch-up: the rows of every event appended without them; returns how many were folded."""
    return projector(engine).catch_up()


def seed_posts(
    engine: Engine, board: str, prefix: int, n: int, on_batch: Callable[[int], None] | None = None
) -> dict[str, float]:
    """A board of n POSTED signals, 1000 posts per append, then folded into the read model by one
    catch-up. Returns the events, and the seconds appending and folding took."""
    seeder = Seeder(engine, board, prefix)
    with Timer() as t_append:
        for i in range(n):
            seeder.post()
            if on_batch and (i + 1) % 20_000 == 0:
                on_batch(i + 1)
        seeder.flush()
    with Timer() as t_fold:
        folded = fold(engine)
    return {
        "events": seeder.events,
        "folded": folded,
        "append_s": round(t_append.seconds, 2),
        "fold_s": round(t_fold.seconds, 2),
        "seed_s": round(t_append.seconds + t_fold.seconds, 2),
    }


def backlog(unit_of_work: UnitOfWork, board: str, n: int, prefix: int = 1) -> tuple[datetime, float]:
    """n POSTED signals on a new board in ONE command-like transaction of the unit of work (hold the
    board, load, decide the n posts on the aggregate, commit: the events and their rows together), all
    posted now at the same instant, so that every worker sees all of them at once; the commit's wall
    and monotonic time."""
    at = datetime.now(UTC)
    with unit_of_work.board(board) as tx:
        aggregate = tx.load(Scope())
        if aggregate.version:
            raise RuntimeError(f"the backlog wants a new board; {board} is at version {aggregate.version}")
        for i in range(n):
            aggregate.post_signal(
                signal_id=signal_id(prefix, i),
                signal_type=SignalType.RESEARCH,
                payload=_payload(board, i),
                posted_by="ps-skill",
                at=at,
            )
        tx.commit(aggregate, META)
    return datetime.now(UTC), time.monotonic()


def seed_mix(engine: Engine, total: int, boards: int = 4) -> dict[str, int]:
    """About `total` events over `boards` boards: every signal posted, 80% claimed, 70% completed,
    appended without their rows (section (d) folds them with a rebuild; anything else: `fold`).

    Work advances in rounds of 100 signals per board (posts, then claims and completions of them),
    so the log interleaves the kinds like a busy board does. Returns the count per event kind.
    """
    per_signal = 1 + 0.8 + 0.7
    signals_per_board = max(1, round(total / per_signal / boards))
    seeders = [Seeder(engine, f"ps-mix-{b}", prefix=8 + b) for b in range(boards)]
    counts = {"AgentSignalPosted": 0, "AgentSignalClaimed": 0, "AgentSignalCompleted": 0}
    round_size = 100
    for start in range(0, signals_per_board, round_size):
        for seeder in seeders:
            ids = [seeder.post() for _ in range(min(round_size, signals_per_board - start))]
            claimed = ids[: round(len(ids) * 0.8)]
            for sid in claimed:
                seeder.claim(sid)
            for sid in ids[: round(len(ids) * 0.7)]:
                seeder.complete(sid)
            counts["AgentSignalPosted"] += len(ids)
            counts["AgentSignalClaimed"] += len(claimed)
            counts["AgentSignalCompleted"] += round(len(ids) * 0.7)
    for seeder in seeders:
        seeder.flush()
    return counts
