"""(resume) Resume instead of restart: what a retried attempt that continues the earlier attempt's conversation
does not redo, beside a fresh restart of the same work in the same run (docs/agents.md, "Resume instead of
restart").

The work is BENCH_RESUME_STEPS steps, one board write a turn, then a final answer. The stand-in of the model
API plays the model: it answers a request by how many steps its conversation shows done, and bills it as a
real API would, its input tokens growing with the conversation (characters / 4, the usual rule of thumb).
Attempt 1 is cut off halfway (its agent file says `max_turns` half the steps: it fails and is retried; the
file then allows them all); attempt 2 runs through a second `blackboard worker --once`, either on the same
host (it resumes: claude-code `--resume`, an API runner its recorded messages) or as another host
(claude-code: another HOME; an API runner: another artifacts folder), where it cannot reach them and starts
afresh. For each runner, attempt 2's turns and tokens, side by side, and what resuming saved. Real
processes: the CLI's worker, Claude Code (the pinned version, `make tools`) and its board server, SQLite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import table, temp_dir
from tests.runners.standins import StandIn, Turn, call, say

CLAUDE = Path(__file__).resolve().parents[1] / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude"
RETRIED = "retries: {max_attempts: 2, initial: 0}\n"
AGENTS = {
    "claude-code": ("tools: Read\nmodel: sonnet\n" + RETRIED, "mcp__blackboard__blackboard_write"),
    "anthropic": ("runner: anthropic\nmodel: sonnet\n" + RETRIED, "blackboard_write"),
}
OUTPUT_TOKENS = 40  # of each answer


class Model:
    """The stand-in's script: a step a turn until `steps` are done, then the answer."""

    def __init__(self, steps: int, tool: str) -> None:
        self.steps, self.tool = steps, tool

    def __call__(self, body: dict[str, Any]) -> Turn:
        done = sum(
            1
            for message in body.get("messages", [])
            if message.get("role") == "user" and isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        )
        usage = {"input_tokens": input_tokens(body), "output_tokens": OUTPUT_TOKENS}
        if done < self.steps:
            return call(
                self.tool, {"key": f"notes/step-{done + 1}", "value": f"step {done + 1} " * 20}, **usage
            )
        return say(f"DONE: {self.steps} steps", **usage)


def input_tokens(body: dict[str, Any]) -> int:
    """A request's input as a real API would bill it, near enough: its system prompt, tools and messages."""
    return len(json.dumps([body.get("system"), body.get("tools"), body.get("messages")])) // 4


def _env(url: str, agents: Path, api: str, home: Path, artifacts: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    return {
        **env,
        "BLACKBOARD_DB": url,
        "BLACKBOARD_AGENTS_DIR": str(agents),
        "BLACKBOARD_POST_TIMEOUT": "3600",
        "BLACKBOARD_ARTIFACTS_DIR": str(artifacts),
        "BLACKBOARD_CLAUDE": str(CLAUDE),
        "ANTHROPIC_BASE_URL": api,
        "ANTHROPIC_API_KEY": "sk-ant-bench",
        "HOME": str(home),
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def _case(runner: str, resume: bool, steps: int, where: Path) -> dict[str, Any]:
    """One signal of `steps` steps, attempt 1 cut off halfway, attempt 2 on the same host or another."""
    from blackboard import Blackboard

    where.mkdir()
    url, agents = f"sqlite:///{where / 'board.db'}", where / "agents"
    agents.mkdir()
    frontmatter, tool = AGENTS[runner]
    agent = agents / "stepper.md"

    def agent_file(max_turns: int) -> None:
        agent.write_text(
            f"---\nname: stepper\n{frontmatter}max_turns: {max_turns}\n---\nYou work in steps.\n"
        )

    agent_file(steps // 2)
    model = Model(steps, tool)
    api = StandIn(model).start()
    blackboard = str(Path(sys.executable).parent / "blackboard")
    try:
        with Blackboard(url, agents_dir=agents, post_timeout=3600) as bb:
            sig = bb.post(
                "RESEARCH", "ps-bench", "e-1", "steps", capabilities=["stepper"], write_keys=["notes/*"]
            ).signal_id
            hosts = ["a", "a" if resume else "b"]
            marks, took = [], []
            for host, turns in zip(hosts, (steps // 2, 4 * steps), strict=True):
                agent_file(turns)
                env = _env(url, agents, api.url, where / f"home-{host}", where / f"artifacts-{host}")
                started = time.monotonic()
                subprocess.run(
                    [blackboard, "worker", "--agent", "stepper", "--once"],
                    env=env,
                    cwd=where,
                    capture_output=True,
                    timeout=600,
                    check=False,
                )
                took.append(time.monotonic() - started)
                marks.append(len(api.model_calls))
            done = bb.show(sig)
    finally:
        api.stop()
    if done.status != "COMPLETED" or done.attempt != 2 or done.usage is None:
        raise RuntimeError(
            f"{runner}: the signal ended {done.status} at attempt {done.attempt}: {done.result}"
        )
    if (done.usage.resumed_from is not None) != resume:
        raise RuntimeError(f"{runner}: resumed_from is {done.usage.resumed_from!r}, resume was {resume}")
    second = [c for c in api.model_calls[marks[0] :] if isinstance(c.body, dict)]
    return {
        "attempt_1_turns": marks[0],
        "turns": len(second),
        "input_tokens": sum(input_tokens(c.body) for c in second),
        "output_tokens": OUTPUT_TOKENS * len(second),
        "attempt_2_s": round(took[1], 2),
        "resumed_from": done.usage.resumed_from,
    }


def run(steps: int) -> dict[str, Any]:
    if not os.access(CLAUDE, os.X_OK):
        raise RuntimeError(f"Claude Code is needed at {CLAUDE} (make tools provisions it)")
    results: dict[str, Any] = {"steps": steps}
    with temp_dir("resume") as where:
        for runner in AGENTS:
            resumed = _case(runner, True, steps, where / f"{runner}-resumed")
            restarted = _case(runner, False, steps, where / f"{runner}-restarted")
            results[runner] = {
                "resumed": resumed,
                "restarted": restarted,
                "saved_turns": restarted["turns"] - resumed["turns"],
                "saved_input_tokens": restarted["input_tokens"] - resumed["input_tokens"],
                "saved_output_tokens": restarted["output_tokens"] - resumed["output_tokens"],
            }
    return results


def print_report(r: dict[str, Any], say_: Any) -> None:
    rows = []
    for runner in AGENTS:
        for start in ("resumed", "restarted"):
            c = r[runner][start]
            rows.append(
                [
                    runner,
                    "resumes" if start == "resumed" else "restarts afresh",
                    c["attempt_1_turns"],
                    c["turns"],
                    c["input_tokens"],
                    c["output_tokens"],
                    c["attempt_2_s"],
                ]
            )
        s = r[runner]
        rows.append(
            [
                runner,
                "saved by resuming",
                "",
                s["saved_turns"],
                s["saved_input_tokens"],
                s["saved_output_tokens"],
                "",
            ]
        )
    say_(
        table(
            f"(resume) attempt 2 of a {r['steps']}-step run whose attempt 1 was cut off halfway: resumed vs restarted",
            ["runner", "attempt 2", "attempt 1 turns", "turns", "input tokens", "output tokens", "worker s"],
            rows,
            "    input tokens as a real API bills them (the conversation so far, each turn: chars / 4); "
            "the restart runs as another host, where the earlier session and transcript are out of reach",
        )
    )


if __name__ == "__main__":
    from bench.common import say as print_line

    report = run(int(os.environ.get("BENCH_RESUME_STEPS", "8")))
    print_report(report, print_line)
    out = Path("bench-results/resume.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print_line(f"wrote {out}")
