"""`blackboard show` prints a signal from its row without the domain's models (persistence/signal_rows.py):
for signals in every state, stored in a real SQLite read model, its document is the one the Python API's
models give (`documents.signal` of `codec.signal_from_row`), its text is `render.signal_text`'s, and its
earliest deadline is the domain's `deadline` without a live worker."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, insert, select

from blackboard.domain.blackboard import deadline
from blackboard.domain.signals import (
    AgentSignal,
    FailedAttempt,
    SignalPayload,
    SignalResult,
    SignalStatus,
    SignalType,
    SignalUsage,
)
from blackboard.infrastructure import documents
from blackboard.infrastructure.cli import render
from blackboard.infrastructure.cli.signal_text import signal_text
from blackboard.infrastructure.persistence import signal_rows
from blackboard.infrastructure.persistence.codec import signal_from_row, signal_row
from blackboard.infrastructure.persistence.tables import SIGNALS, metadata
from blackboard.infrastructure.waiting import waiting_for_a_worker

T0 = datetime(2026, 11, 27, 8, 30, 15, 123456, tzinfo=UTC)
POST, CLAIM = timedelta(seconds=30), timedelta(seconds=300)


def _signal(n: int, **changes) -> AgentSignal:
    base = AgentSignal(
        signal_id=f"sig-{n:08x}",
        blackboard_id="ps-42",
        signal_type=SignalType.RESEARCH,
        payload=SignalPayload(ps_id="ps-42", entry_id="e-7", topic="event stores"),
        target_capabilities=("RESEARCH",),
        posted_by="ps-skill",
        created_at=T0,
        claimable_since=T0,
    )
    return dataclasses.replace(base, **changes)


USAGE = SignalUsage(
    runner="anthropic",
    model="claude-x",
    input_tokens=12_345,
    output_tokens=678,
    cost_usd=0.0123,
    turns=3,
    duration_ms=4567,
    session_id="s-1",
    transcript_path="/tmp/artifacts/t.jsonl",
)
SIGNALS_IN_EVERY_STATE = [
    _signal(1),
    _signal(
        2,
        signal_type=SignalType.SYNTHESIS,
        payload=SignalPayload(
            ps_id="ps-42",
            entry_id="e-12",
            topic="ünïcode \x1b[31m topic",
            prompt="do it\nwell",
            context={"a": [1, 2.5, None, True], "b": {"c": "d"}, "big": 2**62, "f": 1e-7},
        ),
        target_capabilities=("review", "auto"),
        after=("sig-00000001", "sig-00000003"),
        waiting_for=frozenset({"sig-00000003", "sig-00000001"}),
        claimable_since=None,
        dedupe_key="ps-42/e-12",
        retry_of="sig-0000000a",
        read_keys=("notes/*",),
        write_keys=(),
        budget_usd=0.5,
    ),
    _signal(3, status=SignalStatus.CLAIMED, claimed_by="ps-researcher", claimed_at=T0, claim_token="tok"),
    _signal(
        4,
        status=SignalStatus.CLAIMED,
        claimed_by="ps-researcher",
        claimed_at=T0,
        renewed_at=T0 + timedelta(seconds=90),
        version=2,
    ),
    _signal(
        5,
        status=SignalStatus.COMPLETED,
        claimed_by="ps-researcher",
        claimed_at=T0,
        completed_at=T0 + timedelta(minutes=2),
        result=SignalResult(artifact_path="docs/r.md", knowledge_items=("one", "two, three")),
        usage=USAGE,
        budget_usd=2.0,
        write_keys=("findings",),
        version=3,
    ),
    _signal(
        6,
        status=SignalStatus.COMPLETED,
        claimed_by="ps-researcher",
        claimed_at=T0,
        completed_at=T0 + timedelta(minutes=2),
        result=SignalResult(knowledge_items=("only knowledge",)),
        usage=SignalUsage(runner="claude-code"),
        version=3,
    ),
    _signal(
        7,
        status=SignalStatus.FAILED,
        claimed_by="ps-researcher",
        claimed_at=T0,
        completed_at=T0 + timedelta(minutes=1),
        result=SignalResult(error="no sources found"),
        usage=SignalUsage(runner="openai", input_tokens=5, cost_usd=None),
        version=3,
    ),
    _signal(
        8,
        status=SignalStatus.EXPIRED,
        completed_at=T0 + timedelta(seconds=30),
        result=SignalResult(error="post timeout"),
        version=2,
    ),
    _signal(
        9,
        status=SignalStatus.UNCLAIMED,
        completed_at=T0,
        result=SignalResult(error="no registered agent scores above its threshold for RESEARCH"),
        version=2,
    ),
    _signal(  # retried: POSTED again after two failed attempts, the second one a lapsed claim
        10,
        attempt=3,
        max_attempts=4,
        not_before=T0 + timedelta(seconds=95),
        claimable_since=T0 + timedelta(seconds=95),
        attempts=(
            FailedAttempt(
                attempt=1,
                claimed_by="ps-researcher",
                error="exit 1: offline",
                ended_at=T0 + timedelta(seconds=10),
                retry_at=T0 + timedelta(seconds=11, microseconds=250_000),
                max_attempts=4,
            ),
            FailedAttempt(
                attempt=2,
                claimed_by="ps-analyst",
                error="ps-analyst did not finish within the claim timeout of 300s",
                ended_at=T0 + timedelta(seconds=93),
                retry_at=T0 + timedelta(seconds=95),
                max_attempts=4,
                expired=True,
            ),
        ),
        usage=USAGE,
        version=5,
    ),
    _signal(  # the limit its claimer's policy set, shown once an attempt failed
        11,
        status=SignalStatus.FAILED,
        attempt=2,
        completed_at=T0 + timedelta(minutes=3),
        result=SignalResult(error="exit 1: offline again"),
        attempts=(
            FailedAttempt(
                attempt=1,
                claimed_by="ps-researcher",
                error="exit 1: offline",
                ended_at=T0 + timedelta(seconds=10),
                retry_at=T0 + timedelta(seconds=12),
                max_attempts=2,
            ),
        ),
        version=5,
    ),
    _signal(12, gate=True),  # a gate waiting for a person: no deadline
    _signal(13, gate=True, timeout_s=3600.0),  # a gate with a timeout of its own
    _signal(16, timeout_s=90.0),  # work with a post timeout of its own (`post --timeout 90s`)
    _signal(
        17,
        timeout_s=90.0,
        status=SignalStatus.CLAIMED,
        claimed_by="a",
        claimed_at=T0,
        version=2,
    ),  # claimed: the claim timeout counts, not its own post timeout
    _signal(
        14,
        gate=True,
        status=SignalStatus.COMPLETED,
        completed_at=T0,
        result=SignalResult(),
        decided_by="alice",
        decision_note="fine",
        version=2,
    ),
    _signal(
        15,
        gate=True,
        status=SignalStatus.FAILED,
        completed_at=T0,
        result=SignalResult(error="rejected by bob: no"),
        decided_by="bob",
        decision_note="no",
        version=2,
    ),
]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    made = create_engine(f"sqlite:///{tmp_path_factory.mktemp('rows') / 'b.db'}")
    metadata.create_all(made)
    yield made
    made.dispose()


def _stored(engine, signal: AgentSignal):
    with engine.begin() as conn:
        conn.execute(SIGNALS.delete().where(SIGNALS.c.signal_id == signal.signal_id))
        conn.execute(insert(SIGNALS), [signal_row(signal)])
        return conn.execute(select(SIGNALS).where(SIGNALS.c.signal_id == signal.signal_id)).one()


@pytest.mark.parametrize("signal", SIGNALS_IN_EVERY_STATE, ids=lambda s: f"{s.signal_id}-{s.status}")
def test_the_row_prints_the_document_and_the_text_that_the_models_give(engine, signal):
    row = _stored(engine, signal)
    model = signal_from_row(row)
    light = signal_rows.view(row)

    assert signal_rows.document(light) == documents.jsonable(documents.signal(model))
    assert list(signal_rows.document(light)) == list(documents.jsonable(documents.signal(model)))
    assert signal_text(light) == render.signal_text(model)


@pytest.mark.parametrize("post", [POST, None], ids=["post-timeout-30s", "post-timeout-off"])
@pytest.mark.parametrize("signal", SIGNALS_IN_EVERY_STATE, ids=lambda s: f"{s.signal_id}-{s.status}")
def test_the_earliest_deadline_of_a_row_is_the_domains_without_a_live_worker(engine, signal, post):
    row = _stored(engine, signal)

    assert signal_rows.earliest_deadline(row, post, CLAIM) == deadline(signal_from_row(row), post, CLAIM)


@pytest.mark.parametrize(
    "signal", [s for s in SIGNALS_IN_EVERY_STATE if s.is_claimable], ids=lambda s: s.signal_id
)
def test_a_claimable_row_no_worker_runs_for_prints_that_it_waits_as_the_models_do(engine, signal):
    row = _stored(engine, signal)
    model = signal_from_row(row)
    waiting = waiting_for_a_worker(signal.target_capabilities)

    assert signal_rows.claimable(row)
    printed = documents.jsonable(documents.signal(model, None, {signal.signal_id}))
    assert list(signal_rows.document(signal_rows.view(row), waiting).items()) == list(printed.items())
    assert signal_text(signal_rows.view(row), None, waiting) == render.signal_text(model, None, waiting)


texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)


@settings(max_examples=60, deadline=None)
@given(
    topic=texts.filter(bool),
    prompt=texts,
    knowledge=st.lists(texts, max_size=3),
    artifact=st.none() | texts,
    error=st.none() | texts,
    cost=st.none() | st.floats(min_value=0, max_value=1e6, allow_nan=False),
    tokens=st.integers(min_value=0, max_value=2**40),
    budget=st.none() | st.floats(min_value=0, max_value=1e6, allow_nan=False),
    context=st.dictionaries(texts, st.none() | st.booleans() | st.integers() | texts, max_size=3),
)
def test_any_completed_signal_prints_alike_from_its_row_and_from_the_models(
    engine, topic, prompt, knowledge, artifact, error, cost, tokens, budget, context
):
    signal = _signal(
        100,
        payload=SignalPayload(
            ps_id="ps-1", entry_id="e-1", topic=topic[:200], prompt=prompt, context=context
        ),
        status=SignalStatus.COMPLETED,
        claimed_by="a",
        claimed_at=T0,
        completed_at=T0,
        result=SignalResult(artifact_path=artifact, knowledge_items=tuple(knowledge), error=error),
        usage=SignalUsage(runner="anthropic", cost_usd=cost, input_tokens=tokens),
        budget_usd=budget,
    )
    row = _stored(engine, signal)
    model, light = signal_from_row(row), signal_rows.view(row)

    assert signal_rows.document(light) == documents.jsonable(documents.signal(model))
    assert signal_text(light) == render.signal_text(model)


def test_show_takes_the_row_only_for_an_id_the_full_path_would_accept():
    from blackboard.domain.signals import SIGNAL_ID_PATTERN
    from blackboard.infrastructure.cli.show import SIGNAL_ID

    assert SIGNAL_ID.pattern == SIGNAL_ID_PATTERN.pattern
