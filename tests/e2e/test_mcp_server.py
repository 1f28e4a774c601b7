"""`blackboard mcp` driven by the MCP SDK's own stdio client, against a real server process on a SQLite file and
on PostgreSQL (docs/mcp.md; the contract's table: tests/fixtures/contract/mcp.md): every tool listed with a
schema naming its arguments, every tool called, its results the CLI's `--json` documents, bad arguments
refused naming the field (nothing written), the server's identity from --agent, and no call able to end the
server."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator

import pytest

from blackboard.infrastructure.mcp.limit_tools import PERSON_TOOLS
from blackboard.infrastructure.mcp.tools import FLOW_TOOLS, FOLLOW_TOOLS, GATE_TOOLS, SEARCH_TOOLS
from tests.cli_server import start_blackboard
from tests.e2e.conftest import Cli, assert_signal, assert_signals, database_url
from tests.e2e.mcp_client import contract_tools, served
from tests.paths import ROOT

pytestmark = pytest.mark.anyio
AGENT = "ps-researcher"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def mcli(request, make_cli, tmp_path_factory) -> Iterator[Cli]:
    url = database_url(request, tmp_path_factory, "mcp")
    made = make_cli(url, tmp_path_factory.mktemp("cwd"))
    made.ok("events", "--limit", "1")  # the schema exists before servers start
    yield made
    made.close()


@pytest.fixture
def board() -> str:
    return f"mcp-{uuid.uuid4().hex[:8]}"


def last_position(cli: Cli) -> int:
    return max([e["position"] for e in cli.ok("events", "--since", "0")] or [0])


async def test_every_tool_of_the_contract_is_listed_with_a_schema_naming_its_arguments(mcli):
    expected = contract_tools()
    assert len(expected) == 14
    documented = contract_tools(ROOT / "docs" / "mcp.md")  # the contract's, and the controls' (cancel)
    assert set(expected) <= set(documented)
    for args, who in ((("--agent", AGENT), None), ((), "author")):
        async with served(mcli, *args) as server:
            listed = {tool.name: tool.input_schema for tool in (await server.session.list_tools()).tools}
        # a gate is a person's decision: an agent's server leaves approve and reject out
        # a gate and a budget are a person's to decide: an agent's server leaves approve, reject, budget out
        # and search: an agent's tool list is at its cap (docs/mcp.md)
        assert set(listed) == set(documented) - (
            GATE_TOOLS | PERSON_TOOLS | SEARCH_TOOLS | FLOW_TOOLS | FOLLOW_TOOLS if who is None else set()
        )
        for name, schema in listed.items():
            assert schema["type"] == "object" and schema.get("additionalProperties") is False, name
            # an agent's server: the agent cancels (`by`)
            named = expected.get(name, documented[name] - ({"by"} if who is None else set()))
            missing = named - set(schema["properties"])
            assert not missing and "blackboard_id" in schema["properties"], f"{name} lacks {missing}"
        post = listed["blackboard_post_signal"]
        # topic alone: the type, the PS id and the entry id have defaults (capabilities, the board, its next e-N)
        assert post["required"] == ["topic"]
        assert post["properties"]["entry_id"]["pattern"] == "^e-[0-9]+$"  # PostSignal's own rule
        write = listed["blackboard_write"]
        assert ("author" in write["properties"]) == (who == "author")  # with --agent, the agent writes
        assert ("author" in write.get("required", [])) == (who == "author")


async def test_a_signal_s_life_through_the_tools_matches_the_cli_s_documents(mcli, board):
    async with served(mcli, "--agent", AGENT) as server:
        posted = assert_signal(
            await server.call(
                "blackboard_post_signal",
                signal_type="RESEARCH",
                ps_id=board,
                entry_id="e-1",
                topic="stores",
                context={"depth": 2},
                capabilities=["RESEARCH"],
                key=f"{board}/e-1",
            )
        )
        again = await server.call(
            "blackboard_post_signal",
            signal_type="RESEARCH",
            ps_id=board,
            entry_id="e-1",
            topic="stores",
            key=f"{board}/e-1",
        )
        sig = posted["signal_id"]
        assert (again["signal_id"], posted["posted_by"], posted["blackboard_id"]) == (sig, AGENT, board)

        assert await server.call("blackboard_show", signal_id=sig) == mcli.ok("show", sig)
        assert await server.call("blackboard_match", signal_id=sig) == mcli.ok("match", sig)
        listed = assert_signals(await server.call("blackboard_signals", blackboard_id=board, status="POSTED"))
        assert [s["signal_id"] for s in listed] == [sig]

        claimed = await server.call("blackboard_claim", signal_id=sig)
        done = await server.call(
            "blackboard_complete",
            signal_id=sig,
            artifact_path="notes.md",
            knowledge_items=["logs are append-only"],
        )
        waited = await server.call("blackboard_wait", signal_id=sig, timeout_seconds=5)

    assert (claimed["status"], claimed["claimed_by"], done["status"]) == ("CLAIMED", AGENT, "COMPLETED")
    assert waited == mcli.ok("show", sig) == assert_signal(done)
    assert done["result"]["artifact_path"] == "notes.md"


async def test_a_failure_and_a_wait_that_ends_on_it(mcli, board):
    sig = mcli.post("--ps-id", board)["signal_id"]
    async with served(mcli, "--agent", AGENT, "--blackboard", board) as server:
        await server.call("blackboard_claim", signal_id=sig)
        failed = await server.call("blackboard_fail", signal_id=sig, error="no sources")
        waited = await server.call("blackboard_wait", signal_id=sig, timeout_seconds=1)
    assert (failed["status"], failed["result"]["error"], waited["status"]) == (
        "FAILED",
        "no sources",
        "FAILED",
    )


async def test_the_budget_tool_is_a_person_s_and_gives_the_cli_s_document(mcli, board):
    mcli.post(ps=board, entry="e-1")
    async with served(mcli, "--blackboard", board) as server:
        set_here = await server.call("blackboard_budget", usd=2.5, reason="a day", set_by="alice")
        text, refusal = await server.refused("blackboard_budget", usd=-1)
    async with served(mcli, "--agent", AGENT, "--blackboard", board) as server:
        refused_text, refused = await server.refused("blackboard_budget", usd=100)

    assert set_here == mcli.ok("budget", board) and set_here["usd"] == 2.5
    assert refusal["exit_code"] == 2 and "usd" in text
    assert refused["exit_code"] == 3 and "only a person sets a board's limits" in refused_text
    assert mcli.ok("budget", board)["usd"] == 2.5  # the agent's call wrote nothing


async def test_the_search_tool_is_a_person_s_and_gives_the_cli_s_document(mcli, board):
    for key, value in (("notes/a", '{"text": "Café opens", "status": "open"}'), ("notes/b", '"cafe closed"')):
        mcli("write", key, "--blackboard", board, "--author", "ann", "--value", value).expect(0)
    async with served(mcli, "--blackboard", board) as server:
        found = await server.call("blackboard_search", text='"CAFE" -(opens*')
        filtered = await server.call("blackboard_search", text="cafe", filter={"status": "open"}, limit=5)
        text, refusal = await server.refused("blackboard_search", text="***")

    assert found == mcli.ok("search", '"CAFE" -(opens*', "--blackboard", board)
    assert [hit["key"] for hit in found] == ["notes/a"] and isinstance(found[0]["score"], float)
    assert [hit["key"] for hit in filtered] == ["notes/a"]
    assert refusal["exit_code"] == 2 and text.startswith("text: ")


async def test_cancel_tools_end_a_signal_and_what_waits_on_it_as_the_server_s_agent(mcli, board):
    first = mcli.post("--ps-id", board)["signal_id"]
    second = mcli.post("--ps-id", board, "--after", first)["signal_id"]
    runs = [mcli.post("--ps-id", board, "--correlation-id", f"{board}-run")["signal_id"] for _ in range(2)]
    async with served(mcli, "--agent", AGENT, "--blackboard", board) as server:
        cancelled = await server.call("blackboard_cancel", signal_id=first, reason="not needed")
        text, refusal = await server.refused("blackboard_cancel", signal_id=first)
        bulk = await server.call("blackboard_cancel_all", posted_with=f"{board}-run", reason="run over")
        waited = await server.call("blackboard_wait", signal_id=second, timeout_seconds=1)

    assert cancelled == mcli.ok("show", first) == assert_signal(cancelled)
    assert cancelled["result"]["error"] == f"cancelled by {AGENT}: not needed"
    assert f"{first} is CANCELLED" in text and refusal["exit_code"] == 3
    assert sorted(s["signal_id"] for s in assert_signals(bulk)) == sorted(runs)
    assert waited["status"] == "CANCELLED" and first in waited["result"]["error"]


async def test_max_attempts_on_a_post_and_retry_after_on_a_failure_retry_the_same_signal(mcli, board):
    async with served(mcli, "--agent", AGENT, "--blackboard", board) as server:
        posted = await server.call(
            "blackboard_post_signal",
            signal_type="RESEARCH",
            ps_id=board,
            entry_id="e-1",
            topic="flaky",
            max_attempts=2,
        )
        await server.call("blackboard_claim", signal_id=posted["signal_id"])
        retried = await server.call(
            "blackboard_fail", signal_id=posted["signal_id"], error="try later", retry_after=30
        )
        text, refusal = await server.refused(
            "blackboard_post_signal",
            signal_type="RESEARCH",
            ps_id=board,
            entry_id="e-2",
            topic="t",
            max_attempts=0,
        )

    assert retried == mcli.ok("show", posted["signal_id"]) == assert_signal(retried)
    assert (retried["status"], retried["attempt"], retried["max_attempts"]) == ("POSTED", 2, 2)
    assert retried["attempts"][0]["error"] == "try later"
    assert "max_attempts" in text and refusal["exit_code"] == 2


async def test_the_knowledge_tools_match_the_cli_and_a_conflict_names_the_other_author(mcli, board):
    async with served(mcli, "--agent", AGENT, "--blackboard", board) as server:
        written = await server.call(
            "blackboard_write",
            key="plan/outline",
            value=["read", "write"],
            entry_type="plan",
            confidence=0.8,
            topics=["plans"],
            meta={"draft": True},
        )
        assert written == mcli.ok("read", "plan/outline", "--blackboard", board)
        assert (written["author"], written["blackboard_id"], written["version"]) == (AGENT, board, 1)
        mcli.ok(
            "write",
            "plan/outline",
            "--blackboard",
            board,
            "--author",
            "ps-lead",
            "--replaces",
            "1",
            "--value",
            '["read", "write", "test"]',
        )

        text, details = await server.refused("blackboard_write", key="plan/outline", value=["mine"])
        assert "ps-lead" in text and details["family"] == "refused" and details["exit_code"] == 3
        assert details["entry"]["conflict"]["candidates"]  # the entry, in conflict, as the CLI prints it

        read = await server.call("blackboard_read", key="plan/outline")
        assert read == mcli.ok("read", "plan/outline", "--blackboard", board) and read["conflict"]
        history = await server.call("blackboard_read", key="plan/outline", history=True)
        assert history == mcli.ok("read", "plan/outline", "--blackboard", board, "--history")
        listed = await server.call("blackboard_list", entry_type="plan")
        assert listed == mcli.ok("entries", "--blackboard", board, "--type", "plan")

        candidate = next(c["version"] for c in read["conflict"]["candidates"] if c["value"] == ["mine"])
        resolved = await server.call(
            "blackboard_resolve", key="plan/outline", pick=candidate, rationale="mine is it"
        )
        assert (resolved["value"], resolved["conflict"]) == (["mine"], None)
        assert await server.call("blackboard_summary") == mcli.ok("summary", "--blackboard", board)


async def test_a_topic_poll_returns_what_was_published_after_the_subscription(mcli, board):
    mcli.ok(
        "write", "old", "--blackboard", board, "--author", "ps-lead", "--text", "too early", "--topic", "news"
    )
    async with served(mcli, "--blackboard", board) as server:
        subscribed = await server.call("blackboard_topic", action="subscribe", topic="news")
        mcli.ok(
            "write",
            "fresh",
            "--blackboard",
            board,
            "--author",
            "ps-lead",
            "--text",
            "on time",
            "--topic",
            "news",
        )
        mcli.ok(
            "write", "other", "--blackboard", board, "--author", "ps-lead", "--text", "x", "--topic", "sports"
        )
        polled = await server.call("blackboard_topic", action="poll", topic="news", timeout_seconds=10)
        quiet = await server.call(
            "blackboard_topic", progress=True, action="poll", topic="news", timeout_seconds=2.5
        )
        replay = await server.call(
            "blackboard_topic", action="poll", topic="news", since=subscribed["position"]
        )

    assert [(e["key"], e["value"]) for e in polled["entries"]] == [("fresh", "on time")]
    assert polled["position"] > subscribed["position"] and quiet["entries"] == []
    assert quiet["position"] >= polled["position"] and replay["entries"] == polled["entries"]
    assert server.progress and all(total == 2.5 for _, total, _ in server.progress)  # a second at a time


async def test_bad_arguments_are_tool_errors_naming_the_field_and_write_nothing(mcli, board):
    before = last_position(mcli)
    bad = {
        ("blackboard_post_signal", "entry_id"): dict(
            signal_type="RESEARCH", ps_id=board, entry_id="7", topic="t"
        ),
        ("blackboard_post_signal", "signal_type"): dict(
            signal_type="COOKING", ps_id=board, entry_id="e-1", topic="t"
        ),
        ("blackboard_post_signal", "topic"): dict(signal_type="RESEARCH", ps_id=board, entry_id="e-1"),
        ("blackboard_post_signal", "colour"): dict(
            signal_type="RESEARCH", ps_id=board, entry_id="e-1", topic="t", colour="red"
        ),
        ("blackboard_write", "key"): dict(key="no spaces", value=1, blackboard_id=board),
        ("blackboard_write", "confidence"): dict(key="k", value=1, confidence=2, blackboard_id=board),
        ("blackboard_write", "blackboard_id"): dict(key="k", value=1),  # no board named, none by default
        ("blackboard_signals", "limit"): dict(limit=0),
        ("blackboard_wait", "timeout_seconds"): dict(signal_id="sig-00000000", timeout_seconds=-1),
        ("blackboard_resolve", "pick"): dict(key="k", pick=1, value=2, rationale="r", blackboard_id=board),
        ("blackboard_topic", "action"): dict(action="listen", topic="news", blackboard_id=board),
    }
    async with served(mcli, "--agent", AGENT) as server:
        for (tool, field), arguments in bad.items():
            text, details = await server.refused(tool, **arguments)
            assert field in text and details["family"] == "invalid_input" and details["exit_code"] == 2, (
                tool,
                text,
            )
        text, _ = await server.refused("blackboard_nothing")
        assert "no tool blackboard_nothing" in text
        _, still = await server.refused("blackboard_summary", blackboard_id=board)  # the server serves on
    assert last_position(mcli) == before and still["family"] == "not_found"  # nothing reached the board


async def test_without_agent_the_server_posts_and_writes_as_the_caller_says_but_never_claims(mcli, board):
    async with served(mcli, "--blackboard", board) as server:
        posted = await server.call(
            "blackboard_post_signal",
            signal_type="REVIEW",
            ps_id=board,
            entry_id="e-2",
            topic="review it",
            posted_by="ps-lead",
        )
        written = await server.call("blackboard_write", key="notes", value="hello", author="ps-lead")
        for tool, arguments in (
            ("blackboard_claim", {}),
            ("blackboard_complete", {}),
            ("blackboard_fail", {"error": "x"}),
        ):
            text, details = await server.refused(tool, signal_id=posted["signal_id"], **arguments)
            assert "--agent" in text and details["family"] == "refused", text
        text, _ = await server.refused("blackboard_write", key="notes", value="hello")
        assert text.startswith("author:"), text
        text, _ = await server.refused("blackboard_read", key="notes", signal_id=posted["signal_id"])
        assert text.startswith("author: is required with signal_id"), text
    assert (posted["posted_by"], written["author"]) == ("ps-lead", "ps-lead")
    assert mcli.ok("show", posted["signal_id"])["status"] == "POSTED"


async def test_not_found_conflicts_and_timeouts_are_tool_errors_with_the_cli_s_messages(mcli, board):
    taken = mcli.post("--ps-id", board, "--entry-id", "e-1")["signal_id"]
    mcli.ok("claim", taken, "--agent", "ps-analyst")
    waiting = mcli.post("--ps-id", board, "--entry-id", "e-2")["signal_id"]
    async with served(mcli, "--agent", AGENT) as server:
        text, details = await server.refused("blackboard_show", signal_id="sig-00000000")
        assert (text, details["family"]) == ("no signal sig-00000000", "not_found")
        text, details = await server.refused("blackboard_claim", signal_id=taken)
        assert "CLAIMED by ps-analyst" in text and details["exit_code"] == 3
        text, details = await server.refused("blackboard_complete", signal_id=taken)
        assert details["family"] == "refused", text
        text, _ = await server.refused("blackboard_show", signal_id=taken, blackboard_id="elsewhere")
        assert text == f"no signal {taken} on blackboard elsewhere"
        result = await server.raw("blackboard_wait", progress=True, signal_id=waiting, timeout_seconds=2.5)
        assert (
            result.is_error
            and result.content[0].text == f"timed out after 2.5s waiting for {waiting} to finish"
        )
        assert server.progress, "no progress reported while waiting"
        text, details = await server.refused(
            "blackboard_signals", limit=10**30
        )  # past 64 bits: refused as bad input naming it, not an unexpected error (issue 27 item 2)
        assert details["exit_code"] == 2 and text.startswith("limit: ") and "\n" not in text, text
        assert (await server.call("blackboard_show", signal_id=waiting))[
            "status"
        ] == "POSTED"  # still serving


async def test_the_agent_s_claim_token_guards_its_key_permissions(mcli, board):
    sig = mcli.post("--ps-id", board, "--read-key", "brief", "--write-key", "draft/*")["signal_id"]
    mcli.ok("write", "brief", "--blackboard", board, "--author", "ps-lead", "--text", "the brief")
    async with served(mcli, "--agent", AGENT, "--blackboard", board) as server:
        await server.call("blackboard_claim", signal_id=sig)
        drafted = await server.call("blackboard_write", key="draft/intro", value="words", signal_id=sig)
        brief = await server.call("blackboard_read", key="brief", signal_id=sig)
        text, details = await server.refused("blackboard_write", key="plan", value="x", signal_id=sig)
        assert "plan" in text and details["exit_code"] == 3
        # leaving signal_id out does not escape the claim's write keys (issue 27 item 6)
        text, details = await server.refused("blackboard_write", key="plan", value="x")
        assert "not in their write keys (draft/*)" in text and details["exit_code"] == 3
        # the same agent from another process, without the server's token, is refused
        mcli(
            "write", "draft/outro", "--blackboard", board, "--author", AGENT, "--text", "x", "--signal", sig
        ).expect(3)
        await server.call("blackboard_complete", signal_id=sig)
    assert (drafted["signal_id"], brief["value"]) == (sig, "the brief")


def test_an_unknown_agent_stops_the_server_before_it_serves(mcli):
    result = mcli("mcp", "--agent", "nobody")
    assert result.expect(4).stderr.strip() == "blackboard: no agent named nobody in the registry"


def test_a_client_that_goes_away_mid_wait_ends_the_server_within_seconds(mcli, board):
    """Raw JSON-RPC on the pipes (the SDK's client would kill the process it started): closing the
    server's standard input while a 600-second wait runs ends the server, exit 0, not at the timeout."""
    sig = mcli.post("--ps-id", board)["signal_id"]
    server = start_blackboard(  # warm, from the CLI fork server: its pipes and exit are the server's
        ["--db", mcli.db_url, "--agents-dir", str(mcli.agents_dir), "mcp"],
        dict(os.environ),
        None,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for message in (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "blackboard_wait",
                    "arguments": {"signal_id": sig, "timeout_seconds": 600},
                    "_meta": {"progressToken": "wait"},
                },
            },
        ):
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1  # initialised
        heard = json.loads(server.stdout.readline())  # the wait's first progress: it is under way
        assert (heard["method"], heard["params"]["progressToken"]) == ("notifications/progress", "wait"), (
            heard
        )
        server.stdin.close()
        server.wait(timeout=30)
        stderr = server.stderr.read()
    finally:
        server.kill()
    assert server.returncode == 0 and "Traceback" not in stderr, stderr
