"""Which runners there are, which one runs an agent, and what each needs before it can start.

Imported by the agent registry (is an agent `runnable`?) and by the worker (may it start?), so it
imports nothing heavier than the standard library: the SDKs are only looked for, never imported.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
from collections.abc import Mapping

RUNNERS = ("claude-code", "anthropic", "openai")
DEFAULT_RUNNER = "claude-code"  # for a file with no handler and no `runner`: Claude Code's own agent files
FRESH_FOR = 2.0  # seconds an answer of `missing` is kept: `agents` and `next` ask it for every agent file
_answers: dict[tuple[str, str | None, str | None], tuple[float, str | None]] = {}


def claude_executable(env: Mapping[str, str] | None = None) -> str | None:
    """The `claude` a claude-code run starts: BLACKBOARD_CLAUDE (a path, or a name on PATH), else
    `claude` on PATH; None when it is not there."""
    env = os.environ if env is None else env
    named = env.get("BLACKBOARD_CLAUDE") or "claude"
    return shutil.which(named, path=env.get("PATH"))


def missing(runner: str, env: Mapping[str, str] | None = None) -> str | None:
    """What `runner` lacks to start, said with how to get it; None when it can start. Kept for a
    couple of seconds per runner, BLACKBOARD_CLAUDE and PATH, so a folder of many files costs one look."""
    env = os.environ if env is None else env
    key = (runner, env.get("BLACKBOARD_CLAUDE"), env.get("PATH"))
    if (known := _answers.get(key)) is not None and time.monotonic() - known[0] < FRESH_FOR:
        return known[1]
    answer = _look(runner, env)
    _answers[key] = (time.monotonic(), answer)
    return answer


def _look(runner: str, env: Mapping[str, str]) -> str | None:
    if runner == "claude-code":
        if claude_executable(env) is not None:
            return None
        if env.get("BLACKBOARD_CLAUDE"):
            return (
                f"the claude-code runner needs Claude Code, but BLACKBOARD_CLAUDE={env['BLACKBOARD_CLAUDE']!r} "
                "is not an executable (set it to the path of `claude`)"
            )
        return (
            "the claude-code runner needs Claude Code's `claude` executable, which is not on PATH "
            "(install it: npm install -g @anthropic-ai/claude-code, or set BLACKBOARD_CLAUDE to its path)"
        )
    if runner in ("anthropic", "openai"):
        if importlib.util.find_spec(runner) is not None:
            return None
        return (
            f"the {runner} runner needs the {runner} Python SDK, which is not installed "
            f"(pip install 'agent-blackboard[{runner}]')"
        )
    return f"there is no runner {runner!r}; the runners are {', '.join(RUNNERS)}"
