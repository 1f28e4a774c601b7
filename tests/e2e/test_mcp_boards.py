"""The boards a `blackboard mcp` server reaches (docs/mcp.md, "Boards"; docs/permissions.md, "The boards a
caller reaches"), driven by the MCP SDK's own stdio client against real server processes (a SQLite file and
PostgreSQL): a person's server started with `--confine`, an agent's server started with `--blackboard` and a
session bound to a claim refuse, as a tool error of the refused family (exit code 3), every call that names
another board or a signal of another board, and write nothing there; without them a server reaches every board.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Cli, database_url
from tests.e2e.mcp_client import Served, served

pytestmark = pytest.mark.anyio
AGENT = "ps-researcher"
TOKEN = "tok-boards-1"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def mcli(request, make_cli, tmp_path_factory) -> Iterator[Cli]:
    url = database_url(request, tmp_path_factory, "mcp-boards")
    made = make_cli(url, tmp_path_factory.mktemp("cwd"))
    made.ok("events", "--limit", "1")  # the schema exists before servers start
    yield made
    made.close()


class Boards:
    """Two boards: `mine`, the one a server is confined to, and `other`, with a signal, a gate, an entry."""

    def __init__(self, cli: Cli) -> None:
        tag = uuid.uuid4().hex[:8]
        self.cli, self.mine, self.other = cli, f"mine-{tag}", f"other-{tag}"
        self.mine_signal = cli.post("--blackboard", self.mine, ps=self.mine)["signal_id"]
        self.signal = cli.post("--blackboard", self.other, ps=self.other)["signal_id"]
        self.gate = cli.post("--gate", "--blackboard", self.other, type="DECISION", ps=self.other)[
            "signal_id"
        ]
        cli.ok("write", "notes/a", "--blackboard", self.other, "--author", "alice", "--value", '"x"')

    def log(self) -> list[Any]:
        """Every event of the other board, as the CLI reads it."""
        return self.cli.ok("events", "--blackboard", self.other, "--since", "0")


@pytest.fixture
def boards(mcli) -> Boards:
    return Boards(mcli)


def reaching(b: Boards, person: bool) -> list[tuple[str, dict[str, Any]]]:
    """A call of every tool that names a board or a signal, naming the other board or its signals."""
    other, sig = b.other, b.signal
    who = {"author": "alice"} if person else {}
    calls = [
        (
            "blackboard_post_signal",
            {
                "blackboard_id": other,
                "signal_type": "RESEARCH",
                "ps_id": other,
                "entry_id": "e-9",
                "topic": "t",
            },
        ),
        ("blackboard_show", {"signal_id": sig}),
        ("blackboard_show", {"signal_id": sig, "blackboard_id": other}),
        ("blackboard_signals", {"blackboard_id": other}),
        ("blackboard_match", {"signal_id": sig}),
        ("blackboard_wait", {"signal_id": sig, "timeout_seconds": 1}),
        ("blackboard_cancel", {"signal_id": sig}),
        ("blackboard_cancel_all", {"blackboard_id": other}),
        ("blackboard_write", {"blackboard_id": other, "key": "notes/b", "value": "y", **who}),
        ("blackboard_read", {"blackboard_id": other, "key": "notes/a"}),
        ("blackboard_list", {"blackboard_id": other}),
        (
            "blackboard_resolve",
            {"blackboard_id": other, "key": "notes/a", "rationale": "r", "value": "z", **who},
        ),
        ("blackboard_topic", {"blackboard_id": other, "action": "subscribe", "topic": "news"}),
        ("blackboard_topic", {"blackboard_id": other, "action": "poll", "topic": "news", "since": 0}),
        ("blackboard_summary", {"blackboard_id": other}),
    ]
    if person:
        calls += [
            ("blackboard_approve", {"signal_id": b.gate, "by": "alice"}),
            ("blackboard_reject", {"signal_id": b.gate, "by": "alice", "reason": "no"}),
            ("blackboard_budget", {"blackboard_id": other}),
            ("blackboard_budget", {"blackboard_id": other, "usd": 5}),
            ("blackboard_search", {"blackboard_id": other, "text": "x"}),
        ]
    else:
        calls += [
            ("blackboard_claim", {"signal_id": sig}),
            ("blackboard_claim", {"signal_id": sig, "blackboard_id": other}),
            ("blackboard_complete", {"signal_id": sig}),
            ("blackboard_fail", {"signal_id": sig, "error": "e"}),
        ]
    return calls


async def refuses_the_other_board(server: Served, b: Boards, person: bool, who: str) -> None:
    before = b.log()
    for tool, arguments in reaching(b, person):
        text, details = await server.refused(tool, **arguments)
        assert text == f"{who} may not reach board {b.other}: it is confined to board {b.mine}", (tool, text)
        assert (details["family"], details["exit_code"]) == ("refused", 3), (tool, details)
    assert b.log() == before  # nothing written there
    assert b.cli.ok("show", b.signal)["status"] == b.cli.ok("show", b.gate)["status"] == "POSTED"


async def test_a_person_s_server_confined_to_a_board_refuses_every_call_naming_another(mcli, boards):
    b = boards
    async with served(mcli, "--blackboard", b.mine, "--confine") as server:
        await refuses_the_other_board(server, b, person=True, who="a person's server")
        # its own board, as before: the default, and named
        posted = await server.call(
            "blackboard_post_signal", signal_type="RESEARCH", ps_id="anything", entry_id="e-2", topic="t"
        )
        written = await server.call(
            "blackboard_write", key="k", value=1, author="alice", blackboard_id=b.mine
        )
        shown = await server.call("blackboard_show", signal_id=b.mine_signal)
        listed = await server.call("blackboard_signals")
    assert posted["blackboard_id"] == written["blackboard_id"] == shown["blackboard_id"] == b.mine
    assert {s["blackboard_id"] for s in listed} == {b.mine}  # "every board" is its own


async def test_without_confine_a_person_s_server_reaches_every_board_its_board_the_default(mcli, boards):
    b = boards
    async with served(mcli, "--blackboard", b.mine) as server:
        shown = await server.call("blackboard_show", signal_id=b.signal, blackboard_id=b.other)
        listed = await server.call("blackboard_list", blackboard_id=b.other)
    assert shown["signal_id"] == b.signal and [e["key"] for e in listed] == ["notes/a"]


async def test_an_agent_s_server_started_with_a_board_reaches_that_board_only(mcli, boards):
    b = boards
    async with served(mcli, "--agent", AGENT, "--blackboard", b.mine) as server:
        await refuses_the_other_board(server, b, person=False, who=f"agent {AGENT}'s MCP server")
        claimed = await server.call("blackboard_claim", signal_id=b.mine_signal)
        done = await server.call("blackboard_complete", signal_id=b.mine_signal)
    assert (claimed["status"], done["status"]) == ("CLAIMED", "COMPLETED")


async def test_an_agent_s_server_without_a_board_reaches_every_board_as_its_agent(mcli, boards):
    b = boards
    async with served(mcli, "--agent", AGENT) as server:
        claimed = await server.call("blackboard_claim", signal_id=b.signal)
        written = await server.call("blackboard_write", key="notes/c", value="v", blackboard_id=b.other)
    assert (claimed["blackboard_id"], written["blackboard_id"]) == (b.other, b.other)


async def test_a_bound_session_reaches_its_signal_s_board_only(mcli, boards):
    b = boards
    mcli.ok("claim", b.mine_signal, "--agent", AGENT, "--token", TOKEN)
    async with served(
        mcli, "--agent", AGENT, "--signal", b.mine_signal, env={"BLACKBOARD_CLAIM_TOKEN": TOKEN}
    ) as server:
        before = b.log()
        who = f"agent {AGENT}'s session bound to {b.mine_signal}"
        for tool, arguments in reaching(b, person=False):
            if tool in ("blackboard_claim", "blackboard_complete", "blackboard_fail", "blackboard_cancel"):
                continue  # not offered to a bound session at all
            if tool == "blackboard_cancel_all":
                continue
            text, details = await server.refused(tool, **arguments)
            assert text == f"{who} may not reach board {b.other}: it is confined to board {b.mine}", (
                tool,
                text,
            )
            assert details["exit_code"] == 3, tool
        own = await server.call("blackboard_show", signal_id=b.mine_signal)
    assert b.log() == before and own["status"] == "CLAIMED"


def test_confine_needs_the_board_and_print_config_carries_it(mcli):
    refused = mcli("mcp", "--confine").expect(2)
    config = mcli.ok("mcp", "--print-config", "--blackboard", "team-1", "--confine")

    assert refused.stderr.startswith("blackboard: --confine: goes with --blackboard ID"), refused.stderr
    assert config["mcpServers"]["blackboard"]["args"][-4:] == ["mcp", "--blackboard", "team-1", "--confine"]
