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
from typing import Any

from sqlalchemy import Engine

from bench.common import AGENT, Timer
from blackboard.application.ports import Scope, UnitOfWork
from blackboard.application.projection import Projector
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.events import EntryWritten
from blackboard.domain.signals import SignalPayload, SignalResult, SignalType, SignalUsage
from blackboard.infrastructure.persistence.dialect import dialect_of
from blackboard.infrastructure.persistence.engine import write_transaction
from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore, append_in
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
    """Decides events on an in-memory aggregate and appends them every `batch` events (no rows: see `fold`).

    Entries written on the board (`write_entry`: each key its own stream, as the knowledge service
    writes them) are appended in the same transaction as the board's batch."""

    def __init__(
        self,
        engine: Engine,
        board: str,
        prefix: int,
        batch: int = 1000,
        start: datetime = T0,
        step: timedelta = timedelta(milliseconds=1),
    ) -> None:
        self.engine = engine
        self.store = SqlAlchemyEventStore(engine)
        self.board = BlackboardAggregate(board)
        self.prefix = prefix
        self.batch = batch
        self.posted = 0
        self.events = 0
        self._stored = 0  # the board's version in the store
        self._at = start
        self._step = step  # between two events
        self._entries: list[EntryWritten] = []  # written since the last flush
        self._entry_versions: dict[str, int] = {}  # key -> its stream's version

    def _now(self) -> datetime:
        self._at += self._step
        return self._at

    def at(self) -> datetime:
        """The time of an event decided on `board` directly (bench/web_board.py): a step after the last."""
        return self._now()

    def decided(self) -> None:
        """Events were decided on `board` directly: appended once a batch is due."""
        self._maybe_flush()

    def post(self, max_attempts: int | None = None, after: tuple[str, ...] = ()) -> str:
        sid = signal_id(self.prefix, self.posted)
        self.board.post_signal(
            signal_id=sid,
            signal_type=SignalType.RESEARCH,
            payload=_payload(self.board.id, self.posted),
            posted_by="ps-skill",
            at=self._now(),
            max_attempts=max_attempts,
            after=after,
        )
        self.posted += 1
        self._maybe_flush()
        return sid

    def renew(self, sid: str) -> None:
        """The claimer's heartbeat: its claim timeout starts again."""
        self.board.renew_claim(sid, AGENT.agent_id, self._now())
        self._maybe_flush()

    def fail(self, sid: str) -> None:
        """The claimer's attempt failed: POSTED again at once while attempts are left, else FAILED."""
        self.board.fail_signal(sid, AGENT.agent_id, "seeded failure", self._now(), retry_after=0)
        self._maybe_flush()

    def retry(self, sid: str) -> str:
        """A FAILED signal posted again as a new signal (`blackboard retry`); its id."""
        new = signal_id(self.prefix, self.posted)
        self.board.retry_signal(sid, new, "ps-skill", self._now())
        self.posted += 1
        self._maybe_flush()
        return new

    def write_entry(self, key: str, sid: str | None = None) -> None:
        """A new version of the entry `key` on this board, written by the agent."""
        version = self._entry_versions.get(key, 0) + 1
        self._entry_versions[key] = version
        self._entries.append(
            EntryWritten(
                blackboard_id=self.board.id,
                version=version,
                occurred_at=self._now(),
                signal_id=sid,
                key=key,
                value={"version": version, "text": f"seeded finding {key} v{version}"},
                author=AGENT.agent_id,
                entry_type="finding",
                topics=(f"topic-{len(self._entry_versions) % 50}",),
            )
        )
        self._maybe_flush()

    def claim(self, sid: str) -> None:
        self.board.claim_signal(sid, AGENT, self._now())
        self._maybe_flush()

    def complete(self, sid: str, usage: SignalUsage | None = None) -> None:
        """`usage`: what a runner's run of it cost, recorded with the completion."""
        self.board.complete_signal(
            sid, AGENT.agent_id, SignalResult(artifact_path=f"out/{sid}.md"), self._now(), usage=usage
        )
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        if self.board.version - self._stored + len(self._entries) >= self.batch:
            self.flush()

    def flush(self) -> None:
        events = self.board.collect_events()
        if events and not self._entries:
            self.store.append(self.board.id, self.board.version - len(events), events, META)
        elif self._entries:  # the board's batch and the entries' in one transaction, under the log
            with write_transaction(self.engine) as conn:
                dialect_of(self.engine).hold_log(conn)
                if events:
                    first = events[0].version - 1
                    append_in(conn, self.board.id, first, events, META, version=first, notify=False)
                by_key: dict[str, list[EntryWritten]] = {}
                for entry in self._entries:
                    by_key.setdefault(entry.stream_id, []).append(entry)
                for stream, written in by_key.items():
                    first = written[0].version - 1
                    append_in(conn, stream, first, written, META, version=first, notify=False)
        self.events += len(events) + len(self._entries)
        self._entries = []
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


def seed_busy(
    engine: Engine,
    board: str,
    prefix: int,
    signals: int,
    events: int,
    on_batch: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """A board that has seen work: `signals` signals and about `events` events in all, then folded by
    one catch-up. Work goes in rounds of 100 signals, so the log interleaves the kinds as a busy board's
    does. Of each 100: 5 left POSTED (open); 65 claimed and completed; 20 claimed, failed with an
    attempt left (POSTED again), claimed again and completed; 5 claimed and FAILED for good, each
    retried as a new signal (5 more) that is claimed and completed. Every completion writes its
    finding as an entry on the board (its key's own stream). What is left to reach `events` goes half
    to claim renewals (the claimer's heartbeat), half to new versions of the round's entries. With
    fewer events than that work takes, the board has more than asked (about 4.2 events a signal).
    Returns the signals, the events (and per kind), and the seconds appending and folding took."""
    seeder = Seeder(engine, board, prefix)
    kinds = {"posted": 0, "claimed": 0, "renewed": 0, "completed": 0, "attempt_failed": 0}
    kinds |= {"failed": 0, "retried": 0, "entry_versions": 0}

    def claim(sid: str) -> None:
        seeder.claim(sid)
        kinds["claimed"] += 1

    def complete(sid: str) -> None:
        seeder.complete(sid)
        kinds["completed"] += 1
        seeder.write_entry(f"finding/{sid}", sid)
        kinds["entry_versions"] += 1

    def done() -> int:
        return sum(kinds.values())

    with Timer() as t_append:
        while seeder.posted < signals:
            n = min(100, signals - seeder.posted)
            plan = _round_plan(n)
            ids = [
                seeder.post(max_attempts=2 if i < plan["once"] else None) for i in range(n - plan["retry"])
            ]
            kinds["posted"] += len(ids)
            once, rest = ids[: plan["once"]], ids[plan["once"] :]
            for_good, plain = rest[: plan["retry"]], rest[plan["retry"] : len(rest) - plan["open"]]
            for sid in ids[: len(ids) - plan["open"]]:
                claim(sid)
            for sid in once:
                seeder.fail(sid)
                kinds["attempt_failed"] += 1
                claim(sid)
            for sid in for_good:
                seeder.fail(sid)
                kinds["failed"] += 1
            retries = [seeder.retry(sid) for sid in for_good]
            kinds["retried"] += len(retries)  # each a new signal's post
            for sid in retries:
                claim(sid)
            claimed = once + plain + retries
            # the fill: what this round leaves to reach `events` at the same share of the signals
            fill = max(0, round(events * seeder.posted / signals) - done() - len(claimed) * 2)
            for j in range(fill // 2):
                seeder.renew(claimed[j % len(claimed)])
                kinds["renewed"] += 1
            for sid in claimed:
                complete(sid)
            for j in range(fill - fill // 2):
                sid = claimed[j % len(claimed)]
                seeder.write_entry(f"finding/{sid}", sid)
                kinds["entry_versions"] += 1
            if on_batch and seeder.posted % 20_000 < 100:
                on_batch(seeder.posted)
        seeder.flush()
    with Timer() as t_fold:
        folded = fold(engine)
    return {
        "signals": seeder.posted,
        "events": seeder.events,
        "board_events": seeder.board.version,
        "kinds": kinds,
        "folded": folded,
        "append_s": round(t_append.seconds, 2),
        "fold_s": round(t_fold.seconds, 2),
        "seed_s": round(t_append.seconds + t_fold.seconds, 2),
    }


def _round_plan(n: int) -> dict[str, int]:
    """Of a round's n signals: failed once then completed, failed for good (each retried as one more
    signal among the n), left open."""
    retry = n * 5 // 100
    return {"once": n * 20 // 100, "retry": retry, "open": n * 5 // 100}


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
