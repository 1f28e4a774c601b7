"""Flows (docs/flows.md; issue 34 item 11): through the real CLI and real worker processes, on SQLite and
PostgreSQL. A flow file's steps are posted in one command, all or none; each step's signal waits for the steps
it names and carries its flow and step; a bad file, an unknown agent in its last step or a taken flow id write
nothing; `flow status` shows each step, `--wait` ends with the flow; `cancel --flow` and `retry --flow`
act on its steps; `status` counts its steps; a rebuild of the read model gives the same progress."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli, assert_signal, cli_with_agents

# Each prints a completion; doc-writer fails its first attempt (no `once` file yet) and succeeds after.
AGENTS = {
    "doc-reader.md": '---\nname: doc-reader\ncapabilities: {DOC_READ: 0.95}\ncommand: "echo {}"\n---\nReads.\n',
    "doc-planner.md": "---\nname: doc-planner\ncapabilities: {DOC_PLAN: 0.95, DOC_READ: 0.5}\n"
    'command: "echo {}"\n---\nPlans.\n',
    "doc-writer.md": "---\nname: doc-writer\ncapabilities: {DOC_WRITE: 0.95}\n"
    "command: \"if [ -f once ]; then echo {}; else touch once; echo 'no sources yet' >&2; exit 1; fi\"\n"
    "---\nWrites, the second time.\n",
}
FLOW = """---
name: pages
description: read, plan, approve, write
steps:
  - id: read
    capability: DOC_READ
    topic: what the code does
  - id: plan
    agent: doc-planner
    topic: an outline
    after: read
  - id: approve
    gate: true
    topic: approve the outline
    after: [plan]
  - id: write
    agent: doc-writer
    type: SYNTHESIS
    topic: the page
    prompt: from the outline only
    after: [plan, approve]
---
Pages from code, a person approving the outline.
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def fcli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    made = cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "flows", AGENTS)
    (tmp_path / "pages.md").write_text(FLOW, encoding="utf-8")
    made.ok("events", "--limit", "1")  # the schema exists before a worker starts
    return made


def events(cli: Cli) -> list[dict]:
    return cli.ok("events", "--all")


def steps(flow: dict) -> dict[str, dict]:
    return {s["step_id"]: s for s in flow["steps"]}


def test_a_flow_posts_every_step_in_one_command_each_carrying_its_flow_and_waiting_for_its_steps(fcli):
    flow = fcli.ok("flow", "run", "pages.md", "--blackboard", "docs", "--flow-id", "pages-1")

    posted = [e for e in events(fcli) if e["event_type"] == "AgentSignalPosted"]
    assert len(posted) == 4 and len({e["metadata"]["causation_id"] for e in posted}) == 1  # one command
    by_step = steps(flow)
    assert list(by_step) == ["read", "plan", "approve", "write"]
    assert (flow["flow_id"], flow["state"], flow["by_status"]) == ("pages-1", "running", {"POSTED": 4})
    for step_id, step in by_step.items():
        signal = assert_signal(fcli.ok("show", step["signal_id"]))
        assert (signal["flow_id"], signal["step_id"], signal["blackboard_id"]) == ("pages-1", step_id, "docs")
        assert signal["payload"]["context"]["flow"]["name"] == "pages"
    read, plan, approve, write = (by_step[s]["signal_id"] for s in ("read", "plan", "approve", "write"))
    assert fcli.ok("show", plan)["after"] == [read] and fcli.ok("show", write)["after"] == [plan, approve]
    assert fcli.ok("show", plan)["target_capabilities"] == ["DOC_PLAN"]  # doc-planner's best capability
    assert fcli.ok("show", approve)["gate"] is True and fcli.ok("show", write)["signal_type"] == "SYNTHESIS"
    assert by_step["write"]["waiting_for"] == ["plan", "approve"]
    text = fcli("flow", "status", "pages-1", "--blackboard", "docs").expect(0).stdout
    assert text.startswith("flow pages-1 on docs: running (4 posted)\n")
    assert "approve  " in text and "waits for plan" in text
    shown = fcli("show", plan).expect(0).stdout
    assert "step plan of flow pages-1" in shown


def test_a_bad_flow_writes_nothing_and_names_every_problem_with_its_field(fcli, tmp_path):
    (tmp_path / "bad.md").write_text(
        FLOW.replace("capability: DOC_READ", "capabilty: DOC_READ").replace("topic: an outline", "topic: ''"),
        encoding="utf-8",
    )
    (tmp_path / "cycle.md").write_text(FLOW.replace("after: read", "after: write"), encoding="utf-8")
    (tmp_path / "stranger.md").write_text(
        FLOW.replace("agent: doc-writer", "agent: doc-nobody"), encoding="utf-8"
    )

    bad = fcli("flow", "run", "bad.md", "--blackboard", "docs").expect(2)
    cycle = fcli("flow", "run", "cycle.md", "--blackboard", "docs").expect(2)
    stranger = fcli("flow", "run", "stranger.md", "--blackboard", "docs").expect(2)  # its last, at posting
    missing = fcli("flow", "run", "nowhere.md", "--blackboard", "docs").expect(2)

    assert "bad.md: steps[0].capabilty: is not a key of a step (id, capability, agent," in bad.stderr
    assert "steps[1].topic: string should have at least 1 character" in bad.stderr
    assert "cycle.md: steps[1].after: write is not a step above this one (it comes later" in cycle.stderr
    assert "steps[3].agent: no agent named doc-nobody" in stranger.stderr
    assert "FILE: cannot read nowhere.md" in missing.stderr
    assert events(fcli) == [] and fcli.ok("signals", "--all") == []

    fcli.ok("flow", "run", "pages.md", "--blackboard", "docs", "--flow-id", "pages-1")
    taken = fcli("flow", "run", "pages.md", "--blackboard", "docs", "--flow-id", "pages-1").expect(3)
    assert "flow pages-1 is already on blackboard docs" in taken.stderr
    assert len(events(fcli)) == 4
    fcli("flow", "status", "pages-9", "--blackboard", "docs").expect(4)
    fcli("flow", "run", "pages.md", "--blackboard", "docs", "--flow-id", "a b").expect(2)


def test_workers_run_the_phases_in_order_a_gate_holding_the_write_until_a_person_approves(fcli):
    workers = [fcli.start("worker", "--agent", a, "--board", "docs") for a in ("doc-reader", "doc-planner")]
    flow_id = fcli("flow", "run", "-q", "pages.md", "--blackboard", "docs").expect(0).stdout.strip()
    by_step = steps(fcli.ok("flow", "status", flow_id, "--blackboard", "docs"))

    fcli("wait", by_step["plan"]["signal_id"], "--timeout", "120").expect(0)
    waiting = fcli("flow", "status", flow_id, "--blackboard", "docs", "--wait", "--timeout", "1").expect(5)
    assert f"waiting for flow {flow_id} to end" in waiting.stderr
    shown = steps(fcli.ok("flow", "status", flow_id, "--blackboard", "docs"))
    assert [shown[s]["status"] for s in ("read", "plan", "approve", "write")] == [
        "COMPLETED",
        "COMPLETED",
        "POSTED",
        "POSTED",
    ]
    assert shown["write"]["waiting_for"] == ["approve"]
    fcli("approve", shown["approve"]["signal_id"], "--by", "alice").expect(0)
    writer = fcli.start("worker", "--agent", "doc-writer", "--board", "docs")
    failed = fcli("flow", "status", flow_id, "--blackboard", "docs", "--wait", "--timeout", "120").expect(3)

    assert failed.stdout.startswith(f"flow {flow_id} on docs: failed (3 completed, 1 failed)")
    assert "no sources yet" in failed.stdout and "the flow ended failed" in failed.stderr
    read, plan = (fcli.ok("show", shown[s]["signal_id"]) for s in ("read", "plan"))
    assert plan["claimed_at"] >= read["completed_at"]  # a phase starts once the one before it completed

    retried = fcli.ok("retry", "--flow", flow_id, "--blackboard", "docs")
    assert [(s["step_id"], s["retry_of"]) for s in retried] == [("write", shown["write"]["signal_id"])]
    done = fcli.ok("flow", "status", flow_id, "--blackboard", "docs", "--wait", "--timeout", "120")
    assert (done["state"], steps(done)["write"]["tries"]) == ("completed", 2)
    for worker in (*workers, writer):
        worker.terminate()
        fcli.finish(worker)


def test_a_failed_step_expires_what_comes_after_it_and_a_retry_chains_them_anew(fcli, tmp_path):
    (tmp_path / "first.md").write_text(
        FLOW.replace("capability: DOC_READ", "agent: doc-writer").replace(
            "gate: true", "capability: DOC_PLAN"
        ),
        encoding="utf-8",
    )
    flow = fcli.ok("flow", "run", "first.md", "--blackboard", "docs", "--flow-id", "f-1")
    fcli("worker", "--agent", "doc-writer", "--board", "docs", "--once").expect(0)  # fails its first attempt

    failed = fcli.ok("flow", "status", "f-1", "--blackboard", "docs")
    assert [s["status"] for s in failed["steps"]] == ["FAILED", "EXPIRED", "EXPIRED", "EXPIRED"]
    retried = fcli.ok("retry", "--flow", "f-1", "--blackboard", "docs")

    old = steps(flow)
    assert [(s["step_id"], s["retry_of"], s["flow_id"]) for s in retried] == [
        (step, old[step]["signal_id"], "f-1") for step in ("read", "plan", "approve", "write")
    ]
    new = {s["step_id"]: s["signal_id"] for s in retried}
    assert [s["after"] for s in retried] == [[], [new["read"]], [new["plan"]], [new["plan"], new["approve"]]]
    again = fcli.ok("flow", "status", "f-1", "--blackboard", "docs")
    assert again["by_status"] == {"POSTED": 4} and all(s["tries"] == 2 for s in again["steps"])
    nothing = fcli("retry", "--flow", "f-1", "--blackboard", "docs").expect(3)
    assert "flow f-1 has no step to retry" in nothing.stderr


def test_cancelling_a_flow_cancels_its_open_steps_and_status_counts_each_flow_s_steps(fcli):
    fcli.ok("flow", "run", "pages.md", "--blackboard", "docs", "--flow-id", "keep")
    fcli("worker", "--agent", "doc-reader", "--board", "docs", "--once").expect(0)  # keep's read
    fcli.ok("flow", "run", "pages.md", "--blackboard", "docs", "--flow-id", "drop")
    fcli("worker", "--agent", "doc-reader", "--board", "docs", "--once").expect(0)  # drop's read

    cancelled = fcli.ok("cancel", "--flow", "drop", "--blackboard", "docs", "--reason", "wrong repo")

    assert [s["step_id"] for s in cancelled] == ["plan", "approve", "write"]  # in step order
    assert all(s["status"] == "CANCELLED" and s["flow_id"] == "drop" for s in cancelled)
    assert "cancelled by ps-skill: wrong repo" in cancelled[0]["result"]["error"]
    assert fcli.ok("cancel", "--flow", "drop", "--blackboard", "docs") == []
    fcli("cancel", "--flow", "drop").expect(2)  # the board is required
    fcli("cancel", "--flow", "nope", "--blackboard", "docs").expect(4)
    flows = {f["flow_id"]: f for f in fcli.ok("status", "--blackboard", "docs")[0]["flows"]}
    assert (flows["drop"]["state"], flows["drop"]["by_status"]) == (
        "cancelled",
        {"COMPLETED": 1, "CANCELLED": 3},
    )
    assert (flows["keep"]["state"], flows["keep"]["by_status"]) == ("running", {"POSTED": 3, "COMPLETED": 1})
    assert list(flows) == ["drop", "keep"]  # the newest first
    text = fcli("status", "--blackboard", "docs").expect(0).stdout
    assert "flows (blackboard flow status FLOW --blackboard ID)" in text
    assert "3 posted, 1 completed" in text and "1 completed, 3 cancelled" in text


def test_a_rebuilt_read_model_gives_every_flow_the_same_progress(fcli):
    fcli.ok("flow", "run", "pages.md", "--blackboard", "docs", "--flow-id", "f-1")
    fcli("worker", "--agent", "doc-reader", "--board", "docs", "--once").expect(0)
    fcli("worker", "--agent", "doc-planner", "--board", "docs", "--once").expect(0)
    gate = steps(fcli.ok("flow", "status", "f-1", "--blackboard", "docs"))["approve"]["signal_id"]
    fcli("reject", gate, "--by", "bob", "--reason", "too long").expect(0)
    fcli.ok("retry", "--flow", "f-1", "--blackboard", "docs")
    before = (
        fcli.ok("flow", "status", "f-1", "--blackboard", "docs"),
        fcli.ok("status", "--blackboard", "docs"),
    )

    fcli("projection", "rebuild").expect(0)

    after = (
        fcli.ok("flow", "status", "f-1", "--blackboard", "docs"),
        fcli.ok("status", "--blackboard", "docs"),
    )
    assert json.dumps(after[0], sort_keys=True) == json.dumps(before[0], sort_keys=True)
    assert after[1][0]["flows"] == before[1][0]["flows"]
    assert (
        before[0]["by_status"] == {"POSTED": 2, "COMPLETED": 2} and steps(before[0])["approve"]["tries"] == 2
    )


def test_flow_id_options_are_named_as_typed(fcli, tmp_path):
    assert (
        "FLOW: String should match pattern"
        in fcli("flow", "status", "a b", "--blackboard", "d").expect(2).stderr
    )
    assert (
        "--flow: String should match" in fcli("cancel", "--flow", "a b", "--blackboard", "d").expect(2).stderr
    )
    assert (
        "--flow: String should match" in fcli("retry", "--flow", "a b", "--blackboard", "d").expect(2).stderr
    )
    refused = fcli("flow", "status", "x", "--blackboard", "d", "--timeout", "5").expect(2)
    assert "--timeout: goes with --wait" in refused.stderr
    fcli("retry", "--blackboard", "d").expect(2)
    assert Path(tmp_path / "pages.md").exists()
