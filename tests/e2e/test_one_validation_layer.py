"""One validation layer (issue 27 item 1): a bad value of any field of a command model is refused alike by
the CLI, the MCP server, the Python API and the web view: the same family (exit 2, a tool error of family
invalid_input, `InvalidInput`, HTTP 400), a message naming the field as that interface spells it and the
rule the model states, and nothing written (the log's position does not move).

The bad values are generated from the models themselves (hypothesis): each field's type and constraints
(bounds, 64 bits, finiteness, lengths, patterns, choices, nesting, control characters) give values just
past them and far past them, and wrong types. Which fields an interface carries is read from the
interface itself (the CLI's options table and its parser, the MCP tools' argument models, the Python
API's signatures), so a field added to a command model is driven through every interface that takes it
without a change here. Each interface gets the value in the form it can carry (text for the command line
and the query string, JSON for MCP, the value itself in Python); a value a form cannot hold (a list on a
command line) is left to the interfaces that can.

One CLI fork server, one `blackboard mcp` process and one `blackboard ui` process per database, shared
by every example; a fixed budget of EXAMPLES per field.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import re
import subprocess
import threading
import types
import typing
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from blackboard import Blackboard, InvalidInput
from blackboard.application.commands import (
    CancelSignal,
    CancelSignals,
    ClaimSignal,
    CompleteSignal,
    FailSignal,
    GetSignalById,
    ListSignals,
    PostSignal,
    ReadEvents,
    RetrySignal,
    WaitForSignal,
    WatchSignals,
)
from blackboard.application.json_values import MAX_DEPTH
from blackboard.application.knowledge.commands import (
    ListEntries,
    ReadEntry,
    ResolveEntry,
    SearchEntries,
    SummarizeBoard,
    WatchTopic,
    WriteEntry,
)
from blackboard.infrastructure.api.base import ARGUMENTS
from blackboard.infrastructure.cli import OPTIONS
from blackboard.infrastructure.cli.parser import build_parser
from blackboard.infrastructure.mcp.schemas import COMMAND_FIELDS
from blackboard.infrastructure.mcp.tools import every_tool
from blackboard.infrastructure.web.routes import PARAMETERS
from tests.e2e.conftest import Cli, database_url, start_blackboard
from tests.e2e.web import UiServer

pytestmark = pytest.mark.one_process  # its tests share a costly module fixture (tests/scheduling.py)

EXAMPLES = 2  # bad values per field on SQLite: the budget that keeps the module's time modest
EXAMPLES_PG = 1  # on PostgreSQL (the same first value: what it adds is its storage, not new rules)
AGENT = "ps-researcher"  # the MCP server's agent
SIG = "sig-0000beef"
BOARD = "ps-layer"


@dataclass(frozen=True)
class Route:
    """A command model and where each interface takes it: `cli` (the command's words; `positional`: the
    fields given as its arguments), `mcp` (a tool of a server run with --agent; `mcp_own`: a field the
    tool names otherwise, and arguments it needs), `api` (a method of Blackboard; `api_own`: renamed
    arguments), `web` (an endpoint; the fields it takes). `baseline`: good values of the other fields."""

    model: type[BaseModel]
    baseline: dict[str, Any]
    cli: tuple[str, ...] | None = None
    positional: tuple[str, ...] = ()
    mcp: str | None = None
    mcp_own: dict[str, str] = field(default_factory=dict)
    mcp_extra: dict[str, Any] = field(default_factory=dict)
    api: str | None = None
    web: str | None = None
    web_fields: tuple[str, ...] = ()
    skip: frozenset[str] = frozenset()  # fields whose forms differ by design (a time: a duration on the CLI)
    not_on_cli: frozenset[str] = frozenset()  # an option the command has, for another of its models

    @property
    def name(self) -> str:
        return self.model.__name__


ROUTES = [
    Route(
        PostSignal,
        {"signal_type": "RESEARCH", "ps_id": BOARD, "entry_id": "e-1", "topic": "t"},
        cli=("post",),
        mcp="blackboard_post_signal",
        api="post",
        # an ISO time everywhere, and a duration ("10m") on the CLI and API; a signal's timeout: a duration too
        skip=frozenset({"not_before", "timeout_s"}),
    ),
    Route(
        ClaimSignal,
        {"signal_id": SIG, "agent_id": AGENT},
        ("claim",),
        ("signal_id",),
        "blackboard_claim",
        api="claim",
    ),
    Route(
        CompleteSignal,
        {"signal_id": SIG, "agent_id": AGENT},
        ("complete",),
        ("signal_id",),
        "blackboard_complete",
        api="complete",
    ),
    Route(
        FailSignal,
        {"signal_id": SIG, "agent_id": AGENT, "error": "no"},
        ("fail",),
        ("signal_id",),
        "blackboard_fail",
        api="fail",
    ),
    Route(RetrySignal, {"signal_id": SIG}, ("retry",), ("signal_id",), api="retry"),
    Route(
        CancelSignal,
        {"signal_id": SIG},
        ("cancel",),
        ("signal_id",),
        "blackboard_cancel",
        api="cancel",
        # with SIG, --blackboard and --correlation-id are refused: they name a bulk cancel (CancelSignals)
        not_on_cli=frozenset({"correlation_id", "blackboard_id"}),
    ),
    Route(
        CancelSignals, {"blackboard_id": BOARD}, ("cancel",), mcp="blackboard_cancel_all", api="cancel_all"
    ),
    Route(GetSignalById, {"signal_id": SIG}, ("show",), ("signal_id",), "blackboard_show", api="show"),
    Route(
        ListSignals,
        {"blackboard_id": BOARD},
        ("signals",),
        mcp="blackboard_signals",
        api="signals",
        web="/api/board",
        web_fields=("blackboard_id", "at"),
    ),
    Route(
        WaitForSignal,
        {"signal_id": SIG, "timeout": 0},
        ("wait",),
        ("signal_id",),
        "blackboard_wait",
        mcp_own={"timeout": "timeout_seconds"},
        api="wait",
    ),
    Route(WatchSignals, {"signal_types": ("RESEARCH",), "timeout": 0}, ("watch",), api="watch"),
    Route(
        ReadEvents,
        {},
        ("events",),
        api="events",
        web="/api/events",
        web_fields=("since", "limit", "blackboard_id"),
    ),
    Route(
        WriteEntry,
        {"blackboard_id": BOARD, "key": "k/1", "author": "ana", "value": 1},
        ("write",),
        ("key",),
        "blackboard_write",
        api="write",
    ),
    Route(
        ResolveEntry,
        {"blackboard_id": BOARD, "key": "k/1", "author": "ana", "rationale": "why", "pick": 1},
        ("resolve",),
        ("key",),
        "blackboard_resolve",
        api="resolve",
        skip=frozenset({"value"}),  # --pick and --value exclude each other; write's value has the rule
    ),
    Route(
        ReadEntry,
        {"blackboard_id": BOARD, "key": "k/1"},
        ("read",),
        ("key",),
        "blackboard_read",
        api="read",
        web="/api/entry",
        web_fields=("blackboard_id", "key", "at"),
    ),
    Route(ListEntries, {"blackboard_id": BOARD}, ("entries",), mcp="blackboard_list", api="entries"),
    Route(
        SearchEntries,
        {"blackboard_id": BOARD, "text": "plan"},
        ("search",),
        ("text",),
        api="search",  # its tool is a person's server's (an agent's list is at its cap): no --agent route
        skip=frozenset(ListEntries.model_fields) - {"limit"},  # the filters of entries, tried there
    ),
    Route(SummarizeBoard, {"blackboard_id": BOARD}, ("summary",), mcp="blackboard_summary", api="summary"),
    Route(
        WatchTopic,
        {"blackboard_id": BOARD, "topic": "t", "timeout": 0},
        ("watch",),
        mcp="blackboard_topic",
        mcp_own={"topic": "topic", "since": "since", "timeout": "timeout_seconds"},
        mcp_extra={"action": "poll"},
        api="poll_topic",
    ),
]


# --- the rules of a field, read from the model -------------------------------------------------------------


@dataclass
class Rules:
    kind: str  # int, float, str, choice, json, bool, tuple, other
    low: float | None = None  # the smallest value allowed
    high: float | None = None  # the largest
    finite: bool = False
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    printable: bool = False
    item: Rules | None = None


def rules_of(annotation: Any, metadata: list[Any]) -> Rules:
    """The rules of a type (Optional, Annotated, tuples, Literal and Enum unwrapped) and its constraints."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *extra = typing.get_args(annotation)
        return rules_of(base, [*metadata, *extra])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kept = [a for a in typing.get_args(annotation) if a is not type(None)]
        return rules_of(kept[0], metadata) if len(kept) == 1 else Rules("other")
    origin = typing.get_origin(annotation)
    if origin is tuple:
        item = typing.get_args(annotation)[0]
        found = Rules("tuple", item=rules_of(item, []))
        _constrain(found, metadata)
        return found
    if origin is typing.Literal or (inspect.isclass(annotation) and issubclass(annotation, Enum)):
        return Rules("choice")
    kinds = {int: "int", float: "float", str: "str", bool: "bool", dict: "json", Any: "json"}
    found = Rules(kinds.get(origin or annotation, "other"))
    _constrain(found, metadata)
    return found


def _constrain(found: Rules, metadata: list[Any]) -> None:
    for item in metadata:
        if isinstance(item, FieldInfo):
            _constrain(found, list(item.metadata))
            continue
        for name, attr in (("ge", "low"), ("le", "high")):
            if getattr(item, name, None) is not None:
                setattr(found, attr, getattr(item, name))
        if getattr(item, "gt", None) is not None:  # a dollar amount: above 0
            found.low = item.gt + (1 if found.kind == "int" else 1e-9)
        if getattr(item, "min_length", None) is not None:
            found.min_length = item.min_length
        if getattr(item, "max_length", None) is not None:
            found.max_length = item.max_length
        if getattr(item, "pattern", None) is not None:
            found.pattern = item.pattern
        if getattr(item, "allow_inf_nan", None) is False:
            found.finite = True
        if getattr(getattr(item, "func", None), "__name__", "") == "printable":
            found.printable = True


def bad_values(rules: Rules, item: bool = False) -> st.SearchStrategy[Any] | None:
    """Values just past each rule and far past it, and of the wrong type; None: a field with no rule to break."""
    options: list[st.SearchStrategy[Any]] = []
    if rules.kind in ("int", "float"):
        whole = rules.kind == "int"
        if rules.low is not None:
            below = st.integers(max_value=math.ceil(rules.low) - 1, min_value=-(2**80))
            options.append(below if whole else below.map(float))
        if rules.high is not None:
            options.append(st.integers(min_value=math.floor(rules.high) + 1, max_value=2**80))
        if not whole and rules.finite:
            options.append(st.sampled_from([math.nan, math.inf, -math.inf]))
        options.append(st.sampled_from(["x", "twelve", "1_0x"]))  # no number at all
    elif rules.kind == "str":
        if rules.min_length:
            options.append(st.just(""))
        if rules.max_length is not None:
            options.append(st.text("abc", min_size=rules.max_length + 1, max_size=rules.max_length + 50))
        if rules.pattern is not None:
            options.append(st.sampled_from(["not a match!", "sig-XYZ", "e-", "k//\\x", "a b"]))
        if rules.printable:
            options.append(
                st.builds(lambda a, b: f"{a}\x1b{b}", st.text("ab", max_size=3), st.text("ab", max_size=3))
            )
        if options and not item:
            options.append(st.sampled_from([5, ["a"]]))  # not a string (Python and MCP only)
    elif rules.kind == "choice":
        options.append(st.sampled_from(["NOT-A-CHOICE", "research", ""]))
    elif rules.kind == "json":
        options.append(
            st.sampled_from(
                [
                    {"a": _nested(MAX_DEPTH)},  # 33 levels with the object
                    [1],  # not an object, where one is needed
                    {"a": math.nan},
                    {"a": [math.inf]},
                    {"a": 2**64},
                    {"a": -(2**63) - 1},
                    {"a": "x\x00"},
                ]
            )
        )
    elif rules.kind == "bool":
        options.append(st.sampled_from(["maybe", 7]))
    elif rules.kind == "tuple" and rules.item is not None:
        items = bad_values(rules.item, item=True)
        if items is not None:
            options.append(st.lists(items, min_size=1, max_size=2))
        if rules.min_length:
            options.append(st.just([]))
    return st.one_of(*options) if options else None


def _nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def field_rules(model: type[BaseModel], name: str) -> Rules:
    info = model.model_fields[name]
    return rules_of(info.annotation, list(info.metadata))


# --- the model as the oracle --------------------------------------------------------------------------------


def refusal(model: type[BaseModel], values: dict[str, Any], name: str) -> str | None:
    """The model's rule for `values` (None: it takes them): pydantic's message for the field, or the
    stem of a rule its validators raise (json_values.py), cut before the detail of where and what."""
    try:
        model(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        assert first["loc"] and first["loc"][0] == name, (name, exc.errors())
        return first["msg"]
    except InvalidInput as exc:
        assert exc.field == name, (name, exc)
        return stem(exc.rule)
    return None


def stem(rule: str) -> str:
    return re.split(r",| \(| got ", rule, maxsplit=1)[0]


# --- each interface's form of a value, and whether it can hold it -----------------------------------------

NO_TEXT = object()


def as_text(value: Any) -> Any:
    """A value as a command line or a query string gives it, or NO_TEXT when text cannot hold it."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return NO_TEXT
    if isinstance(value, str) and ("\x00" in value or "\n" in value):
        return NO_TEXT
    return str(value)


def json_text(value: Any) -> str:
    """JSON as typed on a command line: a number past a float's range is how text says infinity."""
    return (
        json.dumps(value).replace("-Infinity", "-1e999").replace("Infinity", "1e999").replace("NaN", "1e999")
    )


# --- the interfaces ----------------------------------------------------------------------------------------


def cli_words(cli_parser: argparse.ArgumentParser, route: Route) -> tuple[dict[str, str], set[str]]:
    """The command's options (an option string -> itself) and its positional metavars."""
    parser = cli_parser
    for word in route.cli or ():
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    options = {o for a in parser._actions for o in a.option_strings}
    return {o: o for o in options}, {a.metavar for a in parser._actions if not a.option_strings}


PARSER = build_parser()


def cli_name(route: Route, name: str) -> str | None:
    """How the CLI spells the field in this command (None: the command does not take it)."""
    if route.cli is None or name in route.not_on_cli:
        return None
    options, positionals = cli_words(PARSER, route)
    spelled = OPTIONS.get(name)
    if name in route.positional:
        return spelled if spelled in positionals else None
    return spelled if spelled in options else None


def cli_args(route: Route, values: dict[str, Any], kind: dict[str, Rules]) -> list[str] | None:
    args: list[str] = [*route.cli]
    tail: list[str] = []
    for name, value in values.items():
        spelled = cli_name(route, name)
        if spelled is None:
            return None
        rules = kind[name]
        if rules.kind == "json":
            texts = [json_text(value)]
        elif rules.kind == "tuple":
            if not isinstance(value, (list, tuple)) or not value:
                return None  # none given is the option left out, which the command treats as such
            texts = [as_text(item) for item in value]
        else:
            texts = [as_text(value)]
        if any(text is NO_TEXT for text in texts):
            return None
        if name in route.positional:
            tail += ["--", texts[0]] if texts[0].startswith("-") else [texts[0]]
        else:
            args += [f"{spelled}={text}" for text in texts]
    return [*args, *tail]


def api_names(route: Route) -> dict[str, str]:
    """Model field -> the Python API's argument of the route's method."""
    parameters = inspect.signature(getattr(Blackboard, route.api)).parameters
    spelled = {name: ARGUMENTS.get(name, name) for name in route.model.model_fields}
    return {name: arg for name, arg in spelled.items() if arg in parameters}


def mcp_names(route: Route) -> dict[str, str]:
    """Model field -> the tool's argument, read from the argument model the tool derives from the command's."""
    tool = every_tool(with_agent=True)[route.mcp]
    _, fields = COMMAND_FIELDS[tool.arguments]
    named = {field_name: argument for argument, field_name in fields.items()}
    named.update({f: a for f, a in route.mcp_own.items() if a in tool.arguments.model_fields})
    return named


class McpServer:
    """`blackboard mcp --agent AGENT`, spoken to in JSON-RPC lines on its pipes, for the whole module."""

    def __init__(self, cli: Cli) -> None:
        self.proc = start_blackboard(
            ["mcp", "--agent", AGENT],
            cli.environment(),
            cli.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.next_id = 0
        self._lock = threading.Lock()
        self.send(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        )
        self.proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        self.proc.stdin.flush()

    def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.next_id += 1
            line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
            self.proc.stdin.write(line.encode() + b"\n")  # json.dumps writes nan as NaN: the server reads it
            self.proc.stdin.flush()
            while True:
                answer = self.proc.stdout.readline()
                assert answer, f"the MCP server ended:\n{self.stop()}"
                message = json.loads(answer)
                if message.get("id") == self.next_id:
                    return message

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.send("tools/call", {"name": tool, "arguments": arguments})["result"]

    def stop(self) -> str:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        finally:
            self.proc.kill()
        return self.proc.stderr.read().decode()


@dataclass
class Interfaces:
    database: str
    cli: Cli
    mcp: McpServer
    api: Blackboard
    web: UiServer


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def interfaces(request, make_cli, tmp_path_factory) -> Iterator[Interfaces]:
    url = database_url(request, tmp_path_factory, "layer")
    folder = tmp_path_factory.mktemp("layer-cwd")
    cli = make_cli(url, folder)
    cli.post("--ps-id", BOARD)  # something on the board, so "nothing written" is about a real log
    api = Blackboard(url, agents_dir=cli.agents_dir)
    mcp = McpServer(cli)
    web = UiServer(cli).wait_ready()
    try:
        yield Interfaces(request.param, cli, mcp, api, web)
    finally:
        web.stop()
        stderr = mcp.stop()
        api.close()
        assert "Traceback" not in stderr, stderr


def cases() -> list[tuple[Route, str]]:
    found = []
    for route in ROUTES:
        for name in route.model.model_fields:
            if name not in route.skip and bad_values(field_rules(route.model, name)) is not None:
                found.append((route, name))
    return found


CASES = cases()
TRIED: dict[tuple[str, str, str], list[int]] = {}  # examples run per database and field


def test_the_cases_cover_every_interface_and_a_new_field_would_join_them():
    reached = {"cli": 0, "mcp": 0, "api": 0, "web": 0}
    for route, name in CASES:
        reached["cli"] += cli_name(route, name) is not None
        reached["mcp"] += route.mcp is not None and name in mcp_names(route)
        reached["api"] += route.api is not None and name in api_names(route)
        reached["web"] += name in route.web_fields
    assert min(reached.values()) > 0 and reached["cli"] > 50 and reached["mcp"] > 40, reached
    assert len(CASES) > 80, len(CASES)


@pytest.mark.parametrize(("route", "name"), CASES, ids=[f"{r.name}.{n}" for r, n in CASES])
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    phases=[
        Phase.explicit,
        Phase.generate,
    ],  # no shrinking: a failure shows its value, the budget stays fixed
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
@given(data=st.data())
def test_a_bad_value_is_refused_alike_by_every_interface_and_nothing_is_written(
    interfaces: Interfaces, route: Route, name: str, data: st.DataObject
):
    kinds = {n: field_rules(route.model, n) for n in route.model.model_fields}
    bad = data.draw(bad_values(kinds[name]), label=name)  # drawn every time: hypothesis replays the draws
    budget = EXAMPLES_PG if interfaces.database == "postgresql" else EXAMPLES
    tried = TRIED.setdefault((interfaces.database, route.name, name), [0])
    if tried[0] >= budget:
        return
    tried[0] += 1
    values = {**route.baseline, name: bad}
    before = interfaces.api.position()
    rule = refusal(route.model, values, name)
    if rule is None:  # the strategy's value happens to be a good one (a pattern it matches after all)
        return
    heard: dict[str, str] = {}

    if (args := cli_args(route, values, kinds)) is not None and (
        expected := _text_rule(route, values, name, kinds)
    ):
        done = interfaces.cli(*args)
        assert done.returncode == 2, (args, done.returncode, done.stderr)
        heard["cli"] = _says(done.stderr, cli_name(route, name), expected)

    if route.mcp is not None and name in (named := mcp_names(route)):
        arguments = {named[n]: v for n, v in values.items() if n in named}
        result = interfaces.mcp.call(route.mcp, {**route.mcp_extra, **arguments})
        assert result.get("isError"), (route.mcp, arguments, result)
        assert result["structuredContent"]["family"] == "invalid_input", result
        heard["mcp"] = _says(result["content"][0]["text"], named[name], rule)

    if route.api is not None and name in (named := api_names(route)):
        with pytest.raises(InvalidInput) as refused:
            getattr(interfaces.api, route.api)(**{named[n]: v for n, v in values.items() if n in named})
        heard["api"] = _says(str(refused.value), named[name], rule)

    if (
        name in route.web_fields  # an empty parameter is one left out; a list is no query parameter's
        and all(as_text(values[n]) not in (NO_TEXT, "") for n in route.web_fields if n in values)
        and (expected := _text_rule(route, values, name, kinds)) is not None
    ):
        query = {PARAMETERS.get(n, n): as_text(v) for n, v in values.items() if n in route.web_fields}
        status, _, body = interfaces.web.get(f"{route.web}?{urllib.parse.urlencode(query)}")
        assert status == 400, (route.web, query, status, body)
        heard["web"] = _says(json.loads(body)["error"], PARAMETERS.get(name, name), expected)

    assert interfaces.api.position() == before, f"{route.name}.{name}={bad!r} wrote something"
    assert heard or not _reachable(route, name), (route.name, name, bad)


def _reachable(route: Route, name: str) -> bool:
    """Whether any interface takes this field at all (each should: a field no interface takes is dead)."""
    return (
        cli_name(route, name) is not None
        or (route.mcp is not None and name in mcp_names(route))
        or (route.api is not None and name in api_names(route))
    )


def _text_rule(route: Route, values: dict[str, Any], name: str, kinds: dict[str, Rules]) -> str | None:
    """The rule for the value as text (what a command line or a query string carries): the same words as
    for the value itself, or None when text cannot say it so (5 is no string, but "5" is one)."""
    native = refusal(route.model, values, name)
    if kinds[name].kind == "json":
        return native
    value = values[name]
    text = [as_text(v) for v in value] if isinstance(value, (list, tuple)) else as_text(value)
    if text is NO_TEXT or (isinstance(text, list) and NO_TEXT in text):
        return None
    said = refusal(route.model, {**values, name: text}, name)
    return said if said == native or isinstance(value, str) else None


def _says(message: str, spelled: str | None, rule: str) -> str:
    assert f"{spelled}: " in message and rule in message, f"expected '{spelled}: ... {rule}' in {message!r}"
    return message
