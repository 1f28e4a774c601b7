"""Capability scoring: how well an agent fits a signal, and who may volunteer for it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, InstanceOf, field_validator

from blackboard.domain.limits import ConcurrencyLimit
from blackboard.domain.rates import RateLimit
from blackboard.domain.reservations import Spending
from blackboard.domain.retries import RetryPolicy
from blackboard.domain.thresholds import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD  # the settings read it there

AUTO = "auto"  # a target meaning: whoever's text fits the signal's topic and prompt (docs/matching.md)


def targets_auto(signal: Targeted) -> bool:
    """Whether the signal asks for the agents whose text fits it best (`post --capability auto`)."""
    return any(t.casefold() == AUTO for t in signal.target_capabilities)


def canonical_capability(name: str) -> str:
    """The one form capability names are compared in: upper case, so `review`, `Review` and `REVIEW` are
    one capability. Agents' capabilities are kept in it; a signal keeps its targets as posted, and each
    comparison puts them in it."""
    return name.strip().upper()


def targets_capability(signal: Targeted, capability: str) -> bool:
    """Whether the signal targets the capability (in canonical form), whatever the case it was posted in."""
    targets = signal.target_capabilities
    return capability in targets or any(canonical_capability(t) == capability for t in targets)


class Targeted(Protocol):
    """Anything scored against capabilities: a signal, or a candidate for one."""

    @property
    def target_capabilities(self) -> tuple[str, ...]: ...


class AgentCapability(BaseModel):
    """One kind of work an agent can do, and how well (0..1)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    type: str = Field(min_length=1)
    score: float = Field(ge=0.0, le=1.0)

    @field_validator("type")
    @classmethod
    def _canonical(cls, value: str) -> str:
        return canonical_capability(value) or value

    def matches(self, signal: Targeted) -> bool:
        return targets_capability(signal, self.type)

    def score_for(self, signal: Targeted) -> float:
        return self.score if self.matches(signal) else 0.0


class AgentProfile(BaseModel):
    """An agent as the blackboard sees it: its name, capabilities and optional own threshold."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    agent_id: str = Field(min_length=1)
    capabilities: tuple[AgentCapability, ...] = Field(min_length=1)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    retries: InstanceOf[RetryPolicy] | None = None  # its file's `retries`; None: one attempt, no retry
    concurrency: ConcurrencyLimit | None = None  # at most N claimed at once under a key (domain/limits.py)
    rate_limit: RateLimit | None = None  # its calls share a key's window (domain/rates.py)
    # how its runs spend (domain/reservations.py); None: they record no usage (a handler), reserve nothing
    spending: InstanceOf[Spending] | None = None

    def score(self, signal: Targeted) -> float:
        """The agent's best score among the capabilities the signal targets (0 when none)."""
        return max((c.score_for(signal) for c in self.capabilities), default=0.0)

    def score_for_capability(self, capability: str) -> float:
        wanted = canonical_capability(capability)
        return max((c.score for c in self.capabilities if c.type == wanted), default=0.0)

    def with_text_score(self, score: float) -> TextScored:
        """The agent as it scores for one signal targeting `auto`: its text score for that signal."""
        return TextScored(self, min(1.0, max(0.0, score)))

    def threshold_or(self, default: float) -> float:
        return default if self.threshold is None else self.threshold

    def may_claim(self, signal: Targeted, default_threshold: float = DEFAULT_THRESHOLD) -> bool:
        """Self-selection: the score must be strictly above the agent's threshold."""
        return self.score(signal) > self.threshold_or(default_threshold)


class Claimant(Protocol):
    """An agent as the claim rules see it: a profile, or a profile scored by text for one signal."""

    @property
    def agent_id(self) -> str: ...

    def score(self, signal: Targeted) -> float: ...

    def threshold_or(self, default: float) -> float: ...


@dataclass(frozen=True, slots=True)
class TextScored:
    """An agent for one signal targeting `auto`: its text score for the signal counts as a capability `auto`
    (one the agent declared itself is ignored: the word is reserved). A plain value, cheap to make for every
    agent of a large registry on each match."""

    profile: AgentProfile
    text_score: float

    @property
    def agent_id(self) -> str:
        return self.profile.agent_id

    def score(self, signal: Targeted) -> float:
        targets = signal.target_capabilities
        if len(targets) == 1 and targets[0].casefold() == AUTO:  # the usual case, on every agent of a match
            return self.text_score
        declared = max(
            (c.score for c in self.profile.capabilities if c.type.casefold() != AUTO and c.matches(signal)),
            default=0.0,
        )
        return max(declared, self.text_score) if targets_auto(signal) else declared

    def threshold_or(self, default: float) -> float:
        return self.profile.threshold_or(default)


@dataclass(frozen=True, slots=True)
class Volunteer:
    agent: Claimant
    score: float
    threshold: float

    @property
    def passes(self) -> bool:
        return self.score > self.threshold


def rank(
    signal: Targeted, agents: Iterable[Claimant], default_threshold: float = DEFAULT_THRESHOLD
) -> list[Volunteer]:
    """Every agent with its score for the signal, best first (ties by name, for a stable order)."""
    ranked = [Volunteer(a, a.score(signal), a.threshold_or(default_threshold)) for a in agents]
    return sorted(ranked, key=lambda v: (-v.score, v.agent.agent_id))


def volunteers(
    signal: Targeted, agents: Iterable[Claimant], default_threshold: float = DEFAULT_THRESHOLD
) -> list[Volunteer]:
    """The agents allowed to claim the signal, best fit first."""
    return [v for v in rank(signal, agents, default_threshold) if v.passes]
