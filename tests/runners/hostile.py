"""Hostile stand-ins for Claude Code: small programs a worker runs as `claude` (BLACKBOARD_CLAUDE), each printing
what a broken, odd or enormous Claude Code could print on its standard output and error, so a test drives the
claude-code runner's reading through a real worker process without a model."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

SESSION = "5e551011-0000-4000-8000-000000000001"


def init_line(**fields: Any) -> str:
    return json.dumps(
        {"type": "system", "subtype": "init", "session_id": SESSION, "model": "claude-sonnet-5-5", **fields}
    )


def result_line(answer: str = "DONE", **fields: Any) -> str:
    """Claude Code's last line: a successful result, its usage as Claude Code reports it unless `fields`
    say otherwise."""
    return json.dumps(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": answer,
            "session_id": SESSION,
            "num_turns": 2,
            "total_cost_usd": 0.0123,
            "usage": {
                "input_tokens": 100,
                "cache_creation_input_tokens": 20,
                "cache_read_input_tokens": 3,
                "output_tokens": 40,
            },
            "modelUsage": {"claude-sonnet-5-5": {"inputTokens": 123, "outputTokens": 40}},
            **fields,
        }
    )


def claude_script(folder: Path, body: str, name: str = "claude") -> Path:
    """An executable `claude`: a Python program that reads its prompt (the first line of its standard input, a
    stream-json user message, as Claude Code reads it with `--input-format stream-json`), then runs
    `body` (Python, with `out(text)`, `err(text)` that write a line and flush, and `json`, `os`, `sys`, `time`
    imported)."""
    path = folder / name
    path.write_text(
        f"#!{sys.executable}\n"
        + textwrap.dedent(
            """\
            import json, os, sys, time
            sys.stdin.readline()
            def out(text):
                sys.stdout.write(text + "\\n"); sys.stdout.flush()
            def err(text):
                sys.stderr.write(text + "\\n"); sys.stderr.flush()
            """
        )
        + textwrap.dedent(body),
        encoding="utf-8",
    )
    os.chmod(path, 0o755)
    return path


def hostile_env(claude: Path) -> dict[str, str]:
    return {"BLACKBOARD_CLAUDE": str(claude), "ANTHROPIC_API_KEY": "sk-ant-dummy"}
