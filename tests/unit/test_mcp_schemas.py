"""The MCP tools' argument models are derived from the command models (docs/mcp.md: "Input schemas
are generated from the same models that validate the CLI's input"): an argument's rule is its field's."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from blackboard.application.commands import PostSignal
from blackboard.application.errors import StoreUnavailable, WaitTimedOut
from blackboard.application.knowledge.commands import WriteEntry
from blackboard.domain.errors import AlreadyClaimed, InvalidInput, SignalNotFound
from blackboard.infrastructure.mcp.schemas import accepted, derive, invalid
from blackboard.infrastructure.mcp.tools import MAX_TOOLS_JSON, every_tool


def properties(model) -> dict:
    return model.model_json_schema(ref_template="{model}")["properties"]


@pytest.mark.parametrize("with_agent", [True, False])
def test_each_argument_taken_from_a_command_field_has_that_field_s_schema(with_agent):
    tools = every_tool(with_agent)
    post, write = (
        properties(tools["blackboard_post_signal"].arguments),
        properties(tools["blackboard_write"].arguments),
    )
    for argument, field in {
        "entry_id": "entry_id",
        "topic": "topic",
        "read_keys": "read_keys",
        "capabilities": "target_capabilities",
        "key": "dedupe_key",
    }.items():
        assert {k: v for k, v in post[argument].items() if k != "title"} == {
            k: v for k, v in properties(PostSignal)[field].items() if k != "title"
        }, argument
    for argument in ("key", "confidence", "depends_on", "section", "replaces", "signal_id"):
        assert {k: v for k, v in write[argument].items() if k not in ("title", "description")} == {
            k: v for k, v in properties(WriteEntry)[argument].items() if k != "title"
        }, argument


def test_an_optional_board_keeps_the_field_s_rule_and_takes_none():
    model = derive(
        "Arguments", WriteEntry, {"key": "key", "blackboard_id": "blackboard_id"}, optional=("blackboard_id",)
    )

    assert accepted(model, {"key": "a/b"}) == {"key": "a/b"}
    with pytest.raises(ValidationError) as refused:
        accepted(model, {"key": "a/b", "blackboard_id": "bad\x01board"})
    error = invalid(refused.value)
    assert (
        isinstance(error, InvalidInput)
        and error.field == "blackboard_id"
        and "control characters" in error.rule
    )


def test_a_refusal_names_the_argument_the_caller_gave_not_the_command_field():
    with pytest.raises(ValidationError) as refused:
        PostSignal(signal_type="RESEARCH", ps_id="p", entry_id="e-1", topic="t", target_capabilities=("",))
    error = invalid(refused.value, {"target_capabilities": "capabilities"})
    assert error.field == "capabilities" and str(error).startswith("capabilities: ")


def test_unknown_arguments_are_refused():
    model = derive("Arguments", WriteEntry, {"key": "key"})
    with pytest.raises(ValidationError) as refused:
        accepted(model, {"key": "k", "colour": "red"})
    assert invalid(refused.value).field == "colour"


@pytest.mark.parametrize(
    ("error", "family", "code"),
    [
        (StoreUnavailable("database is locked"), "unavailable", 1),
        (InvalidInput("--limit", "must be 1 or more"), "invalid_input", 2),
        (AlreadyClaimed("sig-1", "CLAIMED", "ps-analyst"), "refused", 3),
        (SignalNotFound("sig-1"), "not_found", 4),
        (WaitTimedOut("sig-1 to finish", 2), "timed_out", 5),
        (ZeroDivisionError("a bug"), "unexpected", 1),
    ],
)
def test_a_tool_error_names_the_family_and_the_exit_code_the_cli_gives_the_same_error(error, family, code):
    from blackboard.infrastructure.cli.exits import exit_code
    from blackboard.infrastructure.mcp.server import refusal

    details = refusal(error).structured_content

    assert (details["family"], details["exit_code"]) == (family, code) and code == exit_code(error)


def _walk(node):
    if isinstance(node, dict):
        yield node
        for key, value in node.items():
            if key != "properties":
                yield from _walk(value)
            else:
                for field in value.values():
                    yield from _walk(field)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item)


@pytest.mark.parametrize("with_agent", [True, False])
def test_a_tool_s_schema_keeps_every_rule_and_leaves_out_the_words_that_carry_none(with_agent):
    from jsonschema import Draft202012Validator

    tools = every_tool(with_agent)
    for name, tool in tools.items():
        for node in _walk(tool.input_schema):
            assert "title" not in node and "$defs" not in node and "$ref" not in node, name
            assert {"type": "null"} not in node.get("anyOf", []), name
            default = node.get("default", 1)
            assert not any(default == e and type(default) is type(e) for e in ([], {}, "", False, None)), name
    post = tools["blackboard_post_signal"].input_schema["properties"]
    assert post["signal_type"]["enum"][0] == "RESEARCH" and post["entry_id"]["pattern"] == "^e-[0-9]+$"
    assert post["key"] == {
        "maxLength": 200,
        "minLength": 1,
        "type": "string",
    }  # optional: its own type, no null
    write = tools["blackboard_write"].input_schema["properties"]
    assert write["entry_type"]["default"] == "note" and write["confidence"] == {
        "maximum": 1,
        "minimum": 0,
        "type": "number",
    }
    valid = Draft202012Validator(tools["blackboard_post_signal"].input_schema)
    good = {"signal_type": "REVIEW", "ps_id": "p", "entry_id": "e-1", "topic": "t", "after": ["sig-0123abcd"]}
    assert valid.is_valid(good)
    for bad in ({"entry_id": "7"}, {"signal_type": "CHAT"}, {"after": ["x"]}, {"colour": "red"}):
        assert not valid.is_valid({**good, **bad}), bad
    # null still passes the argument model for an optional argument, as before
    assert accepted(tools["blackboard_post_signal"].arguments, {**good, "key": None})["key"] is None


@pytest.mark.parametrize("bound", [False, True], ids=["agent-server", "bound-session"])
def test_an_agent_s_tools_fit_in_their_bound_of_json_characters(bound):
    """The definitions a session's model is sent with every request (bench (r) counts their tokens:
    2,980 cl100k for the 14 tools, from 4,489 before titles, nulls and empty defaults were left out;
    the two cancel tools made 16, 11,274 characters, where the 14 were under 10,000). A bound session (a
    runner's run) has no claim, complete, fail or cancel, and search on its run's board in their room."""
    import json

    tools = every_tool(with_agent=True, bound=bound)
    sent = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools.values()
    ]
    assert len(json.dumps(sent)) <= MAX_TOOLS_JSON
    assert ("blackboard_search" in tools) == bound


def test_every_tool_s_board_argument_says_its_default():
    """An optional argument keeps its note (derive merges it; an assigned one was lost for the knowledge tools)."""
    tools = every_tool(with_agent=True)
    for name, tool in tools.items():
        if name == "blackboard_signals":  # a filter: no default board to speak of
            continue
        described = tool.input_schema["properties"]["blackboard_id"].get("description", "")
        assert described.startswith("default: the server's --blackboard"), name
