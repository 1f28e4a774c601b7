"""What `solve` makes of a controller's answer, and how it keeps what it records storable: the decision (its
JSON object bounded in size and depth, its strings such as a store holds, its fields), the capability a posted
step targets and the signal type that gives, and a refusal said in the board's words."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from blackboard.application.json_values import check_json
from blackboard.application.solve.ports import Specialist
from blackboard.domain.signals import SignalType
from blackboard.domain.solve.run import BadDecision, Decision, PostStep, answer_object, decision_of


def read_answer(text: str) -> Decision:
    """The controller's answer as a decision, whatever it holds: the one JSON object of it (bounded in size
    and depth: domain/solve/run.py), its strings such as the store can hold (no NUL, no lone surrogate), then
    the decision's own fields; InvalidInput (a BadDecision among them) saying what is wrong otherwise."""
    found = answer_object(text)
    check_json(found, "decision")
    return decision_of(found)


def refusal(exc: Exception) -> str:
    """A refusal in the board's words: InvalidInput's own, or a command model's rule per field."""
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors()[:3])
    return str(exc)


def storable(text: str, keep: int) -> str:
    """At most `keep` characters of `text`, such as every store holds: NUL and lone surrogates escaped."""
    cut = text[:keep].replace("\x00", "\\x00")
    return cut.encode("utf-8", "backslashreplace").decode("utf-8")


def step_signal_type(capability: str) -> SignalType:
    """A capability that names a signal type (RESEARCH, REVIEW ...) gives it; any other, INVESTIGATION."""
    return SignalType.__members__.get(capability.strip().upper(), SignalType.INVESTIGATION)


def step_capability(decided: PostStep, specialists: Sequence[Specialist]) -> str:
    """The capability the step's signal targets: the one named, which must be the agent's, else its best."""
    by_name = {s.name: s for s in specialists}
    agent = by_name.get(decided.agent)
    if agent is None:
        raise BadDecision(
            f"agent must be one of the specialists ({', '.join(by_name) or 'none'}), got {decided.agent!r}"
        )
    own = [c for c, _ in agent.capabilities]
    if decided.capability is None:
        if not own:
            raise BadDecision(f"{agent.name} has no capability a signal could target")
        return own[0]
    wanted = decided.capability.strip().upper()
    if wanted not in {c.upper() for c in own}:
        raise BadDecision(
            f"capability must be one of {agent.name}'s ({', '.join(own)}), got {decided.capability!r}"
        )
    return next(c for c in own if c.upper() == wanted)
