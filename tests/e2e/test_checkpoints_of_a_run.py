"""LangGraph checkpoints are held to the table too (docs/permissions.md, "save or delete LangGraph checkpoints"):
an agent's run, an entrypoint in a real `blackboard worker`, saves its graph's checkpoints on its own signal's
board and nowhere else. Before: the saver appended to the log directly, so a run wrote any board's threads."""

from __future__ import annotations

from tests.e2e.conftest import write_agents

ENTRYPOINT = """
from blackboard import Blackboard, Refused
from blackboard.langgraph import BlackboardSaver
from langgraph.checkpoint.base import empty_checkpoint


def handle(document, agent):
    said = {}
    with Blackboard() as bb:
        for name, board in (("own", document["blackboard_id"]), ("other", "ps-other")):
            saver = BlackboardSaver(bb, board=board)
            config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
            try:
                saver.put(config, empty_checkpoint(), {"source": "input", "step": -1, "parents": {}}, {})
                said[name] = "saved"
            except Refused as refused:
                said[name] = str(refused)
    return {"knowledge_items": [f"{name}: {what}" for name, what in sorted(said.items())]}
"""


def test_a_run_saves_checkpoints_on_its_own_signal_s_board_and_on_no_other(make_cli, tmp_path):
    agents = tmp_path / "agents"
    (agents / "handlers").mkdir(parents=True)
    (agents / "handlers" / "graph.py").write_text(ENTRYPOINT, encoding="utf-8")
    (agents / "ps-graph.md").write_text(
        "---\nname: ps-graph\ncapabilities: {RESEARCH: 0.95}\nentrypoint: handlers.graph:handle\n---\nGraphs.\n",
        encoding="utf-8",
    )
    cli = make_cli(f"sqlite:///{tmp_path / 'board.db'}", tmp_path, write_agents(agents))
    work = cli.post(ps="ps-run", entry="e-1")

    cli("worker", "--agent", "ps-graph", "--once").expect(0)

    done = cli.ok("show", work["signal_id"])
    run = f"agent ps-graph's run of {work['signal_id']}"
    assert done["status"] == "COMPLETED"
    assert done["result"]["knowledge_items"] == [
        f"other: {run} may not save checkpoints on board ps-other: its signal is of board ps-run",
        "own: saved",
    ]
    saved = {e["event_type"] for e in cli.ok("events", "--blackboard", "ps-run")}
    assert "CheckpointSaved" in saved
    assert "no blackboard ps-other" in cli("events", "--blackboard", "ps-other").expect(4).stderr
