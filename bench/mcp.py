"""(p) An MCP tool call against a CLI call: `blackboard_post_signal` through a running `blackboard mcp`
(the SDK's own stdio client, as an LLM client drives it) beside `blackboard post` (a fresh process,
as a script pays it), on one SQLite file, interleaved (a CLI post after every MCP_PER_CLI tool calls)
so a change of the machine's load touches both.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import table, temp_dir, verdict

TARGET_MS = 5.0  # the MCP call's median (issue 16)
MCP_PER_CLI = 5  # tool calls between two CLI posts: a CLI process costs ~100 tool calls' time


def _cli_post(blackboard: str, env: dict[str, str], where: Path, i: int) -> float:
    started = time.perf_counter()
    subprocess.run(
        [
            blackboard,
            "post",
            "--type",
            "RESEARCH",
            "--ps-id",
            "ps-bench",
            "--entry-id",
            f"e-{i}",
            "--topic",
            "cli",
        ],
        env=env,
        cwd=where,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return time.perf_counter() - started


async def _measure(repetitions: int, warmup: int) -> dict[str, list[float]]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    blackboard = str(Path(sys.executable).parent / "blackboard")
    with temp_dir("mcp") as where:
        url = f"sqlite:///{where / 'b.db'}"
        env = {**os.environ, "BLACKBOARD_DB": url}
        server = StdioServerParameters(
            command=blackboard, args=["--db", url, "mcp", "--blackboard", "ps-bench"], cwd=str(where)
        )
        calls: list[float] = []
        cli: list[float] = []
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(server, errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for i in range(warmup + repetitions):
                    started = time.perf_counter()
                    result = await session.call_tool(
                        "blackboard_post_signal",
                        {
                            "signal_type": "RESEARCH",
                            "ps_id": "ps-bench",
                            "entry_id": f"e-{i}",
                            "topic": "mcp",
                        },
                    )
                    took = time.perf_counter() - started
                    if result.is_error:
                        raise RuntimeError(f"blackboard_post_signal failed: {result.content[0].text}")
                    json.loads(result.content[0].text)
                    if i >= warmup:
                        calls.append(took)
                        if (i - warmup) % MCP_PER_CLI == MCP_PER_CLI - 1:
                            cli.append(_cli_post(blackboard, env, where, i))
    return {"mcp": calls, "cli": cli}


def run(repetitions: int, warmup: int = 5) -> dict[str, Any]:
    import anyio

    times = anyio.run(_measure, repetitions, warmup)
    mcp_ms, cli_ms = (statistics.median(times[k]) * 1000 for k in ("mcp", "cli"))
    p90 = sorted(times["mcp"])[int(0.9 * (len(times["mcp"]) - 1))] * 1000
    ok = mcp_ms <= TARGET_MS
    print(
        table(
            f"(p) a post as an MCP tool call vs a CLI post, SQLite file (a CLI post after every {MCP_PER_CLI} calls)",
            ["how", "median ms", "p90 ms", "min ms", "runs"],
            [
                [
                    "blackboard_post_signal via `blackboard mcp` (SDK stdio client)",
                    round(mcp_ms, 2),
                    round(p90, 2),
                    round(min(times["mcp"]) * 1000, 2),
                    repetitions,
                ],
                [
                    "blackboard post (a fresh process)",
                    round(cli_ms, 1),
                    "",
                    round(min(times["cli"]) * 1000, 1),
                    len(times["cli"]),
                ],
                [f"MCP median, target <= {TARGET_MS:g} ms", round(mcp_ms, 2), "", "", verdict(ok)],
            ],
            f"    the CLI call costs {cli_ms / mcp_ms:.0f}x the tool call: its process start, imports and "
            "database open",
        )
    )
    return {
        "mcp_post_ms": mcp_ms,
        "mcp_post_p90_ms": p90,
        "cli_post_ms": cli_ms,
        "cli_over_mcp": cli_ms / mcp_ms,
        "target_ms": TARGET_MS,
        "pass": ok,
        "repetitions": repetitions,
        "cli_posts": len(times["cli"]),
    }


if __name__ == "__main__":
    run(int(os.environ.get("BENCH_MCP_RUNS", "100")))
