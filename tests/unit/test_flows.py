"""Flows in the core: a flow's steps posted in one command (all or none), each waiting for the steps it comes
after; their rules named field by field; a flow cancelled and retried by its id; its progress folded from
its signals. Over the honest in-memory adapters (tests/fakes.py)."""

from __future__ import annotations

import pytest

from blackboard.application.commands import ClaimSignal, CompleteSignal, FailSignal
from blackboard.application.flows.commands import CancelFlow, FlowSpec, GetFlow, RetryFlow, RunFlow
from blackboard.domain.errors import InvalidInput
from blackboard.domain.events import AgentSignalPosted, load_event
from blackboard.domain.flows import (
    FlowExists,
    FlowInvalid,
    FlowNotFound,
    NothingToRetry,
    flow_state,
    step_problems,
)
from blackboard.domain.signals import SignalStatus, SignalType
from tests.fakes import Board, agent

RESEARCHER = agent("docbot-researcher", DOC_RESEARCH=0.9)
PLANNER = agent("docbot-planner", DOC_PLAN=0.9)
WRITER = agent("docbot-writer", DOC_WRITE=0.95, DOC_PLAN=0.5)


def docbot(**changes) -> FlowSpec:
    steps = [
        {"id": "research", "capability": "DOC_RESEARCH", "topic": "what the code does"},
        {"id": "plan", "agent": "docbot-planner", "topic": "an outline", "after": "research"},
        {"id": "approve", "gate": True, "topic": "approve the plan", "after": ["plan"]},
        {
            "id": "write",
            "agent": "docbot-writer",
            "topic": "the pages",
            "after": ["approve"],
            "type": "synthesis",
        },
    ]
    return FlowSpec.model_validate({"name": "docbot", "steps": steps, **changes})


def run(board: Board, flow: FlowSpec | None = None, **changes) -> list:
    return board.service.run_flow(RunFlow(blackboard_id="docs", flow=flow or docbot(), **changes))


def finish(board: Board, signal, agent_id: str, ok: bool = True) -> None:
    board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id=agent_id))
    if ok:
        board.service.complete_signal(CompleteSignal(signal_id=signal.signal_id, agent_id=agent_id))
    else:
        board.service.fail_signal(
            FailSignal(signal_id=signal.signal_id, agent_id=agent_id, error="no sources")
        )


def test_a_flow_posts_every_step_in_one_command_each_after_the_steps_it_names():
    board = Board(RESEARCHER, PLANNER, WRITER)

    research, plan, approve, write = run(board, flow_id="docbot-1")

    assert board.event_types() == ["AgentSignalPosted"] * 4
    assert len({e.version for e in board.store.load("docs")}) == 4  # one append: versions 1..4
    assert [(s.flow_id, s.step_id) for s in (research, plan, approve, write)] == [
        ("docbot-1", "research"),
        ("docbot-1", "plan"),
        ("docbot-1", "approve"),
        ("docbot-1", "write"),
    ]
    assert plan.after == (research.signal_id,) and write.after == (approve.signal_id,)
    assert plan.target_capabilities == ("DOC_PLAN",)  # the agent's best capability
    assert write.target_capabilities == ("DOC_WRITE",) and write.signal_type is SignalType.SYNTHESIS
    assert approve.gate and approve.signal_type is SignalType.DECISION
    assert research.signal_type is SignalType.ANALYSIS  # the default when the target names no type
    assert [s.payload.entry_id for s in (research, plan, approve, write)] == ["e-1", "e-2", "e-3", "e-4"]
    assert research.payload.context["flow"] == {"name": "docbot", "id": "docbot-1", "step": "research"}


def test_a_step_that_cannot_be_posted_writes_no_step_at_all():
    board = Board(RESEARCHER, PLANNER)  # no docbot-writer: the fourth step names an unknown agent

    with pytest.raises(InvalidInput, match=r"steps\[3\]\.agent: no agent named docbot-writer"):
        run(board)

    assert board.event_types() == []


def test_a_flow_id_is_taken_once_per_board():
    board = Board(RESEARCHER, PLANNER, WRITER)
    run(board, flow_id="docbot-1")

    with pytest.raises(FlowExists, match="flow docbot-1 is already on blackboard docs"):
        run(board, flow_id="docbot-1")

    assert board.event_types() == ["AgentSignalPosted"] * 4
    assert run(board)[0].flow_id.startswith("docbot-")  # without one: a new id from the name


def test_the_steps_rules_are_named_field_by_field_every_one_at_once():
    problems = step_problems(["a", "b", "a", "c"], [[], ["c"], [], ["c", "x"]])

    assert problems == [
        (
            "steps[1].after",
            "c is not a step above this one (it comes later: a step waits only for earlier "
            "steps, so a flow has no cycle)",
        ),
        ("steps[2].id", "a is the id of steps[0] too; step ids are unique"),
        ("steps[3].after", "c cannot come after itself"),
        ("steps[3].after", "x is not a step above this one"),
    ]
    with pytest.raises(FlowInvalid) as refused:
        FlowSpec.model_validate(
            {
                "name": "f",
                "steps": [
                    {"id": "a", "capability": "X", "topic": "t", "after": "b"},
                    {"id": "b", "capability": "X", "topic": "t", "after": "a"},
                ],
            }
        )
    assert str(refused.value).startswith("steps[0].after: b is not a step above this one (it comes later")


def test_cancelling_a_flow_cancels_its_open_steps_and_leaves_the_ended_ones():
    board = Board(RESEARCHER, PLANNER, WRITER)
    research, plan, approve, write = run(board, flow_id="docbot-1")
    finish(board, research, "docbot-researcher")

    cancelled = board.service.cancel_flow(
        CancelFlow(blackboard_id="docs", flow_id="docbot-1", reason="wrong repo")
    )

    assert [s.signal_id for s in cancelled] == [plan.signal_id, approve.signal_id, write.signal_id]
    shown = board.container.flows().flow(GetFlow(blackboard_id="docs", flow_id="docbot-1"))
    assert [(s.step_id, s.status) for s in shown.steps] == [
        ("research", SignalStatus.COMPLETED),
        ("plan", SignalStatus.CANCELLED),
        ("approve", SignalStatus.CANCELLED),
        ("write", SignalStatus.CANCELLED),
    ]
    assert shown.state == "cancelled"
    assert board.service.cancel_flow(CancelFlow(blackboard_id="docs", flow_id="docbot-1")) == []
    with pytest.raises(FlowNotFound):
        board.service.cancel_flow(CancelFlow(blackboard_id="docs", flow_id="docbot-2"))


def test_retrying_a_flow_posts_its_failed_step_and_the_expired_ones_after_it_chained_anew():
    board = Board(RESEARCHER, PLANNER, WRITER)
    research, plan, approve, write = run(board, flow_id="docbot-1")
    finish(board, research, "docbot-researcher")
    finish(board, plan, "docbot-planner", ok=False)  # approve and write expire with it

    retried = board.service.retry_flow(RetryFlow(blackboard_id="docs", flow_id="docbot-1"))

    plan2, approve2, write2 = retried
    assert [(s.step_id, s.retry_of) for s in retried] == [
        ("plan", plan.signal_id),
        ("approve", approve.signal_id),
        ("write", write.signal_id),
    ]
    assert plan2.after == (research.signal_id,) and plan2.waiting_for == frozenset()  # research completed
    assert approve2.after == (plan2.signal_id,) and write2.after == (approve2.signal_id,)
    shown = board.container.flows().flow(GetFlow(blackboard_id="docs", flow_id="docbot-1"))
    assert [(s.step_id, s.status, s.tries, s.waiting_for) for s in shown.steps] == [
        ("research", SignalStatus.COMPLETED, 1, ()),
        ("plan", SignalStatus.POSTED, 2, ()),
        ("approve", SignalStatus.POSTED, 2, ("plan",)),
        ("write", SignalStatus.POSTED, 2, ("approve",)),
    ]
    with pytest.raises(NothingToRetry, match="plan POSTED"):
        board.service.retry_flow(RetryFlow(blackboard_id="docs", flow_id="docbot-1"))


def test_a_flow_s_state_is_running_while_a_step_is_open_else_how_its_steps_ended():
    assert flow_state({"COMPLETED": 2, "POSTED": 1}) == "running"
    assert flow_state({"COMPLETED": 3}) == "completed"
    assert flow_state({"COMPLETED": 1, "CANCELLED": 2}) == "cancelled"
    assert flow_state({"COMPLETED": 1, "FAILED": 1, "EXPIRED": 1}) == "failed"


def test_a_post_stored_before_flows_reads_as_no_flow():
    stored = {
        "signal_type": "RESEARCH",
        "payload": {"ps_id": "ps-1", "entry_id": "e-1", "topic": "t", "prompt": "", "context": {}},
        "target_capabilities": ["RESEARCH"],
        "posted_by": "ps-skill",
        "after": [],
        "dedupe_key": None,
        "retry_of": None,
        "read_keys": [],
        "write_keys": [],
        "budget_usd": None,
        "priority": 2,
        "not_before": None,
        "max_attempts": None,
        "gate": False,
        "timeout_s": None,
    }
    envelope = {
        "event_id": "e",
        "blackboard_id": "ps-1",
        "version": 1,
        "occurred_at": "2026-01-01T00:00:00+00:00",
        "signal_id": "sig-0000000a",
    }

    event = load_event("AgentSignalPosted", 9, envelope, stored)

    assert isinstance(event, AgentSignalPosted) and (event.flow_id, event.step_id) == (None, None)


# ---------------------------------------------------------------- the flow file reader
def read(tmp_path, text: str | bytes):
    from blackboard.infrastructure.agents.flow_files import read_flow_file

    path = tmp_path / "f.md"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return read_flow_file(path)


GOOD = (
    "---\nname: f\nsteps:\n  - {id: a, capability: X, topic: t, type: review}\n"
    "  - {id: b, agent: z, topic: u, after: a}\n---\nThe body.\n"
)


def test_a_flow_file_reads_into_the_flow_its_body_the_long_description(tmp_path):
    flow = read(tmp_path, GOOD)

    assert (flow.name, flow.body, [s.id for s in flow.steps]) == ("f", "The body.", ["a", "b"])
    assert flow.steps[0].type is SignalType.REVIEW and flow.steps[1].after == ("a",)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("name: f\n", "frontmatter: is missing: start the file with a block between --- lines"),
        ("---\nname: f\n", "frontmatter: has no closing --- line"),
        ("---\nname: [f\n---\n", "frontmatter: is not valid YAML: "),
        ("---\n- a\n---\n", "frontmatter: must be a mapping of keys to values"),
        (
            GOOD.replace("name: f", "name: f\ncolour: red"),
            "colour: is not a key of a flow file (name, description, steps)",
        ),
        (
            GOOD.replace("name: f", "name: -f"),
            "name: must be letters, digits, '.', '_' and '-', starting with",
        ),
        (GOOD.replace("type: review", "type: chat"), "steps[0].type: must be one of RESEARCH, ANALYSIS"),
        (GOOD.replace("agent: z", "agent: z, capability: Y"), "steps[1]: give capability or agent, not both"),
        (GOOD.replace("after: a", "after: b"), "steps[1].after: b cannot come after itself"),
        ("---\nname: f\nsteps: []\n---\n", "steps: must list 1 to 100 steps, got 0"),
        (b"---\nname: f\0\n---\n", "file: is binary (it holds NUL bytes), not a flow file"),
        (b"---\nname: \xff\n---\n", "file: is not UTF-8 text"),
        ("---\nname: f\n---\n" + "x" * 300_000, "file: is bigger than 256 KiB, too big for a flow file"),
    ],
)
def test_a_flow_file_that_breaks_a_rule_is_refused_naming_the_file_the_field_and_the_rule(
    tmp_path, text, said
):
    with pytest.raises(FlowInvalid) as refused:
        read(tmp_path, text)

    assert str(refused.value).startswith(f"{tmp_path / 'f.md'}: "), str(refused.value)
    assert said in str(refused.value)
