"""Reading one agent file: Markdown with YAML frontmatter becomes an AgentDefinition or a list of problems."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from blackboard.domain.capabilities import AgentCapability, AgentProfile
from blackboard.infrastructure.agents.spec import AgentFileSpec, plain_messages


@dataclass(frozen=True, slots=True)
class AgentFileProblem:
    """A rule one agent file breaks; `message` starts with the field it concerns."""

    path: Path
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """Everything an agent file says: the profile the blackboard scores, and what a worker needs to run it."""

    profile: AgentProfile
    path: Path
    description: str | None = None
    command: str | None = None
    entrypoint: str | None = None  # `package.module:function`, run in the worker's process
    timeout: float | None = None  # seconds
    instructions: str = ""  # the Markdown body: the agent's system prompt
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys we do not own, as written

    @property
    def name(self) -> str:
        return self.profile.agent_id

    @property
    def runnable(self) -> bool:
        """Whether a worker has something to run for this agent: a command or an entrypoint."""
        return bool(self.command or self.entrypoint)


class AgentFileInvalid(Exception):
    """An agent file breaks one or more rules of contracts/agent-file.md."""

    def __init__(self, path: Path, messages: list[str]) -> None:
        super().__init__(f"{path}: " + "; ".join(messages))
        self.problems = [AgentFileProblem(path, m) for m in messages]


def _frontmatter(path: Path, text: str) -> tuple[dict[str, Any], str]:
    import frontmatter  # imported when a file is read: a command that reads no agent file skips it
    import yaml

    handler = frontmatter.YAMLHandler()
    text = text.lstrip("\ufeff").strip()
    if not handler.detect(text):
        raise AgentFileInvalid(path, ["frontmatter: is missing (start the file with a block between --- lines)"])
    try:
        head, body = handler.split(text)
        data = handler.load(head)
    except ValueError:  # an opening --- without a closing one
        raise AgentFileInvalid(path, ["frontmatter: has no closing --- line"]) from None
    except yaml.YAMLError as exc:
        raise AgentFileInvalid(path, [f"frontmatter: is not valid YAML: {_yaml_reason(exc)}"]) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise AgentFileInvalid(path, [f"frontmatter: must be a mapping of keys to values, got a {type(data).__name__}"])
    return data, body.strip()


def _yaml_reason(exc: Any) -> str:
    import yaml

    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        # the YAML text starts on the opening --- line (its remainder is empty), and marks count from 0
        return f"{exc.problem} (line {exc.problem_mark.line + 1} of the file)"
    return str(exc)


def read_agent_file(path: Path) -> AgentDefinition:
    """Parse and validate one agent file. Raises AgentFileInvalid naming every rule it breaks."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise AgentFileInvalid(path, ["file: is not UTF-8 text"]) from None
    data, body = _frontmatter(path, text)
    try:
        spec = AgentFileSpec.model_validate(data)
    except ValidationError as exc:
        raise AgentFileInvalid(path, plain_messages(exc)) from None
    profile = AgentProfile(
        agent_id=spec.name,
        capabilities=tuple(AgentCapability(type=t, score=s) for t, s in spec.capability_pairs()),
        threshold=spec.threshold,
    )
    return AgentDefinition(
        profile=profile,
        path=path,
        description=spec.description,
        command=spec.command,
        entrypoint=spec.entrypoint,
        timeout=spec.timeout,
        instructions=body,
        extra=MappingProxyType(dict(spec.model_extra or {})),
    )
