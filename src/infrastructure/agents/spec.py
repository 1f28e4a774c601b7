"""The keys of an agent file that the blackboard owns, validated, and their errors said in plain words."""

from __future__ import annotations

import hashlib
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Strict,
    Tag,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from blackboard.domain.errors import InvalidInput
from blackboard.domain.retries import Backoff, RetryPolicy

# What Claude Code's loader accepts (2.1.x: any text that does not start with `-`; collections name agents
# `powershell-5.1-expert`), within what every interface can carry: at most 200 characters (the columns an
# agent's name is stored in), no control character, no space at either end.
NAME_PATTERN = r"^[^\s\x00-\x1f\x7f-](?:[^\x00-\x1f\x7f]{0,198}[^\s\x00-\x1f\x7f])?$"
NAME_RULE = (
    "must be 1 to 200 characters, not starting with a hyphen, with no control character and no space at "
    "either end"
)
# An agent's name also names files (a started worker's log) and reaches Claude Code's own files: no path
# separator, and not `.` or `..`, whatever Claude Code's loader takes (`path_slug` is what a path holds)
AGENT_NAME_PATTERN = r"^[^\s\x00-\x1f\x7f/\\-](?:[^\x00-\x1f\x7f/\\]{0,198}[^\s\x00-\x1f\x7f/\\])?$"
AGENT_NAME_RULE = (
    "must be 1 to 200 characters, not starting with a hyphen, with no control character (NUL included), no "
    "slash or backslash and no space at either end, and not . or .."
)
_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
ENTRYPOINT_PATTERN = rf"^{_IDENTIFIER}(\.{_IDENTIFIER})*:{_IDENTIFIER}$"  # module.path:function

# strict: YAML `yes` or `"0.9"` is a mistake to report, not a number to guess (ints are still fine)
Number = Annotated[float, Strict()]
Score = Annotated[Number, Field(ge=0.0, le=1.0)]
CapabilityName = Annotated[str, Field(min_length=1)]


class CapabilitySpec(BaseModel):
    """One entry of the list form: `- {type: RESEARCH, score: 0.95}`."""

    model_config = ConfigDict(extra="forbid")

    type: CapabilityName
    score: Score


def _capabilities_form(value: Any) -> str:
    return "mapping" if isinstance(value, dict) else "list"


# Either `[{type, score}, ...]` or the shorthand `{RESEARCH: 0.95}`; the discriminator picks one form,
# so an error names the field in the form the author wrote instead of listing both alternatives.
Capabilities = Annotated[
    Annotated[list[CapabilitySpec], Field(min_length=1), Tag("list")]
    | Annotated[dict[CapabilityName, Score], Field(min_length=1), Tag("mapping")],
    Discriminator(_capabilities_form),
]


def _seconds(value: Any) -> Any:
    """A wait as the file writes it: a number of seconds, or a duration such as `500ms`, `10s`, `2m`, `1h`."""
    if isinstance(value, str):
        text = value.strip().lower()
        for unit, factor in (("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)):
            number = text.removesuffix(unit).strip()
            if text.endswith(unit) and number.replace(".", "", 1).isdigit():
                return float(number) * factor
    return value


Seconds = Annotated[Number, BeforeValidator(_seconds)]
Attempts = Annotated[int, Strict(), Field(ge=1, le=1000)]


class RetrySpec(BaseModel):
    """The mapping form of `retries` (docs/agents.md): how many attempts, and the wait between them."""

    model_config = ConfigDict(extra="forbid")

    max_attempts: Attempts
    backoff: Literal["exponential", "fixed"] = "exponential"
    initial: Seconds = 1.0
    max: Seconds = 300.0
    jitter: Number = 0.1

    @model_validator(mode="after")
    def _sensible(self) -> RetrySpec:
        self.policy()  # the domain's rules: a negative wait, max below initial, jitter outside 0..1
        return self

    def policy(self) -> RetryPolicy:
        try:
            return RetryPolicy(
                max_attempts=self.max_attempts,
                backoff=Backoff(self.backoff),
                initial=self.initial,
                max=self.max,
                jitter=self.jitter,
            )
        except InvalidInput as bad:
            raise PydanticCustomError("retry_rule", "{rule}", {"key": bad.field, "rule": bad.rule}) from None


def _retries_form(value: Any) -> str:
    return "mapping" if isinstance(value, dict) else "number"


Retries = Annotated[
    Annotated[Attempts, Tag("number")] | Annotated[RetrySpec, Tag("mapping")], Discriminator(_retries_form)
]


def retry_policy(retries: int | RetrySpec | None) -> RetryPolicy | None:
    """The file's `retries` as the domain's policy: `retries: 3` is three attempts with the default backoff."""
    if retries is None:
        return None
    if isinstance(retries, RetrySpec):
        return retries.policy()
    return RetryPolicy(max_attempts=retries)


def _not_dots(name: str) -> str:
    """`.` and `..` pass the pattern (it has no look-ahead) and name folders: refused as the pattern refuses."""
    if name in (".", ".."):
        raise PydanticCustomError("string_pattern_mismatch", "String should match pattern")
    return name


class ConcurrencySpec(BaseModel):
    """`concurrency: {key: openai, max: 4}`: at most `max` signals claimed at once under `key`, across
    every agent naming it (docs/control.md, "Limits")."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(pattern=NAME_PATTERN)
    max: Annotated[int, Strict(), Field(ge=1)]


class RateLimitSpec(BaseModel):
    """`rate_limit: {key: anthropic, requests_per_minute: 50, tokens_per_minute: 40000}`: the agent's calls
    to its model API share the key's window with every agent naming it (docs/control.md, "Rate limits")."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(pattern=NAME_PATTERN)
    requests_per_minute: Annotated[int, Strict(), Field(ge=1)] | None = None
    tokens_per_minute: Annotated[int, Strict(), Field(ge=1)] | None = None

    @model_validator(mode="after")
    def _something(self) -> RateLimitSpec:
        if self.requests_per_minute is None and self.tokens_per_minute is None:
            raise PydanticCustomError("rate_limit_empty", "give requests_per_minute or tokens_per_minute")
        return self


class EstimateSpec(BaseModel):
    """`estimate: {usd: 0.5, tokens: 100000}`: what one run of the agent is expected to spend at most, which
    its claim reserves of the board's budget while it runs (docs/control.md, "Limits")."""

    model_config = ConfigDict(extra="forbid")

    usd: Number | None = Field(default=None, gt=0)
    tokens: Annotated[int, Strict(), Field(ge=1)] | None = None

    @model_validator(mode="after")
    def _something(self) -> EstimateSpec:
        if self.usd is None and self.tokens is None:
            raise PydanticCustomError("estimate_empty", "give usd or tokens (or both)")
        return self


class AgentFileSpec(BaseModel):
    """Our keys of the frontmatter, and Claude Code's `description`, `model` and `tools`. Other keys
    (`color`, `hooks` ...) are kept in `model_extra`."""

    model_config = ConfigDict(extra="allow")

    name: Annotated[str, Field(pattern=AGENT_NAME_PATTERN), AfterValidator(_not_dots)]
    capabilities: Capabilities | None = None  # None: the name is the capability (shapes.py)
    threshold: Score | None = None
    command: str | None = None
    entrypoint: str | None = Field(default=None, pattern=ENTRYPOINT_PATTERN)
    timeout: Number | None = Field(default=None, gt=0)
    # seconds a runner's run may show no progress before it is stopped as stalled; 0: never (docs/agents.md)
    stall_timeout: Number | None = Field(default=None, ge=0)
    # who runs a file with no handler (docs/agents.md, "Runners"); claude-code when it names none
    runner: Literal["claude-code", "anthropic", "openai"] | None = None
    max_turns: Annotated[int, Strict(), Field(ge=1)] | None = None
    max_budget_usd: Number | None = Field(default=None, gt=0)
    retries: Retries | None = None  # automatic retries (docs/agents.md, "Retries")
    concurrency: ConcurrencySpec | None = None
    estimate: EstimateSpec | None = None  # what one run is expected to spend (a runner's run reserves it)
    rate_limit: RateLimitSpec | None = None  # its model calls share a key's window (a runner's run)
    description: Any = None  # Claude Code's keys: read as they come, normalised by `text` and `names`
    model: Any = None
    tools: Any = None

    @model_validator(mode="after")
    def _one_handler(self) -> AgentFileSpec:
        named = [self.command, self.entrypoint, self.runner]
        if sum(value is not None for value in named) > 1:  # which would a worker run?
            raise PydanticCustomError("one_handler", "name one handler, not several")
        return self

    def capability_pairs(self) -> list[tuple[str, float]]:
        """(type, score) pairs whichever form the file used, in the file's order; the name at 1.0 when
        the file declares none."""
        if self.capabilities is None:
            return [(self.name, 1.0)]
        if isinstance(self.capabilities, dict):
            return list(self.capabilities.items())
        return [(c.type, c.score) for c in self.capabilities]


def field_path(loc: tuple[int | str, ...]) -> str:
    """`("capabilities", "list", 1, "score")` -> `capabilities[1].score`; a shorthand key reads
    `capabilities.RESEARCH`. The form tags the discriminator adds are dropped."""
    text, in_mapping = "", False
    for part in loc:
        if part in ("number", "mapping") and text == "retries":
            continue
        if part in ("list", "mapping", "[key]") and text == "capabilities":
            in_mapping = part == "mapping"
            continue
        if part == "[key]":
            continue
        if isinstance(part, int) and not in_mapping:
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "frontmatter"


def _got(value: Any) -> str:
    return f"got {value!r}" if isinstance(value, str) else f"got {value}"


def plain_message(error: Any) -> str:
    """One pydantic error as `field: rule, got value`."""
    kind, field, value = error["type"], field_path(error["loc"]), error.get("input")
    leaf = field.rsplit(".", 1)[-1]
    if error["loc"][-1:] == ("[key]",):
        return f"{field_path(error['loc'][:2])}: {value!r} is not a capability name (non-empty text)"
    if kind == "one_handler":
        return (
            "command, entrypoint, runner: name one way to run the agent (a shell command, a Python function "
            "or a runner), not several"
        )
    if kind == "missing":
        return f"{field}: is required"
    if kind == "retry_rule":
        return f"{field}.{error['ctx']['key']}: {error['ctx']['rule']}"
    if field.startswith("estimate"):
        return _estimate_message(kind, field, value)
    if field.startswith("rate_limit"):
        return _rate_limit_message(kind, field, value)
    if field.startswith("retries"):
        return _retries_message(kind, field, leaf, value)
    is_score = leaf in ("score", "threshold") or field.startswith("capabilities")
    if kind in ("greater_than_equal", "less_than_equal") and is_score:
        return f"{field}: must be between 0 and 1, {_got(value)}"
    if kind == "greater_than" and leaf == "timeout":
        return f"{field}: must be a positive number of seconds, {_got(value)}"
    if kind == "greater_than_equal" and leaf == "stall_timeout":
        return f"{field}: must be a number of seconds, 0 or more (0: never stalls), {_got(value)}"
    if kind == "greater_than" and leaf == "max_budget_usd":
        return f"{field}: must be a positive number of US dollars, {_got(value)}"
    if leaf == "max_turns" and kind in ("greater_than_equal", "int_type", "int_parsing", "int_from_float"):
        return f"{field}: must be a whole number of turns, 1 or more, {_got(value)}"
    if field == "concurrency.max" and kind in (
        "greater_than_equal",
        "int_type",
        "int_parsing",
        "int_from_float",
    ):
        return f"{field}: must be a whole number of signals, 1 or more, {_got(value)}"
    if field == "concurrency.key" and kind in ("string_pattern_mismatch", "string_type"):
        return f"{field}: must be a name (non-empty text) {NAME_RULE}, {_got(value)}"
    if field == "concurrency" and kind == "model_type":
        return f"{field}: must be a mapping such as {{key: openai, max: 4}}, {_got(value)}"
    if kind == "literal_error" and leaf == "runner":
        return f"{field}: must be claude-code, anthropic or openai, {_got(value)}"
    if kind == "string_pattern_mismatch" and leaf == "name":
        return f"{field}: {AGENT_NAME_RULE}, {_got(value)}"
    if kind == "string_pattern_mismatch" and leaf == "entrypoint":
        return (
            f"{field}: must be module.path:function, Python names joined by dots, a colon, then the "
            f"function's name (e.g. handlers.research:handle), {_got(value)}"
        )
    if kind == "too_short" and field == "capabilities":
        return f"{field}: must declare at least one capability"
    if kind in ("float_parsing", "float_type", "float_parsing_strict"):
        return f"{field}: must be a number, {_got(value)}"
    if kind == "extra_forbidden":
        return f"{field}: is not a key of a capability (use type and score)"
    if kind == "list_type" and field == "capabilities":
        return f"{field}: must be a list of {{type, score}} or a mapping of type to score, {_got(value)}"
    message = str(error["msg"])
    return f"{field}: {message[0].lower()}{message[1:]}, {_got(value)}"


def _estimate_message(kind: str, field: str, value: Any) -> str:
    """`estimate` is a mapping of usd and tokens; say the rule of the part the author wrote."""
    if kind == "estimate_empty":
        return f"{field}: give usd or tokens (or both), such as {{usd: 0.5, tokens: 100000}}"
    if field == "estimate.usd":
        return f"{field}: must be a positive number of US dollars, {_got(value)}"
    if field == "estimate.tokens":
        return f"{field}: must be a whole number of tokens, 1 or more, {_got(value)}"
    if kind == "extra_forbidden":
        return f"{field}: is not a key of estimate (use usd and tokens)"
    return f"{field}: must be a mapping such as {{usd: 0.5, tokens: 100000}}, {_got(value)}"


def _rate_limit_message(kind: str, field: str, value: Any) -> str:
    """`rate_limit` is a mapping of key, requests_per_minute and tokens_per_minute; say the rule broken."""
    example = "{key: anthropic, requests_per_minute: 50, tokens_per_minute: 40000}"
    if kind == "rate_limit_empty":
        return f"{field}: give requests_per_minute or tokens_per_minute (or both), such as {example}"
    if field == "rate_limit.key":
        if kind == "missing":
            return f"{field}: is required"
        return f"{field}: must be a name (non-empty text) {NAME_RULE}, {_got(value)}"
    if field == "rate_limit.requests_per_minute":
        return f"{field}: must be a whole number of requests, 1 or more, {_got(value)}"
    if field == "rate_limit.tokens_per_minute":
        return f"{field}: must be a whole number of tokens, 1 or more, {_got(value)}"
    if kind == "extra_forbidden":
        return f"{field}: is not a key of rate_limit (use key, requests_per_minute and tokens_per_minute)"
    return f"{field}: must be a mapping such as {example}, {_got(value)}"


def _retries_message(kind: str, field: str, leaf: str, value: Any) -> str:
    """`retries` is a whole number of attempts or a mapping; say the rule of the part the author wrote."""
    whole = isinstance(value, int) and not isinstance(value, bool)
    if leaf == "max_attempts" or (field == "retries" and whole):
        return f"{field}: must be a whole number of attempts from 1 to 1000, {_got(value)}"
    if field == "retries":
        return (
            f"{field}: must be a whole number of attempts or a mapping of max_attempts, backoff, initial, "
            f"max and jitter, {_got(value)}"
        )
    if leaf == "backoff":
        return f"{field}: must be exponential or fixed, {_got(value)}"
    if leaf in ("initial", "max"):
        return f"{field}: must be a number of seconds (or a duration such as 10s, 2m), {_got(value)}"
    if leaf == "jitter":
        return f"{field}: must be a fraction from 0 to 1, {_got(value)}"
    if kind == "extra_forbidden":
        return f"{field}: is not a key of retries (use max_attempts, backoff, initial, max, jitter)"
    return f"{field}: {kind}, {_got(value)}"


def plain_messages(exc: ValidationError) -> list[str]:
    return [plain_message(error) for error in exc.errors()]


def text(value: Any) -> str:
    """A description or a model as text, whatever YAML made of it."""
    return "" if value is None else value.strip() if isinstance(value, str) else str(value)


def names(value: Any) -> tuple[str, ...]:
    """`tools` as Claude Code takes it: a comma-separated string (`Read, Grep, Glob`) or a list."""
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else []
    return tuple(dict.fromkeys(str(i).strip() for i in items if i is not None and str(i).strip()))


def path_slug(name: str) -> str:
    """What a path holds for an agent's name: `[a-z0-9.-]`, as the agent-file contract spells names, the
    name itself when it is one; otherwise its letters and digits lowered, other runs of characters a
    hyphen, and a short hash of the name, so two names never share a file (`Good List` -> `good-list-1a2b3c4d`)."""
    slug = re.sub(r"[^a-z0-9.]+", "-", name.lower()).strip("-.")
    if slug == name:
        return slug
    return f"{slug or 'agent'}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
