"""What a flow is made of, as every interface hands it over (a flow file, the Python API, MCP), and the
commands and the query on flows: run one, cancel it, retry its failed steps, read how it stands."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from blackboard.application.commands import Command, Message, Reason
from blackboard.application.fields import BoardName, Name, Seconds
from blackboard.domain.flows import (
    FLOW_ID_MAX,
    MAX_STEPS,
    NAME_PATTERN,
    STEP_ID_MAX,
    FlowInvalid,
    step_problems,
)
from blackboard.domain.signals import SignalType, Topic

FlowId = Annotated[str, Field(min_length=1, max_length=FLOW_ID_MAX, pattern=NAME_PATTERN)]
StepId = Annotated[str, Field(min_length=1, max_length=STEP_ID_MAX, pattern=NAME_PATTERN)]
# a flow's name: the start of the ids of its runs (`<name>-<8 hex digits>`), so shorter than an id
FlowName = Annotated[str, Field(min_length=1, max_length=FLOW_ID_MAX - 9, pattern=NAME_PATTERN)]
Text = Annotated[str, Field(max_length=16_384)]


def _listed(value: Any) -> Any:
    """`after: research` is `after: [research]`: one step needs no list."""
    return [value] if isinstance(value, str) else value


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else value


class StepSpec(Message):
    """One step: what its signal targets (a capability, or an agent: that agent's best capability), its topic
    and prompt, the steps it comes after, and whether a person decides it (a gate)."""

    id: StepId
    capability: Name | None = None
    agent: Name | None = None
    topic: Topic
    prompt: Text = ""
    after: Annotated[tuple[StepId, ...], BeforeValidator(_listed)] = ()
    gate: bool = False
    # its signal's type; without one, its capability's when that is one of the six, else domain DEFAULT_TYPE
    type: Annotated[SignalType | None, BeforeValidator(_upper)] = None

    @model_validator(mode="after")
    def _one_target(self) -> StepSpec:
        if self.capability is not None and self.agent is not None:
            raise PydanticCustomError(
                "one_target", "give capability or agent, not both (agent: that agent's best capability)"
            )
        if self.capability is None and self.agent is None and not self.gate:
            raise PydanticCustomError(
                "one_target",
                "give capability or agent: what the step's signal targets (a gate may give neither)",
            )
        return self


class FlowSpec(Message):
    """A flow: its name, what it is for (`description`, and the file's body), and its steps in order."""

    name: FlowName
    description: Text = ""
    body: Text = ""  # a flow file's Markdown body
    steps: tuple[StepSpec, ...] = Field(min_length=1, max_length=MAX_STEPS)

    @model_validator(mode="after")
    def _steps_hold_together(self) -> FlowSpec:
        problems = step_problems([s.id for s in self.steps], [s.after for s in self.steps])
        if problems:  # raised as it is: no model turns InvalidInput into a ValidationError
            raise FlowInvalid(problems)
        return self


class RunFlow(Command):
    """Post every step of a flow on a board, in one transaction: all of them or none."""

    blackboard_id: BoardName
    flow: FlowSpec
    flow_id: FlowId | None = None  # None: `<the flow's name>-<8 hex digits>`
    posted_by: Name = "ps-skill"


class CancelFlow(Command):
    """Cancel every open step of a flow (with what waits on them: the steps after them)."""

    blackboard_id: BoardName
    flow_id: FlowId
    cancelled_by: Name = "ps-skill"
    reason: Reason = "no reason given"


class RetryFlow(Command):
    """Post again each step of a flow that ended FAILED or EXPIRED, in step order, each after the retries of
    the steps it comes after."""

    blackboard_id: BoardName
    flow_id: FlowId
    posted_by: Name = "ps-skill"


class GetFlow(Message):
    """A flow's steps as they stand."""

    blackboard_id: BoardName
    flow_id: FlowId


class WaitForFlow(GetFlow):
    """The flow once no step of it is open, waiting up to `timeout` seconds (None: as long as it takes)."""

    timeout: Seconds | None = None
