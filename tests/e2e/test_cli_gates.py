"""Gates (docs/control.md, "Gates"): through the real CLI, a real worker and a real MCP server, on SQLite
and PostgreSQL. A gate blocks what waits on it until a person approves it; a rejection expires what waits on
it; a worker never claims a gate however well its agent fits; an agent's MCP session is refused (exit 3)."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import Cli, assert_signal, cli_with_agents
from tests.e2e.mcp_client import served
from tests.waiting import wait_until

# Fits DECISION (a gate's type below) perfectly and RESEARCH too: were gates claimable, it would take them.
DECIDER = """---
name: ps-decider
capabilities: {DECISION: 1.0, RESEARCH: 0.95}
threshold: 0.0
command: echo done
---
Would take anything.
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def gcli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    made = cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "gates", {"ps-decider.md": DECIDER})
    made.ok("events", "--limit", "1")  # the schema exists before a worker starts
    return made


def gate(cli: Cli, entry: str, *args: str, board: str = "ps-g") -> str:
    return cli.post("--gate", *args, type="DECISION", ps=board, entry=entry, topic=f"decide {entry}")[
        "signal_id"
    ]


def events_of(cli: Cli, signal_id: str) -> list[dict]:
    return [e for e in cli.ok("events", "--all") if e["data"].get("signal_id") == signal_id]


def test_a_gate_blocks_what_waits_on_it_until_a_person_approves_and_a_worker_never_claims_it(gcli):
    worker = gcli.start("worker", "--agent", "ps-decider", "--board", "ps-g")
    g = gate(gcli, "e-1")
    after = gcli.post("--after", g, ps="ps-g", entry="e-2")["signal_id"]
    plain = gcli.post(type="DECISION", ps="ps-g", entry="e-3")["signal_id"]  # the worker is at work

    wait_until(lambda: gcli.ok("show", plain)["status"] == "COMPLETED", what="the worker to do the plain one")
    assert gcli.ok("show", g)["status"] == "POSTED"
    assert gcli.ok("show", after)["waiting_for"] == [g]
    refused = gcli("claim", g, "--agent", "ps-decider").expect(3)
    assert f"{g} is a gate" in refused.stderr
    assert gcli.ok("next", "--blackboard", "ps-g")["next"] == []
    listed = gcli.ok("status", "--blackboard", "ps-g")[0]["open_gates"]
    assert [o["signal_id"] for o in listed] == [g]

    waiting = gcli.start("--json", "wait", g, "--timeout", "300")  # a wait ends with the decision
    approved = assert_signal(gcli.ok("approve", g, "--by", "alice", "--note", "numbers checked"))
    assert assert_signal(json.loads(gcli.finish(waiting).expect(0).stdout))["status"] == "COMPLETED"

    assert approved["status"] == "COMPLETED" and approved["gate"] is True
    assert (approved["decided_by"], approved["decision_note"]) == ("alice", "numbers checked")
    wait_until(lambda: gcli.ok("show", after)["status"] == "COMPLETED", what="the dependant to run")
    types = [e["event_type"] for e in events_of(gcli, g)]
    assert types == ["AgentSignalPosted", "AgentSignalApproved"]  # never claimed
    decision = events_of(gcli, g)[-1]
    assert decision["data"]["approved_by"] == "alice" and decision["metadata"]["actor"] == "alice"
    assert gcli.ok("status", "--blackboard", "ps-g")[0]["open_gates"] == []
    worker.terminate()
    gcli.finish(worker)


def test_a_rejection_fails_the_gate_and_expires_what_waits_on_it(gcli):
    g = gate(gcli, "e-1")
    after = gcli.post("--after", g, ps="ps-g", entry="e-2")["signal_id"]

    rejected = assert_signal(gcli.ok("reject", g, "--by", "bob", "--reason", "the plan is wrong"))

    assert rejected["status"] == "FAILED"
    assert rejected["result"]["error"] == "rejected by bob: the plan is wrong"
    shown = gcli.ok("show", after)
    assert shown["status"] == "EXPIRED"
    assert shown["result"]["error"] == f"upstream {g} ended FAILED: rejected by bob: the plan is wrong"
    waited = gcli("--json", "wait", g, "--timeout", "5").expect(3)
    assert assert_signal(waited.json())["status"] == "FAILED"
    assert "gate: rejected by bob: the plan is wrong" in gcli("show", g).expect(0).stdout


def test_a_gate_expires_only_by_a_timeout_of_its_own_and_never_ends_unclaimed(gcli):
    fast = {"BLACKBOARD_POST_TIMEOUT": "1"}
    # SYNTHESIS: no agent fits it, so a plain post ends UNCLAIMED at once; a gate is a person's
    nobody = gcli.post("--gate", type="SYNTHESIS", ps="ps-g", entry="e-1", env=fast)
    plain = gcli.post(type="SYNTHESIS", ps="ps-g", entry="e-2", env=fast)
    limited = gate(gcli, "e-3", "--timeout", "1s")
    assert (nobody["status"], plain["status"]) == ("POSTED", "UNCLAIMED")
    assert limited.startswith("sig-")

    def swept() -> bool:
        gcli.ok("expire", env=fast)
        return gcli.ok("show", limited)["status"] == "EXPIRED"

    wait_until(swept, what="the gate's own timeout to pass")

    assert gcli.ok("show", limited)["result"]["error"] == "no one decided the gate within 1s of it opening"
    assert gcli.ok("expire", env=fast) == []  # over a second old, past the 1 s post timeout
    assert gcli.ok("show", nobody["signal_id"], env=fast)["status"] == "POSTED"


def test_bad_decisions_exit_2_or_3_naming_the_rule_and_write_nothing(gcli):
    g = gate(gcli, "e-1")
    plain = gcli.post(ps="ps-g", entry="e-2")["signal_id"]
    waiting = gate(gcli, "e-3", "--after", plain)
    before = gcli.ok("events", "--all")

    assert "--by: String should have at least 1 character" in gcli("approve", g, "--by", "").expect(2).stderr
    assert (
        "--reason: String should have at least 1 character"
        in gcli("reject", g, "--by", "bob", "--reason", "").expect(2).stderr
    )
    assert "--by" in gcli("approve", g).expect(2).stderr  # required
    assert f"{plain} is not a gate" in gcli("approve", plain, "--by", "alice").expect(3).stderr
    assert (
        f"gate {waiting} is not open yet (it waits for {plain})"
        in gcli("reject", waiting, "--by", "bob", "--reason", "no").expect(3).stderr
    )
    assert (
        "agent ps-decider's run may not approve a gate: only a person decides"
        in gcli("approve", g, "--by", "alice", env={"BLACKBOARD_AGENT": "ps-decider"}).expect(3).stderr
    )
    gcli("approve", "sig-00000000", "--by", "alice").expect(4)
    refused = gcli(
        "post",
        "--type",
        "RESEARCH",
        "--ps-id",
        "ps-g",
        "--entry-id",
        "e-9",
        "--topic",
        "t",
        "--timeout",
        "0",
    )
    assert "--timeout: must be above 0" in refused.expect(2).stderr  # any signal may have one; never 0
    assert (
        "--timeout: must be seconds (30) or a duration"
        in gcli(
            "post",
            "--gate",
            "--type",
            "DECISION",
            "--ps-id",
            "ps-g",
            "--entry-id",
            "e-9",
            "--topic",
            "t",
            "--timeout",
            "soon",
        )
        .expect(2)
        .stderr
    )
    assert gcli.ok("events", "--all") == before

    gcli.ok("approve", g, "--by", "alice")
    again = gcli("reject", g, "--by", "bob", "--reason", "too late").expect(3)
    assert f"{g} is COMPLETED; only POSTED signals can be rejected" in again.stderr


def test_the_decision_travels_with_the_log_through_time_travel_rebuild_and_export(gcli, tmp_path):
    g = gate(gcli, "e-1")
    posted_at = gcli.ok("events")[-1]["position"]
    gcli.ok("approve", g, "--by", "alice", "--note", "ok")

    assert gcli.ok("show", g, "--at", str(posted_at))["status"] == "POSTED"
    gcli.ok("projection", "rebuild")
    rebuilt = gcli.ok("show", g)
    assert (rebuilt["status"], rebuilt["decided_by"], rebuilt["decision_note"]) == (
        "COMPLETED",
        "alice",
        "ok",
    )
    exported = tmp_path / "board.json"
    gcli("export", "ps-g", "--output", str(exported)).expect(0)
    kinds = [e["event_type"] for e in json.loads(exported.read_text())["events"]]
    assert "AgentSignalApproved" in kinds


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_an_agent_s_mcp_server_cannot_decide_a_gate_and_a_person_s_can(gcli):
    g = gate(gcli, "e-1")

    async with served(gcli, "--agent", "ps-decider") as server:
        listed = {tool.name for tool in (await server.session.list_tools()).tools}
        text, details = await server.refused("blackboard_approve", signal_id=g, by="ps-decider")
    assert not {"blackboard_approve", "blackboard_reject"} & listed
    assert "agent ps-decider's MCP server may not approve a gate: only a person decides" in text
    assert (details["family"], details["exit_code"]) == ("refused", 3)
    assert gcli.ok("show", g)["status"] == "POSTED"

    async with served(gcli) as server:
        assert (await server.refused("blackboard_reject", signal_id=g, by="carol", reason=""))[1][
            "exit_code"
        ] == 2
        decided = await server.call("blackboard_reject", signal_id=g, by="carol", reason="not now")
    assert (decided["status"], decided["decided_by"]) == ("FAILED", "carol")
