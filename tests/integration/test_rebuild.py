"""Rebuilding the read model: equal to the live one, resumable, idempotent."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blackboard.application.commands import (
    ClaimSignal,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    GetSignalById,
    PostSignal,
)
from blackboard.application.ports import SignalFilter
from blackboard.application.projection import Projector
from blackboard.domain.errors import BlackboardError
from blackboard.domain.signals import SignalStatus
from blackboard.infrastructure.composition.settings import BlackboardSettings, store_settings
from blackboard.infrastructure.persistence.engine import make_engine
from blackboard.infrastructure.persistence.schema import ensure_schema
from tests.fakes import Board
from tests.integration.conftest import AGENTS as PROFILES
from tests.integration.conftest import SqlBoard
from tests.integration.story_mix import play, shares

KINDS = ("RESEARCH", "ANALYSIS", "REVIEW")
AGENTS = ("ps-researcher", "ps-analyst", "ps-reviewer")


def run(board: SqlBoard, commands) -> None:
    posted: list[tuple[str, str]] = []  # (signal id, board)
    for cmd in commands:
        try:
            if cmd[0] == "post":
                _, kind, ps, deps = cmd
                after = tuple(
                    dict.fromkeys(posted[i][0] for i in deps if i < len(posted) and posted[i][1] == ps)
                )
                posted.append(
                    (
                        board.service.post_signal(
                            PostSignal(
                                signal_type=kind,
                                ps_id=ps,
                                entry_id=f"e-{len(posted)}",
                                topic="t",
                                after=after,
                            )
                        ).signal_id,
                        ps,
                    )
                )
            elif cmd[0] == "wait":
                board.clock.advance(cmd[1])
                board.service.expire_signals(ExpireSignals())
            elif posted:
                signal_id = posted[cmd[1] % len(posted)][0]
                claimer = board.read_model.get(signal_id).claimed_by or "ps-researcher"
                if cmd[0] == "claim":
                    board.service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id=cmd[2]))
                elif cmd[0] == "complete":
                    board.service.complete_signal(
                        CompleteSignal(signal_id=signal_id, agent_id=claimer, artifact_path="a.md")
                    )
                else:
                    board.service.fail_signal(FailSignal(signal_id=signal_id, agent_id=claimer, error="no"))
        except BlackboardError:
            pass  # refusals are part of the story


def everything(board: SqlBoard):
    return board.read_model.find(SignalFilter())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(10, 60))
def test_a_rebuilt_read_model_equals_the_live_one(tmp_path_factory, seed, length):
    engine = make_engine(
        store_settings(BlackboardSettings(db=f"sqlite:///{tmp_path_factory.mktemp('rb') / 'b.db'}"))
    )
    ensure_schema(engine)
    board = SqlBoard(engine)
    play(
        board, seed, length
    )  # claims, completions, failures, expiries, retries, releases (tests/integration/story_mix.py)
    live = everything(board)

    Projector(board.store, board.read_model, page_size=7).rebuild()

    assert everything(board) == live
    assert board.read_model.position() == board.store.last_position()
    engine.dispose()


def test_the_stories_claim_complete_fail_expire_retry_and_release_in_real_proportions():
    """The property above is only as good as its stories: most must hold each way a signal moves on."""
    found = shares(lambda: Board(*PROFILES), range(200), 35)  # the mix of lengths the property draws, about
    for kind, at_least in {
        "claimed": 0.95,
        "completed": 0.85,
        "failed": 0.4,
        "expired": 0.4,
        "release": 0.4,
        "retry": 0.2,
    }.items():
        assert found[kind] >= at_least, (
            f"{kind} in {found[kind]:.0%} of the stories, want {at_least:.0%}: {found}"
        )


def story(board: SqlBoard) -> None:
    run(
        board,
        [("post", k, "ps-1", [i - 1] if i else []) for i, k in enumerate(KINDS * 4)]
        + [("claim", i, a) for i in range(12) for a in AGENTS]
        + [("complete", i) for i in range(0, 12, 2)]
        + [("fail", 5)],
    )


def test_an_interrupted_rebuild_resumes_from_its_checkpoint(sql_engine):
    board = SqlBoard(sql_engine)
    story(board)
    live = everything(board)

    class Stop(Exception):
        pass

    def stop_after_first_page(reached: int, last: int) -> None:
        raise Stop

    rebuilder = Projector(board.store, board.read_model, page_size=5)
    with pytest.raises(Stop):
        rebuilder.rebuild(progress=stop_after_first_page)
    assert board.read_model.position() == 5

    folded = rebuilder.rebuild(resume=True)

    assert folded == board.store.last_position() - 5
    assert everything(board) == live


def test_folding_events_again_changes_nothing(sql_engine):
    board = SqlBoard(sql_engine)
    story(board)
    live = everything(board)

    board.read_model.apply(board.store.read_all())

    assert everything(board) == live


def test_commands_during_an_unfinished_rebuild_decide_on_the_log_and_the_rebuild_folds_them(sql_engine):
    board = SqlBoard(sql_engine)
    story(board)
    waiting = board.service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-98", topic="w")
    )
    board.read_model.reset()  # a rebuild has begun and folded nothing yet: no rows to decide on

    claimed = board.service.claim_signal(
        ClaimSignal(signal_id=waiting.signal_id, agent_id="ps-researcher", blackboard_id="ps-1")
    )
    late = board.service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-99", topic="late")
    )

    assert claimed.status is SignalStatus.CLAIMED
    assert board.read_model.position() == 0  # the commands left the rows to the rebuild
    Projector(board.store, board.read_model).rebuild(resume=True)
    assert board.read_model.position() == board.store.last_position()
    assert board.read_model.get(waiting.signal_id).claimed_by == "ps-researcher"
    assert board.queries.get_signal(GetSignalById(signal_id=late.signal_id)).payload.topic == "late"
