"""`blackboard mcp --agent NAME --signal SIG`: the session a runner's run gets, bound to one claim, driven by
the MCP SDK's own stdio client against a real server (SQLite file and PostgreSQL). It offers no claim,
complete or fail; writes and reads act under the signal and its key permissions; every call is refused once
the claim is over; the token comes from the environment only."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import Cli, database_url
from tests.e2e.mcp_client import served

pytestmark = pytest.mark.anyio
AGENT = "ps-researcher"
TOKEN = "tok-bound-1"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def mcli(request, make_cli, tmp_path_factory) -> Iterator[Cli]:
    url = database_url(request, tmp_path_factory, "mcp-bound")
    made = make_cli(url, tmp_path_factory.mktemp("cwd"))
    made.ok("events", "--limit", "1")
    yield made
    made.close()


@pytest.fixture
def claimed(mcli) -> str:
    board = f"bound-{uuid.uuid4().hex[:8]}"
    sig = mcli.post("--ps-id", board, "--read-key", "notes/*", "--write-key", "notes/*")["signal_id"]
    mcli.ok("claim", sig, "--agent", AGENT, "--token", TOKEN)
    return sig


async def test_a_bound_session_works_on_its_claim_only_and_offers_no_way_to_end_it(mcli, claimed):
    async with served(
        mcli, "--agent", AGENT, "--signal", claimed, env={"BLACKBOARD_CLAIM_TOKEN": TOKEN}
    ) as server:
        tools = {t.name for t in (await server.session.list_tools()).tools}
        written = await server.call("blackboard_write", key="notes/a", value="inside")
        read = await server.call("blackboard_read", key="notes/a")
        outside, details = await server.refused("blackboard_write", key="secret", value="x")
        other, _ = await server.refused(
            "blackboard_write", key="notes/b", value="x", signal_id="sig-00000000"
        )
        summary = await server.call("blackboard_summary")

    assert not tools & {"blackboard_claim", "blackboard_complete", "blackboard_fail"}
    assert {"blackboard_write", "blackboard_read", "blackboard_post_signal"} <= tools
    assert (written["signal_id"], written["author"], read["value"]) == (claimed, AGENT, "inside")
    assert "not in its write keys" in outside and details["exit_code"] == 3
    assert other == f"this session works on {claimed} only, not on sig-00000000"
    assert summary["signals_by_status"] == {"CLAIMED": 1}  # the signal's board is the default board


async def test_once_the_claim_is_over_every_call_is_refused_and_nothing_is_recorded(mcli, claimed):
    async with served(
        mcli, "--agent", AGENT, "--signal", claimed, env={"BLACKBOARD_CLAIM_TOKEN": TOKEN}
    ) as server:
        await server.call("blackboard_write", key="notes/before", value="in time")
        mcli.ok("fail", claimed, "--agent", AGENT, "--token", TOKEN, "--error", "run stopped")
        refused, details = await server.refused("blackboard_write", key="notes/after", value="too late")
        posted, _ = await server.refused(
            "blackboard_post_signal",
            signal_type="RESEARCH",
            ps_id="x",
            entry_id="e-1",
            topic="late follow-up",
        )

    expected = (
        f"this session was bound to the claim on {claimed}, "
        "which is over (it is FAILED): nothing more is recorded"
    )
    assert refused == expected and posted == expected and details["exit_code"] == 3
    board = mcli.ok("show", claimed)["blackboard_id"]
    keys = [e["key"] for e in mcli.ok("entries", "--blackboard", board)]
    assert keys == ["notes/before"]
    mcli("signals", "--blackboard", "x").expect(4)  # no such board: the late post made none


async def test_a_session_bound_with_another_token_is_refused(mcli, claimed):
    async with served(
        mcli, "--agent", AGENT, "--signal", claimed, env={"BLACKBOARD_CLAIM_TOKEN": "forged"}
    ) as server:
        refused, _ = await server.refused("blackboard_write", key="notes/a", value="x")

    assert refused.endswith("(it is held by another claim now): nothing more is recorded")


async def test_a_session_acts_only_under_the_very_claim_its_token_names(mcli):
    """A run's session holds the claim its token names, exactly (AgentSignal.held_by_claim): the same agent's
    claim taken without a token (a person's `claim`, or a new claim after the run's lapsed) is not the run's,
    whatever token the session presents, so a stale run cannot act under it."""
    board = f"bound-{uuid.uuid4().hex[:8]}"
    sig = mcli.post("--ps-id", board, "--read-key", "notes/*", "--write-key", "notes/*")["signal_id"]
    mcli.ok("claim", sig, "--agent", AGENT)  # no --token
    async with served(
        mcli, "--agent", AGENT, "--signal", sig, env={"BLACKBOARD_CLAIM_TOKEN": "an-old-claim-s"}
    ) as server:
        refused, _ = await server.refused("blackboard_write", key="notes/a", value="inside")

    assert "held by another claim" in refused


def test_signal_needs_the_agent_and_the_token_in_the_environment(mcli, claimed):
    without_agent = mcli("mcp", "--signal", claimed).expect(2)
    without_token = mcli("mcp", "--agent", AGENT, "--signal", claimed).expect(2)

    assert "--signal: goes with --agent" in without_agent.stderr
    assert (
        "--signal: needs the claim's token in the environment variable BLACKBOARD_CLAIM_TOKEN"
        in without_token.stderr
    )


async def test_a_bound_session_may_not_decide_set_limits_or_post_as_another(mcli, claimed):
    """A run's session is its run (docs/permissions.md): a person's tools are refused by the table in its words,
    and a post names its agent as the poster, whatever the call says."""
    gate = mcli.post("--gate", "--ps-id", "bound-gates", "--type", "DECISION")["signal_id"]
    async with served(
        mcli, "--agent", AGENT, "--signal", claimed, env={"BLACKBOARD_CLAIM_TOKEN": TOKEN}
    ) as server:
        approve, details = await server.refused("blackboard_approve", signal_id=gate, by="me")
        budget, _ = await server.refused("blackboard_budget", blackboard_id="bound-gates", usd=1000)
        posted = await server.call(
            "blackboard_post_signal", signal_type="REVIEW", ps_id="bound-gates", entry_id="e-2", topic="next"
        )

    run = f"agent {AGENT}'s session bound to {claimed}"
    assert approve == f"{run} may not approve a gate: only a person decides"
    assert (details["family"], details["exit_code"]) == ("refused", 3)
    assert budget == f"{run} may not set a board's budget: only a person sets a board's limits"
    assert posted["posted_by"] == AGENT
    assert mcli.ok("show", gate)["status"] == "POSTED"
    assert mcli.ok("budget", "bound-gates")["usd"] is None


async def test_a_bound_session_searches_its_run_s_board_and_no_other(mcli, claimed):
    """Issue 34, item 5: a run's session offers blackboard_search, scoped to its signal's board: it names no
    board (an argument naming one is refused). A server started with --blackboard naming another board is
    confined there (issue 33, item 3), so every call of its bound session is a tool error that says so."""
    board = mcli.ok("show", claimed)["blackboard_id"]
    mcli.ok("write", "notes/cache", "--blackboard", board, "--author", "me", "--value", '"an LRU cache"')
    mcli.ok(
        "write", "notes/cache", "--blackboard", f"{board}-x", "--author", "me", "--value", '"an LRU cache"'
    )
    bound = ("--agent", AGENT, "--signal", claimed)
    async with served(mcli, *bound, env={"BLACKBOARD_CLAIM_TOKEN": TOKEN}) as server:
        listed = {t.name: t.input_schema for t in (await server.session.list_tools()).tools}
        hits = await server.call("blackboard_search", text="lru CACHE")
        refused, details = await server.refused("blackboard_search", text="cache", blackboard_id=f"{board}-x")
    async with served(
        mcli, *bound, "--blackboard", f"{board}-x", env={"BLACKBOARD_CLAIM_TOKEN": TOKEN}
    ) as server:
        elsewhere, other = await server.refused("blackboard_search", text="lru CACHE")

    assert "blackboard_id" not in listed["blackboard_search"]["properties"]
    assert [(h["blackboard_id"], h["key"]) for h in hits] == [(board, "notes/cache")]
    assert refused.startswith("blackboard_id: Extra inputs are not permitted") and details["exit_code"] == 2
    assert f"--blackboard: the session works on {claimed}, a signal of another board" in elsewhere
    assert other["exit_code"] == 2
