"""Runners: an agent file with no handler, run by Claude Code or a model API (docs/agents.md).

One module per runner (`claude_code`, `anthropic`, `openai`), each implementing the application's Runner
port; `catalog` says which runner runs an agent and what each needs; `prompt` builds the run's message,
`usage` counts and prices it, `transcript` keeps it. What comes back is read by the runner, whatever it
holds: `claude_output` (through `lines`) reads Claude Code's output, `anthropic_stream` and `openai_answer`
the APIs' answers (`answers`), and `reported` every figure they report. The SDKs and the executable are
reached only when a run starts.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from blackboard.infrastructure.runners.catalog import RUNNERS

if TYPE_CHECKING:  # the CLI's grammar names the runners (catalog): a command that runs none needs no port
    from blackboard.application.runners import Runner


@cache  # one per process: a model API runner keeps its SDK client (and its connections) across runs
def runner_for(name: str) -> Runner:
    """The runner of that name (one of catalog.RUNNERS)."""
    if name == "claude-code":
        from blackboard.infrastructure.runners.claude_code import ClaudeCodeRunner

        return ClaudeCodeRunner()
    if name == "anthropic":
        from blackboard.infrastructure.runners.anthropic import AnthropicRunner

        return AnthropicRunner()
    if name == "openai":
        from blackboard.infrastructure.runners.openai import OpenAIRunner

        return OpenAIRunner()
    raise LookupError(f"there is no runner {name!r}; the runners are {', '.join(RUNNERS)}")
