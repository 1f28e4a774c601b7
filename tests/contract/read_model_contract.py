"""The SignalReadModel port's contract: folding events gives what the aggregate holds."""

from __future__ import annotations

import abc
from datetime import UTC, datetime, timedelta

import pytest

from blackboard.application.ports import (
    CLAIM_WAIT,
    RUN_TIME,
    Durations,
    Recorded,
    SignalFilter,
    SignalReadModel,
)
from blackboard.application.ports.reading import Timed
from blackboard.application.usage import UsageTotal
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.signals import SignalResult, SignalStatus, SignalType, SignalUsage
from tests.contract.stories import RESEARCHER, every_event_type, payload, post, posts
from tests.fakes import T0


def recorded(events, first_position: int = 1) -> list[Recorded]:
    at = datetime(2026, 1, 4, tzinfo=UTC)
    return [Recorded(first_position + i, e, at) for i, e in enumerate(events)]


def board_history(
    board_id: str, first: int, claimed: int = 0, completed: int = 0, failed: int = 0, posted: int = 0
):
    """A board's events: signals numbered from `first`, so many claimed, completed, failed or left POSTED."""
    board, n = BlackboardAggregate(board_id), first
    for count, end in ((claimed, None), (completed, "complete"), (failed, "fail"), (posted, "post")):
        for _ in range(count):
            signal_id = post(board, n).signal_id
            n += 1
            if end == "post":
                continue
            board.claim_signal(signal_id, RESEARCHER, T0)
            if end == "complete":
                board.complete_signal(signal_id, "ps-researcher", SignalResult(), T0)
            elif end == "fail":
                board.fail_signal(signal_id, "ps-researcher", "no sources", T0)
    return board.collect_events()


class ReadModelContract(abc.ABC):
    @abc.abstractmethod
    @pytest.fixture
    def read_model(self) -> SignalReadModel: ...

    def test_folding_a_history_gives_the_signals_the_aggregate_holds(self, read_model):
        events = every_event_type()

        read_model.apply(recorded(events))

        expected = BlackboardAggregate.replay("bb-1", events).signals
        assert {sid: read_model.get(sid) for sid in expected} == expected
        assert read_model.position() == len(events)

    def test_an_unknown_signal_is_none(self, read_model):
        assert read_model.get("sig-0000dead") is None

    def test_records_at_or_below_the_position_are_ignored(self, read_model):
        history = recorded(every_event_type())
        read_model.apply(history[:6])

        read_model.apply(history)  # the first six again, then the rest

        expected = BlackboardAggregate.replay("bb-1", [r.event for r in history]).signals
        assert {sid: read_model.get(sid) for sid in expected} == expected

    def test_count_by_status_counts_one_boards_signals(self, read_model):
        read_model.apply(recorded(board_history("bb-1", 1, claimed=1, completed=2, posted=1)))
        read_model.apply(recorded(board_history("bb-2", 9, posted=3), first_position=100))

        assert read_model.count_by_status("bb-1") == {"CLAIMED": 1, "COMPLETED": 2, "POSTED": 1}
        assert read_model.count_by_status("bb-3") == {}

    def test_board_statuses_count_each_board_its_oldest_waiting_and_its_live_claimers(self, read_model):
        read_model.apply(recorded(board_history("bb-1", 1, claimed=2, completed=2, posted=1)))
        read_model.apply(recorded(board_history("bb-2", 9, posted=3, failed=1), first_position=100))
        posted = {
            s.blackboard_id: s.created_at
            for s in sorted(
                read_model.find(SignalFilter(status=SignalStatus.POSTED)),
                key=lambda s: s.created_at,
                reverse=True,
            )
        }

        boards = read_model.board_statuses(live_since=T0)
        assert [(b.blackboard_id, b.by_status, b.oldest_waiting, b.workers) for b in boards] == [
            ("bb-1", {"CLAIMED": 2, "COMPLETED": 2, "POSTED": 1}, posted["bb-1"], ("ps-researcher",)),
            ("bb-2", {"FAILED": 1, "POSTED": 3}, posted["bb-2"], ()),
        ]
        assert (
            read_model.board_statuses(live_since=T0 + timedelta(seconds=1))[0].workers == ()
        )  # claims older than that
        assert [b.blackboard_id for b in read_model.board_statuses(T0, "bb-2")] == ["bb-2"]
        assert read_model.board_statuses(T0, "bb-3") == []

    def test_find_filters_by_status_type_capability_and_board(self, read_model):
        events = every_event_type()
        read_model.apply(recorded(events))
        read_model.apply(recorded(posts("bb-2", 1, first=9), first_position=len(events) + 1))

        def ids(**criteria):
            return [s.signal_id for s in read_model.find(SignalFilter(**criteria))]

        assert ids(status=SignalStatus.COMPLETED) == ["sig-00000001"]
        assert ids(status=SignalStatus.EXPIRED) == ["sig-00000005"]
        assert ids(signal_type="REVIEW") == ["sig-00000002", "sig-00000005"]
        assert ids(capabilities=("ANALYSIS", "REVIEW")) == ["sig-00000002", "sig-00000003", "sig-00000005"]
        assert ids(blackboard_id="bb-2") == ["sig-00000009"]
        assert ids(status=SignalStatus.POSTED, claimable_only=True) == ["sig-00000009", "sig-00000002"]
        assert ids(limit=2) == ["sig-00000001", "sig-00000009"]  # oldest first, then by id

    def test_find_and_board_statuses_keep_the_signals_carrying_every_label_named(self, read_model):
        board = BlackboardAggregate("bb-l")
        for n, labels in enumerate((("bug", "team:core"), ("bug",), ("a.b_c",), ("axb_c",), ()), start=1):
            board.post_signal(
                signal_id=f"sig-{n:08x}",
                signal_type=SignalType.RESEARCH,
                # a context naming a label is no label
                payload=payload(n, labels=["bug"]).model_copy(update={"labels": labels}),
                posted_by="ps-skill",
                at=T0 + timedelta(minutes=n),
            )
        read_model.apply(recorded(board.collect_events()))

        def ids(*labels: str) -> list[str]:
            return [s.signal_id for s in read_model.find(SignalFilter(labels=labels))]

        assert ids() == [f"sig-{n:08x}" for n in range(1, 6)]
        assert ids("bug") == ["sig-00000001", "sig-00000002"]
        assert ids("bug", "team:core") == ["sig-00000001"]
        assert ids("a.b_c") == ["sig-00000003"]  # `_` and `.` match themselves alone
        assert ids("team") == [] and ids("core") == [] and ids("bug", "nothing") == []
        assert read_model.get("sig-00000001").payload.labels == ("bug", "team:core")
        (counted,) = read_model.board_statuses(T0, "bb-l", ("bug",))
        assert counted.by_status == {"POSTED": 2}
        assert read_model.board_statuses(T0, None, ("nothing",)) == []

    def test_candidates_are_the_claimable_signals_for_the_capabilities_oldest_first(self, read_model):
        events = every_event_type()
        read_model.apply(recorded(events))
        read_model.apply(recorded(posts("bb-2", 3, first=9), first_position=len(events) + 1))

        def open_ids(capabilities, limit=10, board=None):
            return [
                s.signal_id
                for s in read_model.find(
                    SignalFilter(
                        status=SignalStatus.POSTED,
                        capabilities=capabilities,
                        claimable_only=True,
                        limit=limit,
                        blackboard_id=board,
                    )
                )
            ]

        for capabilities, limit, board in (
            (("RESEARCH",), 10, None),
            (("ANALYSIS", "REVIEW"), 10, None),
            (("RESEARCH", "REVIEW"), 2, None),
            (("RESEARCH",), 10, "bb-1"),
        ):
            found = read_model.candidates(capabilities, limit, board)
            assert [c.signal_id for c in found] == open_ids(capabilities, limit, board)
            for candidate in found:  # each as the full signal has it
                full = read_model.get(candidate.signal_id)
                assert (candidate.blackboard_id, candidate.target_capabilities, candidate.created_at) == (
                    full.blackboard_id,
                    full.target_capabilities,
                    full.created_at,
                )
        assert [c.signal_id for c in read_model.candidates(("RESEARCH", "REVIEW"), 2)] == [
            "sig-00000009",
            "sig-0000000a",
        ]
        assert read_model.candidates(("NOBODY",), 10) == []

    def test_candidates_come_most_urgent_first_then_oldest_and_a_limit_keeps_the_most_urgent(
        self, read_model
    ):
        board = BlackboardAggregate("bb-1")
        for n, priority in ((1, 2), (2, 4), (3, 2), (4, 0), (5, 1), (6, 0)):
            board.post_signal(
                signal_id=f"sig-{n:08x}",
                signal_type=SignalType.RESEARCH,
                payload=payload(n),
                posted_by="ps-skill",
                at=T0 + timedelta(minutes=n),
                priority=priority,
            )
        read_model.apply(recorded(board.collect_events()))

        found = read_model.candidates(("RESEARCH",), 4)

        assert [(c.signal_id, c.priority) for c in found] == [
            ("sig-00000004", 0),
            ("sig-00000006", 0),
            ("sig-00000005", 1),
            ("sig-00000001", 2),
        ]
        assert read_model.get("sig-00000002").priority == 4
        listed = [s.signal_id for s in read_model.find(SignalFilter(blackboard_id="bb-1"))]
        assert listed == [f"sig-{n:08x}" for n in range(1, 7)]  # a listing stays oldest first

    def test_usage_totals_add_up_each_board_s_runs_per_agent_and_keep_the_run_on_its_signal(self, read_model):
        board = BlackboardAggregate("bb-1")
        runs = {
            "sig-00000001": SignalUsage(
                runner="anthropic",
                model="m",
                input_tokens=100,
                output_tokens=10,
                cost_usd=0.5,
                turns=2,
                duration_ms=900,
            ),
            "sig-00000002": SignalUsage(
                runner="openai", input_tokens=40, output_tokens=4, turns=1, duration_ms=100
            ),  # no price
        }
        for n, signal_id in enumerate(runs, start=1):
            post(board, n)
            board.claim_signal(signal_id, RESEARCHER, T0)
        board.complete_signal("sig-00000001", "ps-researcher", SignalResult(), T0, usage=runs["sig-00000001"])
        board.fail_signal("sig-00000002", "ps-researcher", "budget spent", T0, usage=runs["sig-00000002"])
        post(board, 3)  # ran by no runner: no usage
        read_model.apply(recorded(board.collect_events()))
        read_model.apply(recorded(board_history("bb-2", 10, completed=1), first_position=100))

        assert read_model.usage_totals() == {
            "bb-1": {"ps-researcher": UsageTotal(2, 140, 14, 0.5, 1, 3, 1000)}
        }
        assert read_model.usage_totals("bb-2") == {}
        assert read_model.get("sig-00000001").usage == runs["sig-00000001"]
        assert read_model.get("sig-00000002").usage == runs["sig-00000002"]
        read_model.reset()
        assert read_model.usage_totals() == {}

    def test_durations_count_each_boards_claim_waits_and_run_times_per_bound(self, read_model):
        board = BlackboardAggregate("bb-1")
        done, failed, running = (post(board, n).signal_id for n in (1, 2, 3))
        post(board, 4)  # never claimed: in neither histogram
        board.claim_signal(done, RESEARCHER, T0 + timedelta(seconds=2))
        board.complete_signal(done, "ps-researcher", SignalResult(), T0 + timedelta(seconds=72))
        board.claim_signal(failed, RESEARCHER, T0 + timedelta(seconds=40))
        board.fail_signal(failed, "ps-researcher", "no", T0 + timedelta(seconds=45))  # 5 s: within 5
        board.claim_signal(running, RESEARCHER, T0 + timedelta(seconds=90))  # no run time until it ends
        other = BlackboardAggregate("bb-2")
        other.claim_signal(quick := post(other, 9).signal_id, RESEARCHER, T0 + timedelta(seconds=0.25))
        # clocks that disagree: completed "before" its claim, claimed "before" its post; each span counts 0
        other.complete_signal(quick, "ps-researcher", SignalResult(), T0 + timedelta(seconds=0.1))
        other.claim_signal(post(other, 8).signal_id, RESEARCHER, T0 - timedelta(seconds=3))
        read_model.apply(recorded(board.collect_events()))
        read_model.apply(recorded(other.collect_events(), first_position=100))
        bounds = (1.0, 5.0, 60.0)

        assert read_model.durations(CLAIM_WAIT, bounds) == [
            Durations("bb-1", None, (0, 1, 2), 3, pytest.approx(132.0)),
            Durations("bb-2", None, (2, 2, 2), 2, pytest.approx(0.25)),
        ]
        assert read_model.durations(RUN_TIME, bounds) == [
            Durations("bb-1", "COMPLETED", (0, 0, 0), 1, pytest.approx(70.0)),
            Durations("bb-1", "FAILED", (0, 1, 1), 1, pytest.approx(5.0)),
            Durations("bb-2", "COMPLETED", (1, 1, 1), 1, pytest.approx(0.0)),
        ]

    def test_timeline_gives_the_times_and_usage_of_a_board_s_signals_posted_claimed_or_ended_since(
        self, read_model
    ):
        board = BlackboardAggregate("bb-1")
        old, done, unpriced, running = (post(board, n, minute=n).signal_id for n in (1, 2, 3, 4))
        post(board, 5, minute=30)  # posted since: in, never claimed
        usage = SignalUsage(runner="anthropic", input_tokens=100, output_tokens=10, cost_usd=0.5, turns=2)
        board.claim_signal(old, RESEARCHER, T0 + timedelta(minutes=5))
        board.complete_signal(old, "ps-researcher", SignalResult(), T0 + timedelta(minutes=6))  # before: out
        board.claim_signal(done, RESEARCHER, T0 + timedelta(minutes=5))
        board.complete_signal(done, "ps-researcher", SignalResult(), T0 + timedelta(minutes=21), usage=usage)
        board.claim_signal(unpriced, RESEARCHER, T0 + timedelta(minutes=22))
        board.fail_signal(
            unpriced, "ps-researcher", "no", T0 + timedelta(minutes=23), usage=SignalUsage(runner="openai")
        )
        board.claim_signal(running, RESEARCHER, T0 + timedelta(minutes=24))
        read_model.apply(recorded(board.collect_events()))
        read_model.apply(recorded(board_history("bb-2", 10, completed=1), first_position=100))

        found = read_model.timeline("bb-1", T0 + timedelta(minutes=20))

        at = [T0 + timedelta(minutes=m) for m in range(31)]  # at[m]: m minutes after T0
        researcher = "ps-researcher"
        assert sorted(found, key=lambda t: t.created_at) == [
            Timed(
                SignalStatus.COMPLETED, at[2], at[5], at[21], researcher, UsageTotal(1, 100, 10, 0.5, 0, 2, 0)
            ),
            Timed(SignalStatus.FAILED, at[3], at[22], at[23], researcher, UsageTotal(1, 0, 0, 0.0, 1, 0, 0)),
            Timed(SignalStatus.CLAIMED, at[4], at[24], None),
            Timed(SignalStatus.POSTED, at[30], None, None),
        ]
        assert read_model.timeline("bb-3", T0) == []

    def test_reset_forgets_everything(self, read_model):
        read_model.apply(recorded(every_event_type()))

        read_model.reset()

        assert read_model.position() == 0
        assert read_model.get("sig-00000001") is None
        assert read_model.find(SignalFilter()) == []

    def test_live_boards_hold_a_posted_or_claimed_signal_and_boards_whose_signals_all_ended_are_not(
        self, read_model
    ):
        histories = [
            every_event_type("bb-1"),  # one signal still POSTED among ended ones
            board_history("bb-2", first=10, posted=2),
            board_history("bb-3", first=20, completed=2, failed=1),  # every signal final
            board_history("bb-4", first=30, claimed=1, completed=1),
        ]
        position = 1
        for events in histories:
            read_model.apply(recorded(events, first_position=position))
            position += len(events)

        live = read_model.live_boards()

        assert sorted(live) == ["bb-1", "bb-2", "bb-4"] and len(live) == 3  # each board once
        assert read_model.live_boards("bb-4") == ["bb-4"]
        assert read_model.live_boards("bb-2") == ["bb-2"]
        assert read_model.live_boards("bb-3") == []
        assert read_model.live_boards("bb-nowhere") == []
