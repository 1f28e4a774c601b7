"""Stalls on the SQL stores (SQLite and PostgreSQL): the signal's row keeps its stalled attempts, `status` and
/metrics count them per board where the rows are (as the port's default, which reads every signal, would), and a
rebuild from the log gives the same."""

from __future__ import annotations

from blackboard.application.commands import ClaimSignal, CompleteSignal, FailSignal, PostSignal
from blackboard.application.ports import SignalReadModel
from blackboard.application.ports.reading import STALLED_LISTED, BoardStalls
from blackboard.application.projection import Projector
from blackboard.domain.signals import SignalStatus

AGENT = "ps-researcher"
STALLED = "stalled: no output line, token or tool call for 300s (the agent file's stall_timeout is 300s)"


def post(service, board: str, entry: int, attempts: int | None = None) -> str:
    return service.post_signal(
        PostSignal(
            signal_type="RESEARCH",
            ps_id=board,
            entry_id=f"e-{entry}",
            topic=f"t{entry}",
            max_attempts=attempts,
        )
    ).signal_id


def stall(service, signal_id: str, seconds: float) -> None:
    service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id=AGENT))
    service.fail_signal(
        FailSignal(signal_id=signal_id, agent_id=AGENT, error=STALLED, stalled=seconds, retry_after=0)
    )


def test_stalls_are_counted_per_board_where_the_rows_are_and_a_rebuild_gives_the_same(sql_board):
    service, model = sql_board.service, sql_board.read_model
    twice = post(service, "ps-1", 1, attempts=3)
    stall(service, twice, 300.0)
    stall(service, twice, 301.5)
    service.claim_signal(ClaimSignal(signal_id=twice, agent_id=AGENT))
    service.complete_signal(CompleteSignal(signal_id=twice, agent_id=AGENT))
    once = post(service, "ps-1", 2)
    stall(service, once, 300.0)
    post(service, "ps-1", 3)  # never ran: no stall
    many = [post(service, "ps-2", i) for i in range(1, STALLED_LISTED + 3)]
    for signal_id in many:
        stall(service, signal_id, 12.0)

    found = model.stalls()
    assert found["ps-1"] == BoardStalls("ps-1", 3, (once, twice))
    assert (
        found["ps-2"].stalls == len(many) and found["ps-2"].signals == tuple(reversed(many))[:STALLED_LISTED]
    )
    assert found == SignalReadModel.stalls(model)  # the port's default, reading every signal, agrees
    assert model.stalls("ps-1") == {"ps-1": found["ps-1"]}
    ended = model.get(twice)
    assert ended.status is SignalStatus.COMPLETED and [(s.attempt, s.seconds_idle) for s in ended.stalls] == [
        (1, 300.0),
        (2, 301.5),
    ]
    assert [a.error for a in ended.attempts] == [STALLED, STALLED]  # each stall one failed attempt
    assert model.get(once).status is SignalStatus.FAILED

    Projector(sql_board.store, model).rebuild()

    assert model.stalls() == found and model.get(twice) == ended
