"""`blackboard next` through the real CLI: proposals in text and JSON, in claim order, runnable agents only."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Cli

RUNNABLE = {
    "ps-finder.md": "---\nname: ps-finder\ndescription: Finds prior work.\ncapabilities: {RESEARCH: 0.9}\n"
    "command: echo found\n---\nYou research.\n",
    "ps-judge.md": "---\nname: ps-judge\ndescription: Weighs options and decides.\ncapabilities: {DECISION: 0.85}\n"
    "command: echo decided\n---\nYou decide.\n",
    "ps-dreamer.md": "---\nname: ps-dreamer\ndescription: Has no handler.\ncapabilities: {RESEARCH: 1.0, REVIEW: 1.0}\n"
    "---\nYou dream.\n",
}


@pytest.fixture
def cli(make_cli, tmp_path) -> Cli:
    folder = tmp_path / "agents"
    folder.mkdir()
    for name, text in RUNNABLE.items():
        (folder / name).write_text(text, encoding="utf-8")
    made = make_cli(f"sqlite:///{tmp_path / 'blackboard.db'}", tmp_path, agents=folder)
    yield made
    made.close()


def test_next_proposes_each_open_signal_s_best_runnable_agent_in_claim_order(cli):
    research = cli.post(type="RESEARCH", ps="ps-n", topic="prior work")["signal_id"]
    decision = cli.post(type="DECISION", ps="ps-n", entry="e-2", topic="pick one")["signal_id"]
    review = cli.post(type="REVIEW", ps="ps-n", entry="e-3", topic="only a dreamer")["signal_id"]
    later = cli.post("--after", research, type="DECISION", ps="ps-n", entry="e-4")["signal_id"]
    other_board = cli.post(type="RESEARCH", ps="ps-other", topic="elsewhere")["signal_id"]

    plan = cli.ok("next", "--blackboard", "ps-n")
    text = cli("next", "--blackboard", "ps-n").expect(0).stdout

    assert [(p["signal_id"], p["agent"], p["score"]) for p in plan["next"]] == [
        (research, "ps-finder", 0.9),
        (decision, "ps-judge", 0.85),
    ]
    assert all(p["dependencies"] == [] and p["age_seconds"] >= 0 for p in plan["next"])
    assert [(w["signal_id"], w["agent"]) for w in plan["waiting_for_an_agent"]] == [(review, None)]
    assert later not in text and other_board not in text and "ps-dreamer" not in text
    lines = text.splitlines()
    assert lines[0].startswith(f"1. {research}") and "ps-finder (score 0.90 > 0.80)" in lines[0]
    assert "no dependencies" in lines[0] and lines[1].startswith(f"2. {decision}")
    assert any(review in line for line in lines[2:])

    cli.ok("claim", research, "--agent", "ps-finder")
    cli.ok("complete", research, "--agent", "ps-finder", "--knowledge", "three papers")
    after = cli.ok("next", "--blackboard", "ps-n", "--limit", "1")["next"]
    assert [(p["signal_id"], p["dependencies"]) for p in after] == [
        (decision, [])
    ]  # the older of the two DECISION signals first
    released = {p["signal_id"]: p for p in cli.ok("next", "--blackboard", "ps-n")["next"]}[later]
    assert released["dependencies"] == [
        {"signal_id": research, "status": "COMPLETED", "result_present": True}
    ]


def test_next_refuses_a_limit_below_one(cli):
    refused = cli("next", "--limit", "0").expect(2)
    assert "--limit" in refused.stderr


TEXTUAL = {
    "sql-tuner.md": "---\nname: sql-tuner\ndescription: Optimizes slow SQL queries, designs indexes and reads "
    "execution plans.\ncapabilities: {SQL: 0.9}\ncommand: echo tuned\n---\nYou tune queries.\n",
    "doc-writer.md": "---\nname: doc-writer\ndescription: Writes READMEs, user guides and tutorials.\n"
    "capabilities: {DOCS: 0.9}\ncommand: echo written\n---\nYou write.\n",
}


def test_a_worker_takes_an_auto_signal_only_when_its_text_fits_and_next_proposed_it(make_cli, tmp_path):
    folder = tmp_path / "agents"
    folder.mkdir()
    for name, text in TEXTUAL.items():
        (folder / name).write_text(text, encoding="utf-8")
    cli = make_cli(f"sqlite:///{tmp_path / 'blackboard.db'}", tmp_path, agents=folder)
    slow = cli.post(
        "--capability",
        "auto",
        "--prompt",
        "The orders SQL query is slow; it needs an index.",
        topic="Slow orders query",
    )["signal_id"]
    assert [(p["signal_id"], p["agent"]) for p in cli.ok("next")["next"]] == [(slow, "sql-tuner")]

    cli("worker", "--agent", "doc-writer", "--once").expect(0)  # it does not fit: nothing to claim
    assert cli.ok("show", slow)["status"] == "POSTED"
    cli("worker", "--agent", "sql-tuner", "--once").expect(0)

    done = cli.ok("show", slow)
    assert (done["status"], done["claimed_by"], done["result"]["knowledge_items"]) == (
        "COMPLETED",
        "sql-tuner",
        ["tuned"],
    )
    assert cli.ok("next")["next"] == []
