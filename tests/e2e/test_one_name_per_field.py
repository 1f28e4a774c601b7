"""One public name per field (docs/cli.md, "Names and aliases"), through the real CLI, MCP server and Python API
on SQLite and PostgreSQL: each field's one name works on all three, each former name still works with the same
meaning, one field by two names is refused naming both with nothing written, and help shows only the one name."""

from __future__ import annotations

import pytest

from blackboard import Blackboard, InvalidInput
from tests.e2e.conftest import Cli, database_url
from tests.e2e.mcp_client import served

AGENT = "ps-researcher"  # of the default agents folder: fits RESEARCH


@pytest.fixture(params=["sqlite", "postgresql"])
def ncli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    made = make_cli(database_url(request, tmp_path_factory, "names"), tmp_path)
    made.ok("events", "--limit", "1")
    return made


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def post(cli: Cli, entry: str, *args: str) -> dict:
    return cli.post(*args, ps="ps-n", entry=entry)


def test_the_cli_takes_each_field_by_its_one_name_and_by_its_former_one(ncli):
    by_name = post(ncli, "e-1", "--timeout-s", "2h", "--key", "k-1")
    by_former = post(ncli, "e-2", "--timeout", "90s")
    refused = ncli(
        "post",
        "--blackboard",
        "ps-n",
        "--capability",
        "X",
        "--topic",
        "t",
        "--timeout",
        "1h",
        "--timeout-s",
        "2h",
    ).expect(2)
    bad_former = ncli("post", "--blackboard", "ps-n", "--topic", "t", "--timeout", "0").expect(2)
    bad_name = ncli("post", "--blackboard", "ps-n", "--topic", "t", "--timeout-s", "0").expect(2)

    assert (by_name["timeout_s"], by_name["dedupe_key"], by_former["timeout_s"]) == (7200, "k-1", 90)
    assert "--timeout-s: give --timeout or --timeout-s, not both" in refused.stderr
    # an error about the value names the option as the user typed it
    assert bad_former.stderr.startswith("blackboard: --timeout: must be above 0")
    assert bad_name.stderr.startswith("blackboard: --timeout-s: must be above 0")
    assert len(ncli.ok("signals", "--all")) == 2  # the refusals wrote nothing


def test_complete_takes_artifact_path_and_knowledge_item_and_their_former_names(ncli, tmp_path):
    (tmp_path / "notes.md").write_text("found", encoding="utf-8")
    first, second = post(ncli, "e-1")["signal_id"], post(ncli, "e-2")["signal_id"]
    for signal in (first, second):
        ncli.ok("claim", signal, "--agent", AGENT)
    mixed = ncli("complete", first, "--agent", AGENT, "--knowledge", "a", "--knowledge-item", "b").expect(2)
    by_name = ncli.ok(
        "complete",
        first,
        "--agent",
        AGENT,
        "--artifact-path",
        "notes.md",
        "--knowledge-item",
        "a",
        "--knowledge-item",
        "b",
    )
    by_former = ncli.ok(
        "complete", second, "--agent", AGENT, "--artifact", "notes.md", "--knowledge", "a", "--knowledge", "b"
    )

    assert "--knowledge-item: give --knowledge or --knowledge-item, not both" in mixed.stderr
    for done in (by_name, by_former):
        assert done["status"] == "COMPLETED"
        assert (done["result"]["artifact_path"], done["result"]["knowledge_items"]) == (
            "notes.md",
            ["a", "b"],
        )


def test_help_shows_each_field_by_its_one_name_only(ncli):
    post_help = ncli("post", "--help").expect(0).stdout
    complete_help = ncli("complete", "--help").expect(0).stdout
    mistyped = ncli("post", "--topic", "t", "--timout", "1").expect(2)

    assert "--timeout-s DURATION" in post_help and "--timeout " not in post_help
    assert "--artifact-path PATH" in complete_help and "--knowledge-item TEXT" in complete_help
    assert "--artifact " not in complete_help and "--knowledge " not in complete_help
    assert "did you mean --timeout-s?" in mistyped.stderr  # a former name is accepted, never suggested


@pytest.mark.anyio
async def test_the_mcp_tools_take_each_field_by_its_one_name_and_by_its_former_one(ncli):
    async with served(ncli, "--blackboard", "ps-m") as server:
        tools = {tool.name: tool.input_schema for tool in (await server.session.list_tools()).tools}
        by_name = await server.call(
            "blackboard_post_signal", topic="a", capabilities=["RESEARCH"], key="k", timeout_s=60
        )
        by_former = await server.call(
            "blackboard_post_signal", topic="b", capabilities=["RESEARCH"], dedupe_key="k2", gate_timeout=120
        )
        _, both = await server.refused(
            "blackboard_post_signal", topic="c", capabilities=["RESEARCH"], key="k3", dedupe_key="k3"
        )
        cancelled = await server.call("blackboard_cancel", signal_id=by_name["signal_id"], by="alice")
        cancelled_former = await server.call(
            "blackboard_cancel", signal_id=by_former["signal_id"], cancelled_by="bob"
        )
        budget = await server.call("blackboard_budget", usd=5, by="carol")
        budget_former = await server.call("blackboard_budget", usd=6, set_by="dan")

    assert (by_name["dedupe_key"], by_name["timeout_s"]) == ("k", 60)
    assert (by_former["dedupe_key"], by_former["timeout_s"]) == ("k2", 120)
    assert both["exit_code"] == 2
    assert (cancelled["decided_by"], cancelled_former["decided_by"]) == ("alice", "bob")
    assert (budget["usd"], budget_former["usd"]) == (5, 6)
    setters = [e["data"]["set_by"] for e in ncli.ok("events", "--all") if e["event_type"] == "BoardBudgetSet"]
    assert setters == ["carol", "dan"]
    # the schemas show the one name alone
    assert {"by"} <= set(tools["blackboard_cancel"]["properties"]) and "cancelled_by" not in str(tools)
    assert "set_by" not in str(tools) and "gate_timeout" not in str(tools)
    assert len(ncli.ok("signals", "--all")) == 2  # the refused post wrote nothing


def test_the_python_api_takes_each_field_by_its_one_name_and_by_its_former_one(ncli):
    with Blackboard(ncli.db_url, agents_dir=ncli.agents_dir) as bb:
        by_name = bb.post(topic="a", blackboard_id="ps-p", capabilities=["RESEARCH"], key="k", timeout_s="2h")
        again = bb.post(topic="a", blackboard_id="ps-p", capabilities=["RESEARCH"], dedupe_key="k")
        by_former = bb.post(topic="b", blackboard_id="ps-p", capabilities=["RESEARCH"], timeout="90s")
        older = bb.post(
            topic="c", blackboard_id="ps-p", capabilities=["RESEARCH"], gate=True, gate_timeout=60
        )
        with pytest.raises(InvalidInput, match="^timeout_s: give timeout_s or timeout, not both"):
            bb.post(topic="d", blackboard_id="ps-p", capabilities=["RESEARCH"], timeout_s=1, timeout=2)
        with pytest.raises(TypeError, match="unexpected keyword argument 'timeout_secs'"):
            bb.post(topic="d", blackboard_id="ps-p", capabilities=["RESEARCH"], timeout_secs=1)
        with pytest.raises(InvalidInput, match="^timeout_s: "):
            bb.post(topic="d", blackboard_id="ps-p", capabilities=["RESEARCH"], timeout="never")

    assert (by_name.dedupe_key, by_name.timeout_s) == ("k", 7200)
    assert again.signal_id == by_name.signal_id  # the same key: the first signal
    assert (by_former.timeout_s, older.timeout_s) == (90, 60)
    assert len(ncli.ok("signals", "--all")) == 3  # the refusals wrote nothing
