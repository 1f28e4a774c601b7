"""`post` without jargon (issue 34 item 9), through the real `blackboard` executable, the Python API and a real
`blackboard mcp` process, on SQLite and PostgreSQL: no `--ps-id`, `--entry-id` or `--type` is needed when a
board and a capability say it all. The PS id is the board; the entry the board's next `e-N`, past its
highest (so no other signal of the board has it, racing posts included); the type RESEARCH. An unknown
`--type` is refused with a hint to use `--capability`, and a post naming no board with a hint to name one,
nothing written.
"""

from __future__ import annotations

import asyncio

import pytest

from blackboard import Blackboard
from tests.e2e.conftest import Cli, assert_signal, assert_signals, cli_with_agents
from tests.e2e.mcp_client import served

QUICK = "---\nname: ps-quick\ncapabilities: {RESEARCH: 0.95}\ncommand: echo done\n---\nQuick.\n"
SQL = "---\nname: sql-tuner\ncapabilities: {SQL: 0.9}\n---\nNo handler.\n"


@pytest.fixture(params=["sqlite", "postgresql"])
def ncli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    agents = {"ps-quick.md": QUICK, "sql-tuner.md": SQL}
    return cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "post-defaults", agents)


def post(cli: Cli, *args: str) -> str:
    return assert_signal(cli.ok("post", "--blackboard", "ps-h", "--topic", "a topic", *args))["signal_id"]


def test_a_post_with_a_board_and_a_capability_needs_no_type_ps_id_or_entry_id(ncli):
    first = assert_signal(ncli.ok("post", "--capability", "SQL", "--blackboard", "ps-p", "--topic", "slow"))
    second = assert_signal(ncli.ok("post", "--type", "REVIEW", "--blackboard", "ps-p", "--topic", "read it"))
    own = assert_signal(ncli.ok("post", "--ps-id", "ps-q", "--type", "REVIEW", "--topic", "as before"))

    assert (first["signal_type"], first["target_capabilities"]) == ("RESEARCH", ["SQL"])
    assert [s["payload"]["ps_id"] for s in (first, second)] == ["ps-p", "ps-p"]
    assert [s["payload"]["entry_id"] for s in (first, second)] == ["e-1", "e-2"]
    assert (own["blackboard_id"], own["payload"]["entry_id"]) == ("ps-q", "e-1")  # each board counts its own
    kept = ncli.ok(
        "post", "--capability", "SQL", "--blackboard", "ps-p", "--topic", "t", "--entry-id", "e-40"
    )
    assert kept["payload"]["entry_id"] == "e-40"
    ncli.ok("claim", first["signal_id"], "--agent", "sql-tuner")
    ncli.ok("fail", first["signal_id"], "--agent", "sql-tuner", "--error", "no index helps")
    retried = ncli.ok("retry", first["signal_id"])  # the same work: its entry id kept
    after = ncli.ok("post", "--capability", "SQL", "--blackboard", "ps-p", "--topic", "t")

    assert retried["payload"]["entry_id"] == "e-1"
    assert after["payload"]["entry_id"] == "e-41"  # past the board's highest e-N, given ones too


def test_an_unknown_type_or_a_post_naming_no_board_is_refused_saying_what_to_give_and_writes_nothing(ncli):
    post(ncli, "--type", "RESEARCH")
    before = len(ncli.ok("events", "--all"))

    summary = ncli("post", "--type", "SUMMARY", "--blackboard", "ps-h", "--topic", "t").expect(2).stderr
    nowhere = ncli("post", "--type", "RESEARCH", "--topic", "t").expect(2).stderr
    untyped = ncli("post", "--blackboard", "ps-h", "--topic", "t").expect(2).stderr

    assert (
        summary.startswith("blackboard: --type: Input should be 'RESEARCH'") and "(got 'SUMMARY')" in summary
    )
    assert "give it as a capability (--capability SUMMARY) and leave the type out" in summary
    assert "--ps-id: Field required" in nowhere and "name the board (--blackboard)" in nowhere
    assert "--type: Field required" in untyped and "a capability (--capability)" in untyped
    assert len(ncli.ok("events", "--all")) == before


def test_posts_racing_on_one_board_each_take_their_own_next_entry_id(ncli):
    racing = ncli.many(
        {
            f"post-{n}": (
                ("--json", "post", "--capability", "SQL", "--blackboard", "ps-r", "--topic", "t"),
                None,
            )
            for n in range(8)
        }
    )
    posted = assert_signals([future.result().expect(0).json() for future in racing.values()])

    assert sorted(s["payload"]["entry_id"] for s in posted) == sorted(f"e-{n}" for n in range(1, 9))


def test_the_python_api_and_the_mcp_post_tool_take_the_same_defaults(ncli):
    with Blackboard(ncli.db_url, agents_dir=ncli.agents_dir) as board:
        api = board.post(topic="from python", capabilities=["SQL"], blackboard_id="ps-m")
        positional = board.post("REVIEW", "ps-m", "e-9", "as before")

    async def through_mcp() -> tuple[dict, str]:
        async with served(ncli) as server:
            made = await server.call(
                "blackboard_post_signal", topic="from mcp", capabilities=["SQL"], blackboard_id="ps-m"
            )
            text, _ = await server.refused(
                "blackboard_post_signal", topic="t", signal_type="SUMMARY", ps_id="x"
            )
            return made, text

    mcp, refused = asyncio.run(through_mcp())

    assert (api.signal_type, api.payload.ps_id, api.payload.entry_id) == ("RESEARCH", "ps-m", "e-1")
    assert (positional.signal_type, positional.payload.entry_id) == ("REVIEW", "e-9")
    assert (mcp["signal_type"], mcp["payload"]["ps_id"], mcp["payload"]["entry_id"]) == (
        "RESEARCH",
        "ps-m",
        "e-10",  # past the e-9 the positional post gave
    )
    assert 'give it as a capability (capabilities ["SUMMARY"])' in refused, refused
