"""Flows through the other interfaces (docs/flows.md), on SQLite and PostgreSQL: a person's MCP server runs a
flow and shows it as the CLI does (an agent's server does not offer the tools), and the Python API runs, waits
for, cancels and retries flows with the CLI's documents."""

from __future__ import annotations

import pytest

from blackboard import Blackboard, InvalidInput, NotFound, Refused, TimedOut
from tests.e2e.conftest import Cli, cli_with_agents
from tests.e2e.mcp_client import served
from tests.e2e.test_cli_flows import AGENTS, FLOW, steps

FLOW_OBJECT = {
    "name": "small",
    "steps": [
        {"id": "read", "capability": "DOC_READ", "topic": "read it"},
        {"id": "ok", "gate": True, "topic": "looks right?", "after": ["read"]},
    ],
}


@pytest.fixture(params=["sqlite", "postgresql"])
def icli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    made = cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "flow-faces", AGENTS)
    (tmp_path / "pages.md").write_text(FLOW, encoding="utf-8")
    made.ok("events", "--limit", "1")
    return made


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_person_s_mcp_server_runs_a_flow_and_shows_it_as_the_cli_does(icli):
    async with served(icli, "--blackboard", "docs") as server:
        listed = {tool.name for tool in (await server.session.list_tools()).tools}
        from_file = await server.call("blackboard_flow_run", file="pages.md", flow_id="by-file")
        from_object = await server.call("blackboard_flow_run", flow=FLOW_OBJECT, flow_id="by-object")
        shown = await server.call("blackboard_flow_status", flow_id="by-object")
        text, bad = await server.refused(
            "blackboard_flow_run",
            flow={**FLOW_OBJECT, "steps": [{**FLOW_OBJECT["steps"][1], "after": ["x"]}]},
        )
        _, both = await server.refused("blackboard_flow_run", flow=FLOW_OBJECT, file="pages.md")
        _, taken = await server.refused("blackboard_flow_run", flow=FLOW_OBJECT, flow_id="by-object")
        _, waited = await server.refused("blackboard_flow_status", flow_id="by-object", timeout_seconds=0.5)
        _, missing = await server.refused("blackboard_flow_status", flow_id="nope")
    async with served(icli, "--agent", "doc-reader") as agent_server:
        offered = {tool.name for tool in (await agent_server.session.list_tools()).tools}

    assert {"blackboard_flow_run", "blackboard_flow_status"} <= listed
    assert not {"blackboard_flow_run", "blackboard_flow_status"} & offered  # an agent's list is at its cap
    assert from_file == icli.ok("flow", "status", "by-file", "--blackboard", "docs")
    assert shown == from_object == icli.ok("flow", "status", "by-object", "--blackboard", "docs")
    assert [s["step_id"] for s in shown["steps"]] == ["read", "ok"] and shown["steps"][1]["signal"]["gate"]
    assert bad["exit_code"] == 2 and "steps[0].after: x is not a step above this one" in text
    assert (both["exit_code"], taken["exit_code"], waited["exit_code"], missing["exit_code"]) == (2, 3, 5, 4)
    assert len(icli.ok("signals", "--all")) == 6  # the refusals wrote nothing


def test_the_python_api_runs_waits_for_cancels_and_retries_flows_with_the_cli_s_documents(icli, tmp_path):
    with Blackboard(icli.db_url, agents_dir=icli.agents_dir) as bb:
        ran = bb.flow_run(tmp_path / "pages.md", blackboard_id="docs", flow_id="api-1")
        assert ran.model_dump(mode="json") == icli.ok("flow", "status", "api-1", "--blackboard", "docs")
        with pytest.raises(InvalidInput, match=r"steps\[0\]\.topic"):
            bb.flow_run({**FLOW_OBJECT, "steps": [{"id": "a", "capability": "X"}]}, blackboard_id="docs")
        with pytest.raises(Refused, match="already on blackboard docs"):
            bb.flow_run(tmp_path / "pages.md", blackboard_id="docs", flow_id="api-1")
        with pytest.raises(TimedOut, match="flow api-1 to end"):
            bb.flow_status("api-1", blackboard_id="docs", wait=True, timeout=0.5)

        icli("worker", "--agent", "doc-reader", "--board", "docs", "--once").expect(0)
        icli("worker", "--agent", "doc-planner", "--board", "docs", "--once").expect(0)
        gate = steps(bb.flow_status("api-1", blackboard_id="docs").model_dump())["approve"]["signal_id"]
        bb.reject(gate, by="bob", reason="too long")
        ended = bb.flow_status("api-1", blackboard_id="docs", wait=True, timeout=30)
        retried = bb.retry_flow("api-1", blackboard_id="docs")
        small = bb.flow_run(FLOW_OBJECT, blackboard_id="docs")
        cancelled = bb.cancel_flow(small.flow_id, blackboard_id="docs", reason="not now", by="alice")
        with pytest.raises(NotFound):
            bb.flow_status("api-9", blackboard_id="docs")

    assert (ended.state, ended.by_status) == ("failed", {"COMPLETED": 2, "FAILED": 1, "EXPIRED": 1})
    assert [s.step_id for s in retried] == ["approve", "write"] and retried[0].gate
    assert [(s.status, s.flow_id) for s in cancelled] == [("CANCELLED", small.flow_id)] * 2
    assert small.flow_id.startswith("small-") and len(small.flow_id) == len("small-") + 8
    assert icli.ok("flow", "status", small.flow_id, "--blackboard", "docs")["state"] == "cancelled"
