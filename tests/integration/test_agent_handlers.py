"""The shipped example handlers, run as `blackboard worker` runs them: the command through the shell,
in the agents folder, the signal document on stdin and the BLACKBOARD_* variables in the environment."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from blackboard.domain.signals import AgentSignal, SignalPayload, SignalType
from blackboard.infrastructure.agents import AgentDefinition, FrontmatterAgentRegistry
from blackboard.infrastructure.documents import jsonable, signal

AGENTS_DIR = Path(__file__).resolve().parents[2] / "agents"
REGISTRY = FrontmatterAgentRegistry(AGENTS_DIR)
TOPIC = "Event store for the blackboard"
PROMPT = (
    "Which event store should we use? It must support optimistic locking. PostgreSQL is already deployed."
)


def signal_document(signal_type: str, signal_id: str = "sig-0000000a", **context: Any) -> dict[str, Any]:
    return jsonable(
        signal(
            AgentSignal(
                signal_id=signal_id,
                blackboard_id="ps-1",
                signal_type=SignalType(signal_type),
                payload=SignalPayload(
                    ps_id="ps-1", entry_id="e-1", topic=TOPIC, prompt=PROMPT, context=context
                ),
                target_capabilities=(signal_type,),
                posted_by="test",
                created_at=datetime(2025, 1, 1, tzinfo=UTC),
            ).claimed("someone", datetime(2025, 1, 1, 0, 1, tzinfo=UTC))
        )
    )


def run(
    agent: str, stdin: str, artifacts: Path, signal_id: str = "sig-0000000a"
) -> subprocess.CompletedProcess[str]:
    definition = REGISTRY.definition(agent)
    assert isinstance(definition, AgentDefinition)
    env = {
        **os.environ,
        "BLACKBOARD_SIGNAL_ID": signal_id,
        "BLACKBOARD_AGENT": agent,
        "BLACKBOARD_PROMPT_FILE": str(definition.path.resolve()),
        "BLACKBOARD_ARTIFACTS_DIR": str(artifacts),
    }
    return subprocess.run(
        definition.command,
        shell=True,
        cwd=definition.path.parent,
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=definition.timeout,
    )


def completed(agent: str, document: dict[str, Any], artifacts: Path) -> dict[str, Any]:
    """Runs the handler, checks the contract's success shape, returns its JSON result."""
    done = run(agent, json.dumps(document), artifacts, document["signal_id"])
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) == {"artifact_path", "knowledge_items"}
    assert result["knowledge_items"] and all(isinstance(i, str) and i for i in result["knowledge_items"])
    artifact = Path(result["artifact_path"])
    assert artifact.is_absolute() and artifact.parent == artifacts
    assert TOPIC in artifact.read_text(encoding="utf-8")
    return result


@pytest.mark.parametrize(
    ("agent", "signal_type", "title"),
    [
        ("ps-researcher", "RESEARCH", "# Research notes: "),
        ("ps-analyst", "ANALYSIS", "# Analysis: "),
        ("ps-reviewer", "REVIEW", "# Review: "),
        ("ps-architect", "DECISION", "# Decision record: "),
        ("ps-architect", "SYNTHESIS", "# Synthesis: "),
    ],
)
def test_each_handler_writes_an_artifact_about_the_topic_and_answers_in_json(
    tmp_path, agent, signal_type, title
):
    result = completed(agent, signal_document(signal_type, budget="small"), tmp_path)

    text = Path(result["artifact_path"]).read_text(encoding="utf-8")
    assert text.startswith(title + TOPIC)
    assert "sig-0000000a" in text and agent in text


def test_the_researcher_records_the_prompt_and_context_as_findings(tmp_path):
    result = completed("ps-researcher", signal_document("RESEARCH", budget="small"), tmp_path)

    text = Path(result["artifact_path"]).read_text(encoding="utf-8")
    assert "Which event store should we use?" in text
    assert "Given: budget = small" in text
    assert "key terms event, store" in result["knowledge_items"][0]


def test_the_analyst_finds_the_requirement_in_the_prompt(tmp_path):
    result = completed("ps-analyst", signal_document("ANALYSIS"), tmp_path)

    assert "Requirement: It must support optimistic locking." in result["knowledge_items"]


def test_results_flow_downstream_from_research_to_review_to_decision(tmp_path):
    research = completed("ps-researcher", signal_document("RESEARCH", "sig-00000001"), tmp_path)
    upstream = {
        "sig-00000001": {"artifact_path": research["artifact_path"], "knowledge_items": ["PostgreSQL fits"]}
    }

    review = completed(
        "ps-reviewer",
        signal_document("REVIEW", "sig-00000002", upstream=upstream, criteria=["locking"]),
        tmp_path,
    )
    assert review["knowledge_items"][0].startswith(f"Review of '{TOPIC}': APPROVED (1 of 1")

    upstream["sig-00000002"] = {"signal_type": "REVIEW", "result": review}  # a whole document's shape
    decision = completed(
        "ps-architect",
        signal_document("DECISION", "sig-00000003", upstream=upstream, options=["SQLite", "PostgreSQL"]),
        tmp_path,
    )
    assert decision["knowledge_items"] == [f"Decision on '{TOPIC}': PostgreSQL"]
    text = Path(decision["artifact_path"]).read_text(encoding="utf-8")
    assert "sig-00000001" in text and "sig-00000002 (REVIEW)" in text and "Adopt **PostgreSQL**" in text


def test_the_reviewer_requests_changes_when_an_upstream_failed(tmp_path):
    upstream = {"sig-00000001": {"result": {"error": "research timed out"}}}

    review = completed("ps-reviewer", signal_document("REVIEW", upstream=upstream), tmp_path)

    assert "CHANGES REQUESTED" in review["knowledge_items"][0]
    assert any("research timed out" in item for item in review["knowledge_items"])


def test_docbot_s_phases_research_the_agents_folder_plan_write_and_present_its_page(tmp_path):
    """flows/docbot.md's four handlers, each from the results of the phases before it."""
    research = completed("docbot-researcher", signal_document("RESEARCH", "sig-00000001"), tmp_path)
    assert any(
        f.startswith("ps-researcher (ps-researcher.md): Researches a topic")
        for f in research["knowledge_items"]
    )
    assert any("Runs `python3 handlers/docbot.py plan`" in f for f in research["knowledge_items"])

    upstream = {"sig-00000001": {"result": research}}
    plan = completed(
        "docbot-planner", signal_document("ANALYSIS", "sig-00000002", upstream=upstream), tmp_path
    )
    names = sorted(REGISTRY_NAMES)
    assert plan["knowledge_items"] == [
        f"plan: {len(names) + 2} sections: Overview, {', '.join(names)}, Running them"
    ]

    upstream = {
        "sig-00000002": {"result": plan},
        "sig-00000003": {"result": {"knowledge_items": []}},
    }  # the gate
    page = completed(
        "docbot-writer", signal_document("SYNTHESIS", "sig-00000004", upstream=upstream), tmp_path
    )
    text = Path(page["artifact_path"]).read_text(encoding="utf-8")
    assert (
        "## ps-architect\n\nTurns the results of earlier signals into a decision record" in text
        and "(`ps-architect.md`)" in text
    )
    assert text.count("\n## ") == len(names) + 2

    told = completed(
        "docbot-presenter",
        signal_document("SYNTHESIS", "sig-00000005", upstream={"sig-00000004": {"result": page}}),
        tmp_path,
    )
    assert told["knowledge_items"] == [
        f"Your documentation is ready: {len(names) + 2} sections (Overview, {', '.join(names)}, Running them), "
        f"at {page['artifact_path']}"
    ]


REGISTRY_NAMES = [agent.agent_id for agent in REGISTRY.get_all()]


@pytest.mark.parametrize(
    "agent", ["ps-researcher", "ps-analyst", "ps-reviewer", "ps-architect", "docbot-writer"]
)
@pytest.mark.parametrize(
    ("stdin", "said"),
    [
        ("not json", "not a JSON signal document"),
        ("[1, 2]", "must be a JSON object"),
        (json.dumps({"signal_id": "sig-0000000a", "payload": {"ps_id": "ps-1"}}), "payload.topic"),
        (json.dumps({"signal_id": "sig-0000000b", "payload": {"topic": "t"}}), "BLACKBOARD_SIGNAL_ID"),
    ],
)
def test_bad_input_exits_non_zero_with_a_reason_on_stderr(tmp_path, agent, stdin, said):
    done = run(agent, stdin, tmp_path)

    assert done.returncode != 0
    assert said in done.stderr
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []
