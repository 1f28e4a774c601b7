"""The one table of names (interfaces/names.py) is what every interface reads: no MCP tool, Python call or CLI
option names a command field otherwise than by the field's public name, and each former name is accepted
with its field's meaning and refused beside it."""

from __future__ import annotations

import argparse
import inspect

import pytest

from blackboard import Blackboard, InvalidInput
from blackboard.application.commands import (
    ApproveGate,
    CancelSignal,
    CancelSignals,
    ClaimSignal,
    CompleteSignal,
    FailSignal,
    PostSignal,
    RejectGate,
    SetBudget,
)
from blackboard.infrastructure.cli import OPTIONS
from blackboard.infrastructure.cli.parser import build_parser
from blackboard.infrastructure.interfaces.names import ALIASES, accepted, cli_aliases, public
from blackboard.infrastructure.mcp.schemas import COMMAND_FIELDS
from blackboard.infrastructure.mcp.tools import every_tool

TOOLS = {**every_tool(with_agent=False), **every_tool(with_agent=True)}
CALLS = {
    "post": PostSignal,
    "claim": ClaimSignal,
    "complete": CompleteSignal,
    "fail": FailSignal,
    "approve": ApproveGate,
    "reject": RejectGate,
    "cancel": CancelSignal,
    "cancel_all": CancelSignals,
    "budget": SetBudget,
}


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_every_tool_names_each_field_by_its_public_name(tool):
    _, fields = COMMAND_FIELDS[TOOLS[tool].arguments]

    assert {argument: field for argument, field in fields.items() if argument != public(field)} == {}


@pytest.mark.parametrize(("method", "model"), sorted(CALLS.items()))
def test_every_python_argument_of_a_command_is_a_public_name_of_its_model(method, model):
    parameters = set(inspect.signature(getattr(Blackboard, method)).parameters) - {"self", "former"}
    names = {public(field) for field in model.model_fields}

    assert parameters - names == set()


def test_each_former_option_is_hidden_and_reaches_the_field_its_public_option_does():
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    for command in ALIASES:
        for old, new in cli_aliases(command).items():
            actions = {o: a for a in commands[command]._actions for o in a.option_strings}
            assert actions[old].help is argparse.SUPPRESS and actions[new].help is not argparse.SUPPRESS
            assert actions[old].dest == actions[new].dest
            assert OPTIONS[actions[new].dest] == new  # an error about the value names the option


def test_a_former_name_is_its_field_and_two_names_of_one_field_are_refused_naming_both():
    assert accepted("post", {"gate_timeout": 60, "topic": "t"}) == {"timeout_s": 60, "topic": "t"}
    assert accepted("post", {"timeout_s": None, "timeout": 60}) == {"timeout_s": 60}  # None: not given
    assert accepted("cancel", {"cancelled_by": "bob"}) == {"by": "bob"}
    assert accepted("claim", {"cancelled_by": "bob"}) == {"cancelled_by": "bob"}  # a former name of cancel's
    with pytest.raises(InvalidInput) as both:
        accepted("post", {"key": "a", "dedupe_key": "b"})
    assert (both.value.field, both.value.rule) == ("key", "give key or dedupe_key, not both")
