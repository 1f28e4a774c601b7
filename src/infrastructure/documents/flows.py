"""A flow's documents: its summary and its steps."""

from collections.abc import Collection
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import (
    Field,
)

from blackboard.domain.signals import (
    SignalIdText,
    SignalStatus,
)
from blackboard.infrastructure.documents.base import Document, Time
from blackboard.infrastructure.documents.signals import Signal, signal

if TYPE_CHECKING:
    from blackboard.domain.flows import FlowCounts, FlowProgress

# ---------------------------------------------------------------- flows

FlowState = Literal["running", "completed", "failed", "cancelled"]


class FlowSummary(Document):
    """A flow's steps counted by the status each stands at (a step retried: its latest signal's)."""

    flow_id: str
    blackboard_id: str
    state: FlowState  # running while a step is open; else completed, cancelled or failed
    by_status: dict[str, int]  # its steps by status, statuses with none left out
    steps_total: int
    started_at: Time | None  # when it was run


class Step(Document):
    """One step of a flow as it stands: its latest signal (a retry's, once it was retried)."""

    step_id: str
    status: SignalStatus
    signal_id: SignalIdText
    tries: Annotated[int, Field(ge=1)]  # its signals: 1, and one more for each retry
    waiting_for: list[str]  # the steps it still waits for
    signal: Signal


class Flow(FlowSummary):
    """A flow step by step (`blackboard flow status`, `flow run`), in the steps' order."""

    steps: list[Step]


def flow_summary(f: "FlowCounts") -> FlowSummary:
    return FlowSummary(
        flow_id=f.flow_id,
        blackboard_id=f.blackboard_id,
        state=f.state,  # type: ignore[arg-type] - domain flow_state says one of the four
        by_status=dict(f.counts),
        steps_total=f.steps,
        started_at=f.started_at,
    )


def flow(f: "FlowProgress", waiting: Collection[str] = ()) -> Flow:
    """A flow step by step; a step in `waiting` (BlackboardQueries.waiting_for_workers) says so in its signal."""
    counts = f.counts
    return Flow(
        flow_id=f.flow_id,
        blackboard_id=f.blackboard_id,
        state=f.state,  # type: ignore[arg-type]
        by_status=counts,
        steps_total=len(f.steps),
        started_at=f.started_at,
        steps=[
            Step(
                step_id=s.step_id,
                status=s.status,
                signal_id=s.signal.signal_id,
                tries=s.tries,
                waiting_for=list(s.waiting_for),
                signal=signal(s.signal, None, waiting),
            )
            for s in f.steps
        ],
    )
