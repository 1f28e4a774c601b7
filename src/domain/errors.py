"""Domain errors: one class per broken rule, each message naming the rule.

Families let an interface map errors to outcomes without knowing every class. The domain's three:
`RuleViolation` (the state machine refused), `NotFound`, and `InvalidInput`; the application adds
`TimedOut` and `Unavailable` (application/errors.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime


class BlackboardError(Exception):
    """Base of every error the blackboard raises on purpose."""


class RuleViolation(BlackboardError):
    """The command is well formed but the state machine refuses it."""


class NotFound(BlackboardError):
    """The command names something that does not exist."""


class InvalidInput(BlackboardError):
    """A value breaks a validation rule; nothing was written."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule


class SignalNotFound(NotFound):
    def __init__(self, signal_id: str, blackboard_id: str | None = None) -> None:
        where = f" on blackboard {blackboard_id}" if blackboard_id else ""
        super().__init__(f"no signal {signal_id}{where}")
        self.signal_id = signal_id


class UnknownDependency(NotFound):
    def __init__(self, signal_id: str, blackboard_id: str) -> None:
        super().__init__(
            f"after: {signal_id} is not a signal of blackboard {blackboard_id}; "
            "a signal may only wait for signals of its own board"
        )
        self.signal_id = signal_id


class AgentNotFound(NotFound):
    def __init__(self, agent_id: str) -> None:
        super().__init__(f"no agent named {agent_id} in the registry")
        self.agent_id = agent_id


class DuplicateSignal(RuleViolation):
    def __init__(self, signal_id: str) -> None:
        super().__init__(f"{signal_id} is already on this blackboard; signal ids are unique")
        self.signal_id = signal_id


class SignalNotClaimable(RuleViolation):
    def __init__(self, signal_id: str, status: str, claimed_by: str | None = None) -> None:
        by = f" by {claimed_by}" if claimed_by else ""
        super().__init__(f"{signal_id} is {status}{by}; only POSTED signals can be claimed")
        self.signal_id = signal_id
        self.status = status
        self.claimed_by = claimed_by


class AlreadyClaimed(SignalNotClaimable):
    """The ordinary outcome of losing a claim race."""


class DependenciesPending(RuleViolation):
    def __init__(self, signal_id: str, pending: Iterable[str]) -> None:
        waiting = ", ".join(sorted(pending))
        super().__init__(
            f"{signal_id} waits for {waiting}; a signal can be claimed only after every "
            "signal it comes after has COMPLETED"
        )
        self.signal_id = signal_id
        self.pending = tuple(sorted(pending))


class NotYetDue(RuleViolation):
    def __init__(self, signal_id: str, not_before: datetime | None) -> None:
        when = f"{not_before:%Y-%m-%d %H:%M:%S} UTC" if not_before else "later"
        super().__init__(f"{signal_id} is not claimable before {when} (posted with --not-before)")
        self.signal_id = signal_id
        self.not_before = not_before


class BelowThreshold(RuleViolation):
    def __init__(self, signal_id: str, agent_id: str, score: float, threshold: float) -> None:
        super().__init__(
            f"{agent_id} scores {score:.2f} for {signal_id}; an agent may claim only when its "
            f"score is above its threshold {threshold:.2f}"
        )
        self.signal_id = signal_id
        self.agent_id = agent_id
        self.score = score
        self.threshold = threshold


class NotTheClaimer(RuleViolation):
    def __init__(self, signal_id: str, agent_id: str, claimed_by: str) -> None:
        super().__init__(
            f"{signal_id} is CLAIMED by {claimed_by}, not {agent_id}; "
            "only the claimer completes or fails a signal"
        )
        self.signal_id = signal_id
        self.agent_id = agent_id
        self.claimed_by = claimed_by


class RunChargedAlready(RuleViolation):
    """A run's spend is charged once per attempt (AgentSignalRunCharged): that attempt's is already."""

    def __init__(self, signal_id: str, attempt: int) -> None:
        super().__init__(
            f"{signal_id}: the run of attempt {attempt} was charged already; a run is charged once"
        )
        self.signal_id = signal_id
        self.attempt = attempt


class StaleClaim(RuleViolation):
    """A claim token that is not the current claim's: its worker lost the claim (presumed dead)."""

    def __init__(self, signal_id: str, claimed_by: str, action: str) -> None:
        super().__init__(
            f"{signal_id} is CLAIMED by {claimed_by} under another claim token; it can be {action} only "
            "with the token of the current claim (a worker presumed dead lost its claim)"
        )
        self.signal_id = signal_id


class InvalidTransition(RuleViolation):
    def __init__(self, signal_id: str, status: str, action: str, allowed: Iterable[str]) -> None:
        states = " or ".join(sorted(allowed))
        super().__init__(f"{signal_id} is {status}; only {states} signals can be {action}")
        self.signal_id = signal_id
        self.status = status
        self.action = action


class SignalExpired(InvalidTransition):
    """The signal ran out of time: it was swept, or the command that found it past its deadline expired it."""

    def __init__(self, signal_id: str, action: str, allowed: str, at: datetime | None, reason: str) -> None:
        when = f" at {at:%Y-%m-%d %H:%M:%S} UTC" if at else ""
        RuleViolation.__init__(
            self,
            f"{signal_id} is EXPIRED: it expired{when} ({reason}); only {allowed} signals can be {action}",
        )
        self.signal_id, self.status, self.action = signal_id, "EXPIRED", action
        self.at = at
        self.reason = reason


class GateNotClaimable(SignalNotClaimable):
    """A gate is decided by a person (`approve`, `reject`); no agent claims it."""

    def __init__(self, signal_id: str) -> None:
        RuleViolation.__init__(
            self, f"{signal_id} is a gate; no agent claims a gate, a person approves or rejects it"
        )
        self.signal_id, self.status, self.claimed_by = signal_id, "POSTED", None


class NotAGate(RuleViolation):
    def __init__(self, signal_id: str, action: str) -> None:
        super().__init__(f"{signal_id} is not a gate; only a gate (post --gate) can be {action}")
        self.signal_id = signal_id


class GateNotOpen(RuleViolation):
    """The gate still waits for its upstreams, or for its `not_before`."""

    def __init__(self, signal_id: str, action: str, why: str) -> None:
        super().__init__(f"gate {signal_id} is not open yet ({why}); it can be {action} once it is")
        self.signal_id = signal_id


class TakesNoInput(RuleViolation):
    """A nudge for a run that reads no input while it runs: a command or entrypoint handler's, or a claim
    taken outside a worker's runner (`claim` by hand)."""

    def __init__(self, signal_id: str, claimed_by: str | None) -> None:
        super().__init__(
            f"{signal_id} is CLAIMED by {claimed_by}, whose run cannot take a nudge: it is no runner's run (a "
            "command or entrypoint handler, or a claim taken by hand), so nothing reads input while it runs; "
            "only a run of the claude-code, anthropic or openai runner takes one"
        )
        self.signal_id = signal_id
