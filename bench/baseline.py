"""(b) The same workload through the `eventsourcing` library (9.5.x) on its own SQLite persistence.

One aggregate per board whose state is a dict of signals, with the rules of our BlackboardAggregate
for posting, claiming and completing; each command is `repository.get`, a decision, `save`.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Aggregate, event

from bench.common import AGENT, temp_dir
from blackboard.domain.capabilities import DEFAULT_THRESHOLD

BOARD = "ps-bench"


class BoardRuleBroken(Exception):
    pass


class EsBoard(Aggregate):
    """A blackboard as an eventsourcing aggregate: public methods check the rules, @event methods record."""

    @staticmethod
    def create_id(name: str) -> UUID:
        return uuid5(NAMESPACE_URL, f"/blackboards/{name}")

    @event("Opened")
    def __init__(self, name: str) -> None:
        self.name = name
        self.signals: dict[str, dict[str, Any]] = {}

    # ------------------------------------------------------------------ commands with their rules
    def post(
        self, signal_id: str, signal_type: str, payload: dict[str, Any], posted_by: str, at: datetime
    ) -> None:
        if signal_id in self.signals:
            raise BoardRuleBroken(f"duplicate signal {signal_id}")
        self._posted(signal_id, signal_type, payload, [signal_type], posted_by, at)

    def claim(self, signal_id: str, agent_id: str, score: float, threshold: float, at: datetime) -> None:
        signal = self._signal(signal_id)
        if signal["status"] == "CLAIMED":
            raise BoardRuleBroken(f"{signal_id} already claimed by {signal['claimed_by']}")
        if signal["status"] != "POSTED":
            raise BoardRuleBroken(f"{signal_id} is {signal['status']}, not claimable")
        if not score > threshold:
            raise BoardRuleBroken(f"{agent_id} scores {score} on {signal_id}, not above {threshold}")
        self._claimed(signal_id, agent_id, score, at)

    def complete(self, signal_id: str, agent_id: str, result: dict[str, Any], at: datetime) -> None:
        signal = self._signal(signal_id)
        if signal["status"] != "CLAIMED":
            raise BoardRuleBroken(f"{signal_id} is {signal['status']}, cannot be completed")
        if signal["claimed_by"] != agent_id:
            raise BoardRuleBroken(f"{signal_id} is claimed by {signal['claimed_by']}, not {agent_id}")
        self._completed(signal_id, agent_id, result, at)

    def _signal(self, signal_id: str) -> dict[str, Any]:
        try:
            return self.signals[signal_id]
        except KeyError:
            raise BoardRuleBroken(f"no signal {signal_id} on {self.name}") from None

    # ------------------------------------------------------------------ events (also run on replay)
    @event("SignalPosted")
    def _posted(
        self,
        signal_id: str,
        signal_type: str,
        payload: dict[str, Any],
        target_capabilities: list[str],
        posted_by: str,
        at: datetime,
    ) -> None:
        self.signals[signal_id] = {
            "signal_type": signal_type,
            "payload": payload,
            "target_capabilities": target_capabilities,
            "posted_by": posted_by,
            "created_at": at,
            "status": "POSTED",
            "claimed_by": None,
            "claimed_at": None,
            "completed_at": None,
            "result": None,
            "version": 1,
        }

    @event("SignalClaimed")
    def _claimed(self, signal_id: str, claimed_by: str, score: float, at: datetime) -> None:
        signal = self.signals[signal_id]
        signal.update(status="CLAIMED", claimed_by=claimed_by, claimed_at=at, version=signal["version"] + 1)

    @event("SignalCompleted")
    def _completed(self, signal_id: str, completed_by: str, result: dict[str, Any], at: datetime) -> None:
        signal = self.signals[signal_id]
        signal.update(status="COMPLETED", result=result, completed_at=at, version=signal["version"] + 1)


class EsBlackboard(Application):
    name = "Blackboard"

    def _board(self, name: str) -> EsBoard:
        try:
            return self.repository.get(EsBoard.create_id(name))
        except AggregateNotFoundError:
            return EsBoard(name)

    def post_signal(self, board_name: str, i: int) -> str:
        board = self._board(board_name)
        while (signal_id := f"sig-{secrets.token_hex(4)}") in board.signals:
            pass  # same 32-bit random ids as ours: draw again on a collision
        payload = {
            "ps_id": board_name,
            "entry_id": f"e-{i}",
            "topic": f"benchmark topic {i}",
            "prompt": "find out what is known about this",
            "context": {},
        }
        board.post(signal_id, "RESEARCH", payload, "ps-skill", datetime.now(UTC))
        self.save(board)
        return signal_id

    def claim_signal(self, board_name: str, signal_id: str, agent_id: str) -> None:
        board = self._board(board_name)
        signal = board.signals.get(signal_id)
        score = AGENT.score_for_capability(signal["signal_type"]) if signal else 0.0
        board.claim(signal_id, agent_id, score, AGENT.threshold_or(DEFAULT_THRESHOLD), datetime.now(UTC))
        self.save(board)

    def complete_signal(self, board_name: str, signal_id: str, agent_id: str) -> None:
        board = self._board(board_name)
        result = {"artifact_path": f"out/{signal_id}.md", "knowledge_items": [], "error": None}
        board.complete(signal_id, agent_id, result, datetime.now(UTC))
        self.save(board)


@contextmanager
def synchronous_patch(mode: str | None) -> Iterator[None]:
    """eventsourcing has no setting for PRAGMA synchronous; to measure NORMAL we patch its connect."""
    if mode is None:
        yield
        return
    from eventsourcing import sqlite as es_sqlite

    original = es_sqlite.SQLiteConnectionPool._create_connection

    def create_connection(self: Any) -> Any:
        conn = original(self)
        conn._sqlite_conn.execute(f"PRAGMA synchronous={mode}")
        return conn

    es_sqlite.SQLiteConnectionPool._create_connection = create_connection  # type: ignore[method-assign]
    try:
        yield
    finally:
        es_sqlite.SQLiteConnectionPool._create_connection = original  # type: ignore[method-assign]


class TheirDriver:
    def __init__(self, app: EsBlackboard, settings: dict[str, Any]) -> None:
        self.app = app
        self.settings = settings
        self._boards: dict[str, str] = {}  # signal id -> board name (what our read model looks up)

    def post(self, i: int, board: str = BOARD) -> str:
        signal_id = self.app.post_signal(board, i)
        self._boards[signal_id] = board
        return signal_id

    def claim(self, signal_id: str) -> None:
        self.app.claim_signal(self._boards[signal_id], signal_id, AGENT.agent_id)

    def complete(self, signal_id: str) -> None:
        self.app.complete_signal(self._boards[signal_id], signal_id, AGENT.agent_id)


# The strictest setting: 64 boards kept in process, handed out without a copy (eventsourcing deep-copies
# by default). Ours keeps no board in process: each command reads the rows its decision touches.
TUNED = {"AGGREGATE_CACHE_MAXSIZE": "64", "DEEPCOPY_FROM_AGGREGATE_CACHE": "n"}


@contextmanager
def theirs(synchronous: str, tuned: bool) -> Iterator[TheirDriver]:
    """An eventsourcing application on a fresh SQLite file; only FULL is its own setting (SQLite's default).

    `tuned` adds TUNED to its environment; otherwise every setting but the two persistence ones is its default.
    """
    patch = None if synchronous == "FULL" else synchronous
    with temp_dir("eventsourcing") as d, synchronous_patch(patch):
        env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(Path(d) / "es.db")}
        env |= TUNED if tuned else {}
        app = EsBlackboard(env=env)
        settings = _effective_settings(app, env) | {"synchronous_patched_by_bench": patch is not None}
        try:
            yield TheirDriver(app, settings)
            board = app.repository.get(EsBoard.create_id(BOARD))
            statuses = {s["status"] for s in board.signals.values()}
            assert statuses <= {"COMPLETED"}, f"eventsourcing board ended with {statuses}"
        finally:
            app.close()


def _effective_settings(app: EsBlackboard, env: dict[str, str]) -> dict[str, Any]:
    with app.factory.datastore.transaction(commit=False) as cursor:  # type: ignore[attr-defined]
        cursor.execute("PRAGMA synchronous")
        synchronous = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}[cursor.fetchone()[0]]
        cursor.execute("PRAGMA journal_mode")
        journal = cursor.fetchone()[0]
    cache = app.repository.cache
    return {
        "deepcopy_from_cache": app.repository.deepcopy_from_cache,
        "env": {k: ("<temp file>" if k == "SQLITE_DBNAME" else v) for k, v in env.items()},
        "journal_mode": journal,
        "synchronous": synchronous,
        "aggregate_cache": None if cache is None else type(cache).__name__,
        "snapshotting": app.snapshots is not None,
    }
