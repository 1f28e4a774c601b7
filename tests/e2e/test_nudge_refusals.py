"""`blackboard nudge` refused (docs/agents.md, "Nudges"; docs/permissions.md): a signal not CLAIMED, a run that
cannot take input (a command handler run by a real worker), and an agent (its run, through the real CLI; its
MCP server; a session bound to a claim) are refused with exit 3 and the reason, nothing written; on a SQLite
file and on PostgreSQL, through the CLI, the MCP person's server and the Python API."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import pytest

from blackboard import Blackboard, Refused
from tests.cli_server import blackboard_command
from tests.e2e.conftest import Cli, database_url, write_agents
from tests.e2e.mcp_client import served
from tests.waiting import wait_until

# The handler nudges its own signal through the real CLI (a run may not), says what it was told, and waits
# for the test to let it finish: meanwhile its signal is CLAIMED by a run that takes no input.
HANDLER = """
import json, pathlib, subprocess, sys, time
document = json.load(sys.stdin)
aim = document["payload"]["context"]
done = subprocess.run(
    [%(warm)r, "nudge", document["signal_id"], "from the run itself", "--by", "me"], capture_output=True, text=True
)
pathlib.Path(aim["said"]).write_text(json.dumps([done.returncode, done.stderr.strip()]))
while not pathlib.Path(aim["release"]).exists():
    time.sleep(0.05)
print("done")
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def ncli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    url = database_url(request, tmp_path_factory, "nudge")
    script = tmp_path / "handler.py"
    script.write_text(HANDLER % {"warm": blackboard_command()}, encoding="utf-8")
    command = f"{sys.executable} {script}"
    handler = f"---\nname: ps-handler\ncapabilities: {{RESEARCH: 0.95}}\ncommand: {command}\n---\nWaits.\n"
    made = make_cli(url, tmp_path, write_agents(tmp_path / "agents", {"ps-handler.md": handler}))
    yield made
    made.close()


def positions(cli: Cli) -> set[int]:
    return {e["position"] for e in cli.ok("events", "--all")}


def test_a_nudge_to_a_signal_not_claimed_or_to_a_handler_s_run_is_refused_with_the_reason(ncli, tmp_path):
    said, release = tmp_path / "said.json", tmp_path / "release"
    context = json.dumps({"said": str(said), "release": str(release)})
    running = ncli.post("--context", context, ps="ps-n", entry="e-1")["signal_id"]
    worker = ncli.start("worker", "--agent", "ps-handler", "--once")
    wait_until(said.exists, 60, "the handler to try its nudge")
    wait_until(lambda: ncli.ok("show", running)["status"] == "CLAIMED", 30, "the claim")
    posted = ncli.post("--gate", ps="ps-n", entry="e-3", type="DECISION")["signal_id"]  # no agent claims it
    before = positions(ncli)

    handler_run = ncli("nudge", running, "start with the tests", "--by", "alice").expect(3)
    not_claimed = ncli("nudge", posted, "start with the tests", "--by", "alice").expect(3)
    empty = ncli("nudge", running, "", "--by", "alice").expect(2)
    with Blackboard(ncli.db_url, agents_dir=ncli.agents_dir) as bb:
        with pytest.raises(Refused, match="whose run cannot take a nudge"):
            bb.nudge(running, "start with the tests", by="alice")
    after_refusals = positions(ncli)
    release.touch()
    ncli.finish(worker).expect(0)
    finished = ncli("nudge", running, "too late", "--by", "alice").expect(3)

    assert handler_run.stderr.strip() == (
        f"blackboard: {running} is CLAIMED by ps-handler, whose run cannot take a nudge: it is no runner's run (a "
        "command or entrypoint handler, or a claim taken by hand), so nothing reads input while it runs; only a "
        "run of the claude-code, anthropic or openai runner takes one"
    )
    assert not_claimed.stderr.strip() == (
        f"blackboard: {posted} is POSTED; only CLAIMED signals can be nudged (a nudge reaches a running agent)"
    )
    assert empty.stderr.strip().startswith("blackboard: TEXT: ")
    assert finished.stderr.strip() == (
        f"blackboard: {running} is COMPLETED; only CLAIMED signals can be nudged (a nudge reaches a running agent)"
    )
    code, stderr = json.loads(said.read_text(encoding="utf-8"))
    assert (code, stderr) == (
        3,
        f"blackboard: agent ps-handler's run of {running} may not nudge a running agent: a person steers a "
        "run; an agent's work is its own",
    )
    assert after_refusals == before  # nothing written by any refusal
    assert not [e for e in ncli.ok("events", "--all") if e["event_type"] == "AgentSignalNudged"]


def test_an_agent_s_mcp_server_and_a_bound_session_are_refused_and_a_person_s_server_says_why(ncli):
    claimed = ncli.post(ps="ps-m", entry="e-1")["signal_id"]
    ncli.ok("claim", claimed, "--agent", "ps-handler", "--token", "tok-1")  # by hand: takes no nudge
    before = positions(ncli)

    async def calls() -> dict[str, tuple[str, dict[str, Any]]]:
        refused: dict[str, tuple[str, dict[str, Any]]] = {}
        arguments = {"signal_id": claimed, "text": "hurry", "by": "alice"}
        async with served(ncli) as person:
            refused["person"] = await person.refused("blackboard_nudge", **arguments)
            listed = {tool.name for tool in (await person.session.list_tools()).tools}
        async with served(ncli, "--agent", "ps-handler") as agent:
            refused["agent"] = await agent.refused("blackboard_nudge", **arguments)
            assert "blackboard_nudge" not in {tool.name for tool in (await agent.session.list_tools()).tools}
        async with served(
            ncli, "--agent", "ps-handler", "--signal", claimed, env={"BLACKBOARD_CLAIM_TOKEN": "tok-1"}
        ) as bound:
            refused["bound"] = await bound.refused("blackboard_nudge", **arguments)
        assert "blackboard_nudge" in listed
        return refused

    refused = anyio.run(calls)

    text, details = refused["person"]
    assert text.startswith(f"{claimed} is CLAIMED by ps-handler, whose run cannot take a nudge")
    assert (details["family"], details["exit_code"]) == ("refused", 3)
    why = "may not nudge a running agent: a person steers a run; an agent's work is its own"
    assert refused["agent"][0] == f"agent ps-handler's MCP server {why}"
    assert refused["bound"][0] == f"agent ps-handler's session bound to {claimed} {why}"
    assert all(details["exit_code"] == 3 for _, details in refused.values())
    assert positions(ncli) == before


def test_the_python_api_refuses_an_agent_s_run(ncli, monkeypatch):
    """A `Blackboard` inside an agent's run is that run (docs/python-api.md): its nudge is refused."""
    claimed = ncli.post(ps="ps-p", entry="e-1")["signal_id"]
    ncli.ok("claim", claimed, "--agent", "ps-handler", "--token", "tok-1")
    for name, value in {
        "BLACKBOARD_AGENT": "ps-handler",
        "BLACKBOARD_SIGNAL_ID": claimed,
        "BLACKBOARD_CLAIM_TOKEN": "tok-1",
        "BLACKBOARD_BOARD": "ps-p",
    }.items():
        monkeypatch.setenv(name, value)
    with Blackboard(ncli.db_url, agents_dir=ncli.agents_dir) as bb:
        with pytest.raises(
            Refused, match=f"agent ps-handler's run of {claimed} may not nudge a running agent"
        ):
            bb.nudge(claimed, "hurry", by="alice")
