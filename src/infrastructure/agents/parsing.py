"""Reading one agent file: Markdown with YAML frontmatter becomes an AgentDefinition or a list of problems."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from blackboard.domain.capabilities import AgentCapability, AgentProfile
from blackboard.domain.limits import ConcurrencyLimit
from blackboard.domain.rates import RateLimit
from blackboard.domain.reservations import Spending
from blackboard.infrastructure.agents.lenient import Frontmatter, read_frontmatter
from blackboard.infrastructure.agents.shapes import usable_capabilities
from blackboard.infrastructure.agents.spec import AgentFileSpec, names, plain_messages, retry_policy, text

MAX_FILE_BYTES = 1024 * 1024  # an agent file is a page of text; a bigger one is something else


@dataclass(frozen=True, slots=True)
class AgentFileProblem:
    """A rule one agent file breaks (or, as a warning, a way it was read leniently); `message` starts
    with the field it concerns, and `fix` says what to change, when that is not plain from the rule."""

    path: Path
    message: str
    fix: str = ""

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" + (f" (fix: {self.fix})" if self.fix else "")


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """Everything an agent file says: the profile the blackboard scores, and what a worker needs to run it."""

    profile: AgentProfile
    path: Path
    description: str = ""
    command: str | None = None
    entrypoint: str | None = None  # `package.module:function`, run in the worker's process
    timeout: float | None = None  # seconds
    stall_timeout: float | None = (
        None  # seconds a runner's run may show no progress (0: never; None: default)
    )
    runner: str | None = None  # the file's `runner`, as written (None: none named)
    max_turns: int | None = None  # a runner's run may take at most this many turns
    max_budget_usd: float | None = None  # and spend at most this much
    estimate_usd: float | None = None  # what one run is expected to spend (`estimate`): what a claim reserves
    estimate_tokens: int | None = None
    instructions: str = ""  # the Markdown body: the agent's system prompt
    model: str | None = None  # Claude Code's `model` (sonnet, opus, inherit, a model id ...), as written
    tools: tuple[str, ...] = ()  # Claude Code's `tools`, from a comma-separated string or a list
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys we do not own, as written
    warnings: tuple[AgentFileProblem, ...] = ()  # how the file was read leniently; it loads all the same

    @property
    def name(self) -> str:
        return self.profile.agent_id

    @property
    def has_handler(self) -> bool:
        return bool(self.command or self.entrypoint)

    @property
    def runner_name(self) -> str | None:
        """The runner a worker uses for it: the file's `runner`, else claude-code when the file has no
        handler (docs/agents.md); None for a file with a command or an entrypoint."""
        from blackboard.infrastructure.runners.catalog import DEFAULT_RUNNER

        return None if self.has_handler else (self.runner or DEFAULT_RUNNER)

    @property
    def runner_missing(self) -> str | None:
        """What its runner lacks to start (and how to get it); None when it has a handler or its runner can start."""
        from blackboard.infrastructure.runners.catalog import missing

        runner = self.runner_name
        return None if runner is None else missing(runner)

    @property
    def runnable(self) -> bool:
        """Whether a worker can run this agent: a command, an entrypoint, or a runner that can start."""
        return self.has_handler or self.runner_missing is None

    def handler_view(self) -> dict[str, Any]:
        """What a handler is told about its agent (the `agent` object of the document it gets)."""
        return {
            "name": self.name,
            "description": self.description,
            "instructions": self.instructions,
            "model": self.model,
            "tools": list(self.tools),
        }


class AgentFileInvalid(Exception):
    """An agent file breaks one or more rules of docs/agents.md."""

    def __init__(self, path: Path, messages: list[str | tuple[str, str]]) -> None:
        pairs = [(m, "") if isinstance(m, str) else m for m in messages]
        super().__init__(f"{path}: " + "; ".join(m for m, _ in pairs))
        self.problems = [AgentFileProblem(path, m, fix) for m, fix in pairs]


def _frontmatter(path: Path, text: str) -> tuple[Frontmatter, str]:
    import frontmatter  # imported when a file is read: a command that reads no agent file skips it
    import yaml

    handler = frontmatter.YAMLHandler()
    text = text.lstrip("\ufeff").strip()
    if not handler.detect(text):
        raise AgentFileInvalid(
            path, [("frontmatter: is missing", "start the file with a block between --- lines")]
        )
    try:
        head, body = handler.split(text)
    except ValueError:  # an opening --- without a closing one
        raise AgentFileInvalid(
            path, [("frontmatter: has no closing --- line", "end the block with a --- line")]
        ) from None
    try:
        read = read_frontmatter(head)
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: a value YAML types but cannot build
        raise AgentFileInvalid(
            path, [(f"frontmatter: is not valid YAML: {_yaml_reason(exc)}", "fix the YAML")]
        ) from None
    if read.errors:
        raise AgentFileInvalid(path, list(read.errors))
    if not isinstance(read.data, dict):
        kind = type(read.data).__name__
        raise AgentFileInvalid(
            path,
            [(f"frontmatter: must be a mapping of keys to values, got a {kind}", "write key: value lines")],
        )
    return read, body.strip()


def _yaml_reason(exc: Any) -> str:
    import yaml

    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        # the YAML text starts on the opening --- line (its remainder is empty), and marks count from 0
        return f"{exc.problem} (line {exc.problem_mark.line + 1} of the file)"
    return str(exc)


def _text_of(path: Path) -> str:
    """The file's text, refused when it is too big, binary or not UTF-8 (unreadable: OSError)."""
    with path.open("rb") as file:
        raw = file.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise AgentFileInvalid(
            path,
            [
                (
                    f"file: is bigger than {MAX_FILE_BYTES // 1024} KiB, too big for an agent file",
                    "move it out of the agents folder",
                )
            ],
        )
    if b"\0" in raw:
        raise AgentFileInvalid(
            path, [("file: is binary (it holds NUL bytes)", "move it out of the agents folder")]
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise AgentFileInvalid(path, [("file: is not UTF-8 text", "save it as UTF-8")]) from None


def read_agent_file(path: Path) -> AgentDefinition:
    """Parse and validate one agent file. Raises AgentFileInvalid naming every rule it breaks, OSError
    when it cannot be read."""
    read, body = _frontmatter(path, _text_of(path))
    data = dict(read.data)
    warnings = [AgentFileProblem(path, m, fix) for m, fix in read.warnings]
    declared = data.get("capabilities")
    scores, ignored = usable_capabilities(declared, str(data.get("name") or ""))
    data["capabilities"] = scores
    if ignored:
        warnings.append(AgentFileProblem(path, *ignored))
    try:
        spec = AgentFileSpec.model_validate(data)
    except ValidationError as exc:
        raise AgentFileInvalid(path, plain_messages(exc)) from None
    estimate = spec.estimate
    usd, tokens = (None, None) if estimate is None else (estimate.usd, estimate.tokens)
    # a runner's runs record usage: they reserve (the runner's model priced or not: the registry says)
    runs_record_usage = not (spec.command or spec.entrypoint)
    profile = AgentProfile(
        agent_id=spec.name,
        capabilities=tuple(AgentCapability(type=t, score=s) for t, s in spec.capability_pairs()),
        threshold=spec.threshold,
        retries=retry_policy(spec.retries),
        concurrency=None
        if spec.concurrency is None
        else ConcurrencyLimit(key=spec.concurrency.key, max=spec.concurrency.max),
        spending=Spending(usd, tokens, spec.max_budget_usd) if runs_record_usage else None,
        rate_limit=None
        if spec.rate_limit is None
        else RateLimit(
            key=spec.rate_limit.key,
            requests_per_minute=spec.rate_limit.requests_per_minute,
            tokens_per_minute=spec.rate_limit.tokens_per_minute,
        ),
    )
    extra = dict(spec.model_extra or {})
    if ignored and declared is not None:
        extra["capabilities"] = declared  # a collection's own use of the key, kept as written
    return AgentDefinition(
        profile=profile,
        path=path,
        description=text(spec.description),
        command=spec.command,
        entrypoint=spec.entrypoint,
        timeout=spec.timeout,
        stall_timeout=spec.stall_timeout,
        runner=spec.runner,
        max_turns=spec.max_turns,
        max_budget_usd=spec.max_budget_usd,
        estimate_usd=usd,
        estimate_tokens=tokens,
        instructions=body,
        model=text(spec.model) or None,
        tools=names(spec.tools),
        extra=MappingProxyType(extra),
        warnings=tuple(warnings),
    )
