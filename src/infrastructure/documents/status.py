"""The store's documents: the workers present, open gates, a board's budget, and a board's status."""

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from blackboard.application.budgets import spent_of
from blackboard.domain.limits import Budget, Spent
from blackboard.domain.signals import (
    AgentSignal,
)
from blackboard.infrastructure.documents.base import Document, Number, Time
from blackboard.infrastructure.documents.entries import BoardUsage, board_usage
from blackboard.infrastructure.documents.flows import FlowSummary, flow_summary

if TYPE_CHECKING:
    from blackboard.application.status import BoardStatus, LiveFleet
    from blackboard.domain.presence import WorkerPresence

# ---------------------------------------------------------------- the store


class Worker(Document):
    """A live worker as `status` shows it (presence: a table, not events)."""

    worker_id: str
    agent: str
    host: str
    pid: int
    started_at: Time
    last_beat_at: Time
    boards: list[str] | None  # null: every board
    running: list[str]  # what it runs on the board shown (or on any, outside a board)


def worker(w: "WorkerPresence", blackboard_id: str | None = None) -> Worker:
    return Worker(
        worker_id=w.worker_id,
        agent=w.agent_id,
        host=w.host,
        pid=w.pid,
        started_at=w.started_at,
        last_beat_at=w.last_beat,
        boards=list(w.boards) or None,
        running=[sid for sid, board in w.running if blackboard_id in (None, board)],
    )


class Run(Document):
    """A signal a live worker runs now, as the web view's Workers panel shows it."""

    signal_id: str
    blackboard_id: str
    claimed_at: Time
    running_seconds: float  # since its claim, by the server's clock


class LiveWorker(Worker):
    """A live worker as the web view's Workers panel shows it: `status`'s document (its `running` those
    of its signals still claimed), with how long ago it beat and each signal it runs in full."""

    last_beat_seconds: float  # by the server's clock
    runs: list[Run]


class Fleet(Document):
    """The live workers (`GET /api/workers`), as the server's clock saw them `at`."""

    at: Time
    workers: list[LiveWorker]


def fleet(f: "LiveFleet") -> Fleet:
    def since(then: datetime) -> float:  # another host's clock may run ahead: never a negative age
        return max(0.0, round((f.at - then).total_seconds(), 1))

    found = []
    for w in f.workers:
        runs = f.runs(w)
        shown = worker(replace(w, running=tuple((s.signal_id, s.blackboard_id) for s, _ in runs)))
        found.append(
            LiveWorker(
                **shown.model_dump(),
                last_beat_seconds=since(w.last_beat),
                runs=[
                    Run(
                        signal_id=s.signal_id,
                        blackboard_id=s.blackboard_id,
                        claimed_at=claimed_at,
                        running_seconds=since(claimed_at),
                    )
                    for s, claimed_at in runs
                ],
            )
        )
    return Fleet(at=f.at, workers=found)


class OpenGate(Document):
    """A gate waiting for a person's decision, as `status` lists it."""

    signal_id: str
    topic: str
    posted_by: str
    open_since: Time | None  # when it opened (its upstreams completed, its not_before came)
    timeout_s: Number | None  # it expires this long after it opened; null: it waits


def open_gate(s: AgentSignal) -> OpenGate:
    return OpenGate(
        signal_id=s.signal_id,
        topic=s.payload.topic,
        posted_by=s.posted_by,
        open_since=s.claimable_since,
        timeout_s=s.timeout_s,
    )


class BoardBudget(Document):
    """A board's budget (`blackboard budget`): its signals are not claimed once what was spent reaches it."""

    blackboard_id: str
    usd: float | None  # None: no limit in US dollars
    tokens: int | None  # None: no limit in tokens
    spent_usd: float  # what the runners' runs recorded on the board cost (priced runs)
    spent_tokens: int  # their input and output tokens
    reached: str | None  # why its signals wait; None: they are claimed as usual
    # what its open claims reserved until their runs end (docs/control.md, "Limits")
    reserved_usd: float = 0.0
    reserved_tokens: int = 0


def board_budget(
    blackboard_id: str, budget: Budget, spent: Spent, reserved: Spent | None = None
) -> BoardBudget:
    held = reserved or Spent()
    return BoardBudget(
        blackboard_id=blackboard_id,
        usd=budget.usd,
        tokens=budget.tokens,
        spent_usd=round(spent.usd, 6),
        spent_tokens=spent.tokens,
        reached=budget.reached(spent),
        reserved_usd=round(held.usd, 6),
        reserved_tokens=held.tokens,
    )


class Status(Document):
    """One board in `blackboard status`."""

    blackboard_id: str
    signals: dict[str, int]  # by status, statuses with none left out
    signals_total: int
    oldest_waiting_since: Time | None
    oldest_waiting_seconds: float | None
    entries: int
    open_conflicts: int
    live_workers: list[str]  # agents of the live workers serving it, and of its live claims
    workers: list[Worker]  # the live workers serving it
    usage: BoardUsage  # what runners' runs on the board cost, per agent
    open_gates: list[OpenGate] = []  # gates a person may decide now (`approve`, `reject`), oldest first
    budget: BoardBudget | None = None  # its budget, when it has one (`blackboard budget`)
    # claimable signals no live worker fits, by their targets (`RESEARCH` -> how many): each is waiting for
    # a worker that fits
    waiting_for_workers: dict[str, int] = {}
    # POSTED signals whose best agent's rate limit has no room now, by its key (`model-api` -> how many): each
    # is `waiting: rate limit K`
    waiting_for_a_rate_limit: dict[str, int] = {}
    # its flows with a step still open, then the last few that ended, newest first (BoardStatus.flows)
    flows: list["FlowSummary"] = []
    stalls: int = 0  # attempts whose run stalled and was stopped, in all (docs/control.md, "Stalls")
    stalled_signals: list[str] = []  # the signals they were of, the most recent first (at most 10)


def status(b: "BoardStatus") -> Status:
    return Status(
        blackboard_id=b.blackboard_id,
        signals=dict(b.signals),
        signals_total=sum(b.signals.values()),
        oldest_waiting_since=b.oldest_waiting,
        oldest_waiting_seconds=None if b.waiting_seconds is None else round(b.waiting_seconds, 1),
        entries=b.entries,
        open_conflicts=b.open_conflicts,
        live_workers=list(b.live_workers),
        workers=[worker(w, b.blackboard_id) for w in b.workers],
        usage=board_usage(b.usage),
        open_gates=[open_gate(g) for g in b.open_gates],
        budget=board_budget(b.blackboard_id, b.budget, spent_of(b.usage), b.reserved)
        if b.budget.is_set
        else None,
        waiting_for_workers=dict(b.waiting_for_workers),
        flows=[flow_summary(f) for f in b.flows],
        stalls=b.stalls,
        stalled_signals=list(b.stalled),
        waiting_for_a_rate_limit=dict(b.rate_limited),
    )
