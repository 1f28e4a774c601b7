"""`make demo`'s last part: docbot's four phases (seed 002) as a flow, `flows/docbot.md`.

One worker process per phase's agent; the flow's steps are posted in one transaction, each phase's signal
claimable once the phases before it completed; a person approves the plan (a gate) before anything is
written; then the flow's progress is read again after a rebuild of the read model, and must be the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
FLOW = ROOT / "flows" / "docbot.md"
BOARD = "docs"
AGENTS = ("docbot-researcher", "docbot-planner", "docbot-writer", "docbot-presenter")


def docbot(
    cli: Callable[..., Any],
    data: Callable[..., Any],
    say: Callable[[str], None],
    shown: Callable[[str], str],
    workers: Callable[[tuple[str, ...]], Any],
    stop: Callable[[Any], None],
    number: int,
) -> bool:
    """Tell the flow's story as step `number` of the demo; whether every phase completed and the rebuilt
    read model gives the flow the same progress."""
    say(f"\n{number}. Seed 002's docbot works in phases (research, plan, write, interact), as a flow file:")
    say(shown(f"{FLOW.relative_to(ROOT)}: " + ", ".join(_step_line(s) for s in _steps())))
    say("   One worker per phase's agent starts; the flow posts every step in one transaction.")
    running = workers(AGENTS)
    try:
        posted = data("flow", "run", str(FLOW), "--blackboard", BOARD)
        flow_id = posted["flow_id"]
        say(f"   blackboard flow run {FLOW.relative_to(ROOT)} --blackboard {BOARD}  ->  flow {flow_id}")
        steps = {s["step_id"]: s["signal_id"] for s in posted["steps"]}
        cli(
            "wait", steps["plan"], "--timeout", "60"
        )  # research, then plan: each phase ends with its completion
        say("\n   Research and planning completed; the plan waits for a person (a gate):")
        say(shown(cli("flow", "status", flow_id, "--blackboard", BOARD).stdout))
        say(f"   blackboard approve {steps['approve-plan']} --by alice --note 'outline looks right'")
        cli("approve", steps["approve-plan"], "--by", "alice", "--note", "outline looks right")
        ended = cli(
            "flow", "status", flow_id, "--blackboard", BOARD, "--wait", "--timeout", "60", check=False
        )
        say(f"   blackboard flow status {flow_id} --blackboard {BOARD} --wait  (exit {ended.returncode}):")
        say(shown(ended.stdout))
    finally:
        stop(running)
    told = data("show", steps["interact"])["result"]["knowledge_items"]
    say(f"   What the interaction phase told the user: {told[0] if told else '(nothing)'}")
    before = data("flow", "status", flow_id, "--blackboard", BOARD)
    cli("projection", "rebuild")
    same = data("flow", "status", flow_id, "--blackboard", BOARD) == before
    say(
        "   After blackboard projection rebuild the flow's progress is "
        f"{'the same' if same else 'DIFFERENT'}: {json.dumps(before['by_status'])}."
    )
    return ended.returncode == 0 and before["state"] == "completed" and same


def _steps() -> list[dict[str, Any]]:
    from blackboard.infrastructure.agents.flow_files import read_flow_file

    return [step.model_dump() for step in read_flow_file(FLOW).steps]


def _step_line(step: dict[str, Any]) -> str:
    after = f" after {'+'.join(step['after'])}" if step["after"] else ""
    return f"{step['id']}{' (a gate)' if step['gate'] else ''}{after}"
