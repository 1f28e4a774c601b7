"""What a busy worker reads while it runs signals, on SQLite and PostgreSQL: its stop watch reads every
signal running here in one statement (not `get_signal` per signal), and a completion told again after an
outage reads that completion, not the board's stream. Same answers as before: cancelled -> stop with the
reason; claimed by another token -> stop; a row missing meanwhile -> skipped; rows behind the log (a
rebuild) -> caught up first."""

from __future__ import annotations

from sqlalchemy import delete, event

from blackboard.application.commands import (
    CancelSignal,
    ClaimSignal,
    CompleteSignal,
    GetSignalById,
    PostSignal,
)
from blackboard.domain.events import AgentSignalCompleted
from blackboard.infrastructure.persistence import event_store
from blackboard.infrastructure.persistence.tables import SIGNALS
from blackboard.infrastructure.worker.cancels import StopWatch
from tests.integration.conftest import SqlBoard

MINE, OTHER = "ps-researcher/mine", "ps-researcher/other"


def claimed(board: SqlBoard, n: int, token: str, topic: str = "t") -> list[str]:
    ids = []
    for i in range(n):
        signal = board.service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id=f"e-{i}", topic=f"{topic} {i}")
        )
        board.service.claim_signal(
            ClaimSignal(signal_id=signal.signal_id, agent_id="ps-researcher", token=token)
        )
        ids.append(signal.signal_id)
    return ids


class Statements:
    """The statements sent on an engine while in the block."""

    def __init__(self, engine) -> None:
        self.engine, self.sent = engine, []

    def _seen(self, conn, cursor, statement, parameters, context, executemany) -> None:
        if statement != "BEGIN":  # SQLite's transactions are begun by a statement (engine.py)
            self.sent.append(statement)

    def __enter__(self) -> list[str]:
        event.listen(self.engine, "before_cursor_execute", self._seen)
        return self.sent

    def __exit__(self, *_) -> None:
        event.remove(self.engine, "before_cursor_execute", self._seen)


def watch_of(board: SqlBoard, running: dict[str, str | None]) -> StopWatch:
    """A watch of a worker whose claims now are `running` (the test may change it as a worker would)."""
    return StopWatch(board.queries, board.store, None, lambda: dict(running))  # type: ignore[arg-type]


def test_the_watch_reads_all_the_signals_running_here_in_one_statement(sql_engine):
    board = SqlBoard(sql_engine)
    mine = claimed(board, 12, MINE)
    (taken,) = claimed(board, 1, OTHER, topic="other")  # as if its claim lapsed and another worker took it
    board.service.cancel_signal(CancelSignal(signal_id=mine[0], reason="not needed any more"))
    board.service.cancel_signal(CancelSignal(signal_id=mine[1]))
    running = {**dict.fromkeys(mine, MINE), taken: MINE}  # each claim's own token
    watch, seen = watch_of(board, running), board.store.last_position()  # what woke it (a NOTIFY's position)

    with Statements(sql_engine) as sent:
        watch._check(running, seen)

    assert len(sent) == 1, sent  # was 3 per signal: the catch-up's two reads and the row
    assert (
        watch.reason(mine[0])
        == "stopped: the signal was cancelled (cancelled by ps-skill: not needed any more)"
    )
    assert (
        watch.reason(mine[1]) == "stopped: the signal was cancelled (cancelled by ps-skill: no reason given)"
    )
    assert watch.reason(taken) == "stopped: the claim is held by another worker now"
    assert [watch.reason(s) for s in mine[2:]] == [None] * 10  # still this worker's: they run on


def test_a_row_missing_is_skipped_and_rows_behind_the_log_are_caught_up_first(sql_engine):
    board = SqlBoard(sql_engine)
    mine = claimed(board, 3, MINE)
    board.service.cancel_signal(CancelSignal(signal_id=mine[0], reason="gone"))
    board.service.cancel_signal(CancelSignal(signal_id=mine[1], reason="gone too"))
    with sql_engine.begin() as conn:  # mine[0]'s row is not there for now (a rebuild has yet to fold it)
        conn.execute(delete(SIGNALS).where(SIGNALS.c.signal_id == mine[0]))
    watch = watch_of(board, dict.fromkeys(mine, MINE))

    watch._check(dict.fromkeys(mine, MINE), board.store.last_position())

    assert watch.reason(mine[0]) is None  # skipped, no error: its row comes back
    assert watch.reason(mine[1]) == "stopped: the signal was cancelled (cancelled by ps-skill: gone too)"

    board.read_model.reset()  # a rebuild starts: every row goes, the rows' position is 0
    watch._check(
        dict.fromkeys(mine, MINE), board.store.last_position()
    )  # the rows are behind what woke it: caught up first

    assert watch.reason(mine[0]) == "stopped: the signal was cancelled (cancelled by ps-skill: gone)"
    assert board.read_model.position() == board.store.last_position()


def test_a_completion_told_again_reads_that_event_not_the_board_s_stream(sql_engine, monkeypatch):
    board = SqlBoard(sql_engine)
    (done,) = claimed(board, 1, MINE)
    board.service.complete_signal(
        CompleteSignal(signal_id=done, agent_id="ps-researcher", knowledge_items=("kept",), token=MINE)
    )
    claimed(board, 150, MINE, topic="later")  # a busy board: 300 events after the completion
    heard: list[AgentSignalCompleted] = []
    board.dispatcher.register(AgentSignalCompleted, heard.append)
    decoded: list[str] = []
    decode = event_store.event_from_row
    monkeypatch.setattr(
        event_store, "event_from_row", lambda row: decoded.append(row.event_type) or decode(row)
    )

    with Statements(sql_engine) as sent:
        told = board.service.redeliver_completion("ps-1", done, "ps-researcher", MINE)

    assert told is True
    assert [(e.signal_id, e.result.knowledge_items) for e in heard] == [(done, ("kept",))]
    assert decoded == ["AgentSignalCompleted"]  # one event decoded: all 303 of the board's were before
    assert len([s for s in sent if "events" in s]) == 1, sent
    # not completed by this claim, or not completed at all: nothing is told
    other = claimed(board, 1, MINE, topic="open")[0]
    assert board.service.redeliver_completion("ps-1", other, "ps-researcher", MINE) is False
    assert board.service.redeliver_completion("ps-1", done, "ps-researcher", OTHER) is False
    assert len(heard) == 1
    assert board.queries.get_signal(GetSignalById(signal_id=done)).status.value == "COMPLETED"


def test_a_completion_is_found_by_its_own_signal_id_only(sql_engine):
    """Ids that differ only in case, or where one is a prefix of the other, or a later completion whose
    result names the id: each finds its own completion (SQLite's LIKE would take one for the other)."""
    board = SqlBoard(sql_engine)
    first, second, later = claimed(board, 3, MINE)
    for signal_id, items in ((first, (first,)), (second, (second,)), (later, (first,))):
        board.service.complete_signal(
            CompleteSignal(signal_id=signal_id, agent_id="ps-researcher", knowledge_items=items, token=MINE)
        )

    found = board.store.completion_of("ps-1", first)
    assert found is not None and found.signal_id == first and found.result.knowledge_items == (first,)
    assert board.store.completion_of("ps-1", first.upper()) is None
    assert board.store.completion_of("ps-1", first[:-1]) is None
    assert board.store.completion_of("ps-2", first) is None
    # a later completion whose result names the id is passed over, not taken for the signal's own
    assert board.store.completion_of("ps-1", later).signal_id == later


def test_a_signal_claimed_anew_here_while_the_watch_looks_runs_on(sql_engine):
    """Tokens are per claim: a run that failed with `retry_after: 0` is claimed again at once by this worker
    under a new token. Before: the watch, which had looked at the first claim, read the new token as
    another worker's and stopped the new run (its attempt spent). A stop found for one claim never stops
    another claim of the same signal."""
    board = SqlBoard(sql_engine)
    (retried,) = claimed(board, 1, "ps-researcher/second")  # the store holds the new claim already
    (taken,) = claimed(board, 1, OTHER, topic="taken")
    running = {retried: "ps-researcher/second", taken: MINE}
    watch = watch_of(board, running)

    watch._check({retried: "ps-researcher/first", taken: MINE}, board.store.last_position())  # looked before

    assert watch.reason(retried) is None  # claimed anew here: that run is its own
    assert watch.reason(taken) == "stopped: the claim is held by another worker now"
    running[taken] = "ps-researcher/third"  # the lapsed claim ended here; the signal claimed anew here
    assert watch.reason(taken) is None  # the reason was the earlier claim's
