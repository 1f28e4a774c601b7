"""`make demo`: a PS posts work, agents claim it and run their handlers, a waiting reviewer unblocks.

Every step is a real `blackboard` process on the embedded SQLite default, as a PS skill or an
agent would run it; the story ends with the event log, the board and a rebuild that matches.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
WORK = Path(".blackboard")
DB = WORK / "demo.db"
BLACKBOARD = str(Path(sys.executable).parent / "blackboard")
ENV = {
    **os.environ,
    "BLACKBOARD_DB": f"sqlite:///{DB}",
    "BLACKBOARD_AGENTS_DIR": str(ROOT / "agents"),
    "BLACKBOARD_ARTIFACTS_DIR": str((WORK / "artifacts").resolve()),
    "BLACKBOARD_JSON": "",
}


def say(text: str = "") -> None:
    print(text, flush=True)


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([BLACKBOARD, *args], env=ENV, capture_output=True, text=True, timeout=60)
    if check and done.returncode != 0:
        raise SystemExit(f"demo: `blackboard {' '.join(args)}` failed ({done.returncode}): {done.stderr.strip()}")
    return done


def data(*args: str) -> Any:
    return json.loads(cli("--json", *args).stdout)


def shown(text: str) -> str:
    return "\n".join("   | " + line for line in text.rstrip().splitlines())


def run_agent(agent: str, signal_id: str) -> None:
    """What an agent does with a signal it claimed: run its handler, then complete or fail."""
    from infrastructure.agents.handler import run_handler
    from infrastructure.agents.registry import FrontmatterAgentRegistry

    definition = FrontmatterAgentRegistry(ROOT / "agents").definition(agent)
    assert definition is not None, f"no agent file for {agent}"
    document = data("show", signal_id)
    upstream = {sid: data("show", sid) for sid in document["after"]}
    if upstream:  # the downstream handler gets its upstreams' results
        document["payload"]["context"]["upstream"] = upstream
    started = time.monotonic()
    outcome = run_handler(definition, document, {"BLACKBOARD_ARTIFACTS_DIR": ENV["BLACKBOARD_ARTIFACTS_DIR"]})
    took = time.monotonic() - started
    if not outcome.succeeded:
        cli("fail", signal_id, "--agent", agent, "--error", outcome.error or "handler failed")
        say(f"   {agent}'s handler failed after {took:.2f}s: {outcome.error}")
        return
    knowledge = [arg for item in outcome.knowledge_items for arg in ("--knowledge", item)]
    artifact = ["--artifact", outcome.artifact_path] if outcome.artifact_path else []
    cli("complete", signal_id, "--agent", agent, *artifact, *knowledge)
    where = os.path.relpath(outcome.artifact_path) if outcome.artifact_path else "no artifact"
    say(f"   {agent} ran `{definition.command}` in {took:.2f}s and completed {signal_id}: {where}")


def claim_race(signal_id: str, contenders: dict[str, float]) -> None:
    """Every able agent tries to claim at once, each waiting a moment that grows as its score falls,
    so the best fit gets there first; the others are told who won."""
    racers = {
        agent: subprocess.Popen(
            ["sh", "-c", f'sleep {(1 - score) * 2:.2f}; exec "$0" "$@"', BLACKBOARD, "claim", signal_id, "--agent", agent],
            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for agent, score in contenders.items()
    }
    for agent, process in racers.items():
        out, err = process.communicate(timeout=60)
        verdict = "won the claim" if process.returncode == 0 else f"lost (exit {process.returncode}): {err.strip()}"
        say(f"   {agent} ({contenders[agent]:.2f}) {verdict}")


def main() -> None:
    for leftover in [*WORK.glob(DB.name + "*"), *(WORK / "artifacts").glob("*.md")]:
        leftover.unlink()
    say(f"A blackboard on the embedded default: the SQLite file {DB}, created and migrated on first use.")
    say(shown(cli("db", "upgrade").stdout))
    say(f"\n1. The agents, declared by Markdown files in {os.path.relpath(ROOT / 'agents')}/:")
    say(shown(cli("agents").stdout))

    say("\n2. The PS skill posts three signals: RESEARCH, ANALYSIS, and a REVIEW that comes after the research.")
    research = data("post", "--type", "RESEARCH", "--ps-id", "ps-demo", "--entry-id", "e-1",
                    "--topic", "event sourcing for agent coordination", "--key", "ps-demo/e-1",
                    "--prompt", "What must an append-only log guarantee? The log must keep every fact.")["signal_id"]
    analysis = data("post", "--type", "ANALYSIS", "--ps-id", "ps-demo", "--entry-id", "e-2",
                    "--topic", "cost of replaying a board", "--prompt", "Replay must stay fast. Why?")["signal_id"]
    review = data("post", "--type", "REVIEW", "--ps-id", "ps-demo", "--entry-id", "e-3",
                  "--topic", "review the research", "--after", research,
                  "--context", json.dumps({"criteria": ["log", "facts"]}))["signal_id"]
    say(shown(cli("signals", "--blackboard", "ps-demo").stdout))
    again = data("post", "--type", "RESEARCH", "--ps-id", "ps-demo", "--entry-id", "e-1",
                 "--topic", "event sourcing for agent coordination", "--key", "ps-demo/e-1")["signal_id"]
    say(f"   (posting the research again with the same --key returns {again}: no twin)")

    say(f"\n3. A reviewer process starts waiting for the research: blackboard wait {research}")
    waiting = subprocess.Popen([BLACKBOARD, "wait", research, "--timeout", "60"], env=ENV,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    say(f"\n4. Who fits the research best? blackboard match {research}")
    say(shown(cli("match", research).stdout))
    say("   Both able agents try to claim it:")
    claim_race(research, {"ps-researcher": 0.95, "ps-analyst": 0.85})

    say("\n5. Each claimer runs its handler (offline, no LLM) and completes its signal with the artifact.")
    cli("claim", analysis, "--agent", "ps-analyst")
    run_agent("ps-analyst", analysis)
    run_agent("ps-researcher", research)

    out, err = waiting.communicate(timeout=60)
    say(f"\n6. The waiting reviewer unblocks (exit {waiting.returncode}) with the research it waited for:")
    say(shown(out))
    cli("claim", review, "--agent", "ps-reviewer")
    run_agent("ps-reviewer", review)

    say("\n7. The event log: every change is a fact, in order, with its global position.")
    say(shown(cli("events").stdout))
    say("\n8. The board's signals (the read model, folded in the same transactions as the events):")
    before = data("signals")
    say(shown(cli("signals").stdout))
    say(shown(cli("projection", "rebuild").stdout))
    same = data("signals") == before
    say(f"   The rebuilt read model is {'identical to' if same else 'DIFFERENT from'} the live one.")
    if not same or waiting.returncode != 0:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
