"""What the page reads: a board now or at a log position (the same time travel as `--at`), an entry's
history, pages of the event log, and each new log record with the signal or entry it changed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from blackboard.application.commands import (
    ApproveGate,
    CancelSignal,
    ListSignals,
    NudgeSignal,
    RejectGate,
)
from blackboard.application.flow_charts import FlowChartQueries
from blackboard.application.knowledge.commands import ListEntries, ReadEntry
from blackboard.application.knowledge.ports import EntryReadModel
from blackboard.application.knowledge.queries import KnowledgeQueries
from blackboard.application.ports import Clock, EventStore, Recorded, SignalFilter, SignalReadModel
from blackboard.application.queries import BlackboardQueries
from blackboard.domain.events import EntryEvent
from blackboard.domain.signals import AgentSignal, SignalStatus
from blackboard.infrastructure import documents
from blackboard.infrastructure.interfaces.waiting import waiting_for_a_person, waiting_for_a_time

PAGE = 1000  # log records read at a time


class BoardView:
    def __init__(
        self,
        store: EventStore,
        signals: SignalReadModel,
        queries: BlackboardQueries,
        knowledge: KnowledgeQueries,
        entries: EntryReadModel,
        service: Any,
        clock: Clock,
        watcher: Any = None,
        held: Callable[[Sequence[AgentSignal]], dict[str, str]] | None = None,
    ) -> None:
        self.watcher = watcher  # a run's output as it comes (application/watching.py, `follow`)
        self._held = held  # why limits hold signals back, as `next` says (application/holding.py)
        self.charts = FlowChartQueries(store, signals, queries, clock)  # the Spend and flow panel's series
        self._clock = clock
        self._service = service  # given only with a token: a person decides gates, nudges and cancels runs
        self._store = store
        self._signals = signals
        self._queries = queries
        self._knowledge = knowledge
        self._entries = entries

    def boards(self) -> dict[str, Any]:
        """The boards that hold signals (a board of entries only shows up as its events arrive, or by
        `?board=`), and the log's last position. The boards are those `status` counts (GROUP BYs where the rows
        are: reading every signal for their boards took 0.5 s on a board of 10,000, before the page could ask
        for it)."""
        position = self._store.last_position()
        boards = [b.blackboard_id for b in self._signals.board_statuses(self._clock.now())]
        return {"position": position, "boards": boards, "decide": self.decides}

    @property
    def decides(self) -> bool:
        """Whether the page may act: decide gates, nudge and cancel runs (the server runs with a token)."""
        return self._service is not None

    def approve(self, signal_id: str, by: str, note: str | None) -> dict[str, Any]:
        signal = self._service.approve_gate(
            ApproveGate(signal_id=signal_id, approved_by=by, note=note or None)
        )
        return documents.jsonable(documents.signal(signal))

    def reject(self, signal_id: str, by: str, reason: str) -> dict[str, Any]:
        signal = self._service.reject_gate(RejectGate(signal_id=signal_id, rejected_by=by, reason=reason))
        return documents.jsonable(documents.signal(signal))

    def nudge(self, signal_id: str, by: str, text: str) -> dict[str, Any]:
        signal = self._service.nudge_signal(NudgeSignal(signal_id=signal_id, nudged_by=by, text=text))
        return documents.jsonable(documents.signal(signal))

    def cancel(self, signal_id: str, by: str, reason: str | None) -> dict[str, Any]:
        because = {} if reason is None else {"reason": reason}  # as `blackboard cancel` without --reason
        signal = self._service.cancel_signal(CancelSignal(signal_id=signal_id, cancelled_by=by, **because))
        return documents.jsonable(documents.signal(signal))

    def board(self, blackboard_id: str, at: int | None) -> dict[str, Any]:
        """Its signals and entries now (`at` None: the read model, at a position read before it, so the
        page's stream from there replays anything that lands meanwhile), or right after `at`."""
        position = self._store.last_position() if at is None else at
        signals = self._queries.list_signals(ListSignals(blackboard_id=blackboard_id, at=at))
        entries = self._knowledge.entries(ListEntries(blackboard_id=blackboard_id, at=at))
        return {
            "blackboard_id": blackboard_id,
            "position": position,
            "live": at is None,
            "signals": self._signals_now(signals)
            if at is None
            else documents.jsonable([documents.signal(s) for s in signals]),
            "entries": documents.jsonable(documents.entries(entries)),
        }

    def entry_history(self, blackboard_id: str, key: str, at: int | None) -> list[dict[str, Any]]:
        records = self._knowledge.history(
            ReadEntry(blackboard_id=blackboard_id, key=key, history=True, at=at)
        )
        return documents.jsonable([documents.history_version(r) for r in records])

    def events(self, blackboard_id: str | None, since: int, limit: int) -> dict[str, Any]:
        """Up to `limit` records after `since` (of one board, if given), and the position read up to."""
        found: list[dict[str, Any]] = []
        position = since
        while len(found) < limit and (page := self._store.read_all(after=position, limit=PAGE)):
            for record in page:
                if len(found) == limit:
                    break
                position = record.position
                if blackboard_id in (None, record.event.blackboard_id):
                    found.append(event_document(record))
        return {"events": found, "position": position}

    def read_after(self, position: int) -> list[Recorded]:
        return self._store.read_all(after=position, limit=PAGE)

    def last_position(self) -> int:
        return self._store.last_position()

    def live(self, record: Recorded) -> dict[str, Any]:
        """A new record, with the current document of the signal or entry it changed."""
        event, document = record.event, event_document(record)
        if isinstance(event, EntryEvent):
            entry = self._entries.get(event.blackboard_id, event.key)
            document["entry"] = documents.jsonable(documents.entry(entry)) if entry else None
        elif event.signal_id:
            signal = self._signals.get(event.signal_id)
            document["signal"] = (
                self._signals_now([signal], self._planned_with(signal))[0] if signal else None
            )
        return document

    def _planned_with(self, signal: AgentSignal) -> Sequence[AgentSignal]:
        """What a live record's signal is planned among for its limits' reasons: on a board with a budget, a
        POSTED one among the board's POSTED signals (those ahead of it in claim order reserve first, as `next`
        plans them); else itself alone."""
        if (
            self._held is None
            or signal.status is not SignalStatus.POSTED
            or not self._signals.budgets(signal.blackboard_id)
        ):
            return [signal]
        return self._signals.find(
            SignalFilter(blackboard_id=signal.blackboard_id, status=SignalStatus.POSTED)
        )

    def _signals_now(
        self, signals: Iterable[AgentSignal], planned: Sequence[AgentSignal] | None = None
    ) -> list[dict[str, Any]]:
        """The signals as they stand now, each POSTED one with why it waits, in the words `next` uses: its
        `waiting` (a worker that fits, as `show` and `signals` carry it) and `waits`, the page's own (a gate
        waits for a person, a signal posted for later for its time, and the limit holding it back: its
        board's budget, a concurrency key, a rate limit; docs/web.md). Its upstreams are its `waiting_for`.
        The limits are read once for all the signals given (a board, or a live record's one signal)."""
        signals = list(signals)
        unstarted = self._queries.waiting_for_workers(signals)
        now = self._clock.now()
        held = self._held(signals if planned is None else planned) if self._held is not None else {}
        found = []
        for s in signals:
            document = documents.jsonable(documents.signal(s, waiting=unstarted))
            document["waits"] = why_it_waits(s, now) + ([held[s.signal_id]] if s.signal_id in held else [])
            found.append(document)
        return found


def why_it_waits(signal: AgentSignal, now: datetime) -> list[str]:
    """A POSTED signal's waits `next` words (interfaces/waiting.py): a gate's person, a later post's time."""
    waits = [waiting_for_a_person(signal.signal_id)] if signal.waits_for_a_person(now) else []
    if signal.not_before is not None and signal.waits_for_its_time(now):
        waits.append(waiting_for_a_time(signal.not_before, signal.gate))
    return waits


def event_document(record: Recorded) -> dict[str, Any]:
    """A record for the page: a claim's token is a secret of its claimer, so it is not shown."""
    event = record.event
    data = documents.event(record).data  # as `events` shows it: a claim's token hidden
    return {
        "position": record.position,
        "event_type": event.event_type,
        "blackboard_id": event.blackboard_id,
        "key": event.key if isinstance(event, EntryEvent) else None,
        "signal_id": event.signal_id,
        "version": event.version,
        "recorded_at": record.recorded_at.isoformat(),
        "data": data,
        "actor": record.metadata.get("actor"),
    }
