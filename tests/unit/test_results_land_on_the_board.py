"""A completion's knowledge items land on the board as entries, whichever way it completes, and only once."""

from __future__ import annotations

from blackboard.application.commands import ClaimSignal, CompleteSignal, PostSignal, RecordOutcomes
from blackboard.application.knowledge.commands import ReadEntry
from blackboard.application.knowledge.queries import KnowledgeQueries
from blackboard.domain.signals import SignalResult
from blackboard.infrastructure.composition.container import landing_dispatcher
from blackboard.infrastructure.memory.entries import InMemoryEntryReadModel
from tests.fakes import Board, agent


def landing_board() -> tuple[Board, KnowledgeQueries]:
    board = Board(agent("ps-researcher", RESEARCH=0.9))
    board.dispatcher = landing_dispatcher(board.unit_of_work(), board.clock)  # as the container builds it
    board.rewire()
    return board, KnowledgeQueries(InMemoryEntryReadModel(board.store, board.read_model), board.read_model)


def claimed(board: Board) -> str:
    signal = board.service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t")
    )
    board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id="ps-researcher"))
    return signal.signal_id


def test_each_knowledge_item_of_a_completion_becomes_a_finding_keyed_by_the_signal():
    board, queries = landing_board()
    signal_id = claimed(board)

    board.service.complete_signal(
        CompleteSignal(signal_id=signal_id, agent_id="ps-researcher", knowledge_items=("one", "two"))
    )

    landed = [
        queries.read(ReadEntry(blackboard_id="ps-1", key=f"{signal_id}/knowledge/{n}")).current
        for n in (1, 2)
    ]
    assert [(v.value, v.author, v.signal_id, v.entry_type) for v in landed] == [
        ("one", "ps-researcher", signal_id, "finding"),
        ("two", "ps-researcher", signal_id, "finding"),
    ]


def test_a_workers_batch_of_outcomes_lands_its_knowledge_too():
    board, queries = landing_board()
    signal_id = claimed(board)

    board.service.record_outcomes(
        RecordOutcomes(
            blackboard_id="ps-1",
            agent_id="ps-researcher",
            outcomes=(
                CompleteSignal(
                    signal_id=signal_id, agent_id="ps-researcher", knowledge_items=("from a handler",)
                ),
            ),
        )
    )

    assert (
        queries.read(ReadEntry(blackboard_id="ps-1", key=f"{signal_id}/knowledge/1")).current.value
        == "from a handler"
    )


def test_a_completion_delivered_twice_lands_its_items_once():
    board, _ = landing_board()
    signal_id = claimed(board)
    board.service.complete_signal(
        CompleteSignal(signal_id=signal_id, agent_id="ps-researcher", knowledge_items=("x",))
    )
    completion = [r.event for r in board.store.read_all() if r.event.event_type == "AgentSignalCompleted"]

    board.dispatcher.publish(completion)

    assert board.event_types().count("EntryWritten") == 1


def test_a_completion_whose_acknowledgement_was_lost_in_an_outage_still_lands_its_items():
    """The database stores a worker's batch, then goes away before the commit is acknowledged: the
    recorder's retry is refused (already COMPLETED), and the items must land all the same."""
    import threading

    from blackboard.application.dispatcher import EventDispatcher
    from blackboard.application.ports import StoreUnavailable
    from blackboard.infrastructure.worker.recorder import Done, Recorder

    board, queries = landing_board()
    signal_id = claimed(board)
    claim = board.read_model.get(signal_id)
    service, landing = board.service, board.dispatcher
    board.dispatcher = EventDispatcher()  # the first try's process hears nothing of its commit
    silent = board.fresh_service()
    board.dispatcher = landing

    class LosesTheFirstAcknowledgement:
        calls = 0

        def record_outcomes(self, command: RecordOutcomes):
            self.calls += 1
            if self.calls == 1:
                silent.record_outcomes(command)  # stored ...
                raise StoreUnavailable("server closed the connection unexpectedly")  # ... unacknowledged
            return service.record_outcomes(command)

        def __getattr__(self, name: str):
            return getattr(service, name)

    flaky = LosesTheFirstAcknowledgement()
    batches: list[list[Done]] = []
    recorder = Recorder(flaky, "ps-researcher", threading.Event(), batches.append)  # type: ignore[arg-type]
    recorder.start()
    recorder.hand_over(
        Done(
            claimed=claim,
            command=CompleteSignal(
                signal_id=signal_id,
                agent_id="ps-researcher",
                knowledge_items=("kept",),
                token=claim.claim_token,
            ),
            took=0.1,
        )
    )
    recorder.close()

    assert flaky.calls == 2 and len(batches) == 1
    assert board.event_types().count("AgentSignalCompleted") == 1
    assert (
        queries.read(ReadEntry(blackboard_id="ps-1", key=f"{signal_id}/knowledge/1")).current.value == "kept"
    )


def test_a_completion_recorded_with_an_item_no_entry_could_hold_lands_none_of_its_items_and_says_why(caplog):
    """A completion recorded before completions were held to the entry value rule (or imported): its
    landing refuses it whole, in a warning and not a traceback, and lands no item (never half of them)."""
    board, _ = landing_board()
    signal_id = claimed(board)
    board.service.complete_signal(
        CompleteSignal(signal_id=signal_id, agent_id="ps-researcher", knowledge_items=("x",))
    )
    (completion,) = [r.event for r in board.store.read_all() if r.event.event_type == "AgentSignalCompleted"]
    old = completion.model_copy(
        update={"result": SignalResult(knowledge_items=("fine", "a\x00b")), "signal_id": claimed(board)}
    )

    board.dispatcher.publish([old])

    assert board.event_types().count("EntryWritten") == 1  # the first completion's item only
    (said,) = [r for r in caplog.records if old.signal_id in r.getMessage()]
    assert said.levelname == "WARNING" and said.exc_info is None
    assert said.getMessage() == (
        f"{old.signal_id}'s knowledge items do not land, none of them: knowledge_items[1]: the string at the "
        "top holds U+0000 (NUL), which cannot be stored"
    )
