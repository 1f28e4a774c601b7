"""Agents declared as Markdown files with YAML frontmatter (docs/agents.md)."""

from blackboard.infrastructure.agents.parsing import (
    AgentDefinition,
    AgentFileInvalid,
    AgentFileProblem,
    read_agent_file,
)
from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry

__all__ = [
    "AgentDefinition",
    "AgentFileInvalid",
    "AgentFileProblem",
    "FrontmatterAgentRegistry",
    "read_agent_file",
]
