"""Reservations (docs/control.md, "Limits"): what a claim holds of its board's budget while its run goes.

A run that records usage (an agent run by a runner) reserves, when it is claimed, what it may spend: its
agent file's `estimate`, else its bounds (the file's `max_budget_usd` and the signal's `budget_usd`, the
smaller). Against a limit of the board's budget it has no bound for, it reserves all that is left of that
limit: such a run runs alone on the budget, and the board overshoots by at most what that one run spends
past it. A claim is refused while its reservation would take what the board's runs spent and what its
open claims reserved past the budget; when the run ends (completed, failed, retried, expired, cancelled)
its reservation is gone and what it recorded counts as spent, with the same event. A run that records no
usage (a command handler, an entrypoint) reserves nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

USD_SLACK = 1e-9  # sums of floats (0.1 + 0.2) must not refuse a reservation that fits to the cent


class Reservation(BaseModel):
    """What one claim reserved of its board's budget (None: nothing of that kind)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    usd: float | None = Field(default=None, ge=0)
    tokens: int | None = Field(default=None, ge=0)


@dataclass(frozen=True, slots=True)
class Spending:
    """How an agent's runs spend, as its file and its runner say (an agent whose runs record no usage has
    none): its `estimate` of one run, its `max_budget_usd`, and the model its runner cannot price (None:
    the runner prices it, or reports its cost itself, as Claude Code does)."""

    estimate_usd: float | None = None
    estimate_tokens: int | None = None
    max_usd: float | None = None
    unpriced_model: str | None = None

    def bounds(self, agent_id: str, signal_budget_usd: float | None) -> tuple[float | None, int | None, str]:
        """What one run may spend, in US dollars and tokens (None: no bound), and where that comes from."""
        if self.estimate_usd is not None or self.estimate_tokens is not None:
            return self.estimate_usd, self.estimate_tokens, f"agent {agent_id}'s estimate"
        given = [b for b in (self.max_usd, signal_budget_usd) if b is not None]
        if not given:
            return None, None, f"agent {agent_id} has no estimate nor bound"
        usd = min(given)
        source = (
            "the signal's budget_usd" if usd == signal_budget_usd else f"agent {agent_id}'s max_budget_usd"
        )
        return usd, None, source


def words(amount: float | int, usd: bool) -> str:
    """$1.25 or 100,005 tokens."""
    return f"${amount:,.4f}".rstrip("0").rstrip(".") if usd else f"{int(amount):,} tokens"
