"""Telling others: the log's notifier that wakes waiters, the publisher after a commit, and the tracer."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from blackboard.domain.events import BlackboardEvent
from blackboard.domain.signals import AgentSignal, Candidate

if TYPE_CHECKING:
    pass

# ---------------------------------------------------------------- telling


class Tracer:
    """Where the work is traced (docs/operate.md, "Traces"): each command that changed a board, and each
    handler or runner run, told after the fact with when it started, so a tracer makes its spans with
    their real times. This default traces nothing and costs a call."""

    def command(self, cmd: Any, metadata: Mapping[str, Any], outcome: Any, started_ns: int) -> None:
        """A command committed: its metadata (correlation_id, causation_id) and what it returned."""

    def ran(self, signal: AgentSignal, agent_id: str, started_ns: int, succeeded: bool) -> None:
        """A worker ran a handler or runner on a signal it claimed, from `started_ns` until now."""


class EventPublisher(abc.ABC):
    """Tells in-process subscribers about events after they are stored."""

    @abc.abstractmethod
    def publish(self, events: Sequence[BlackboardEvent]) -> None: ...


@dataclass(frozen=True, slots=True)
class LogNews:
    """What some appends did to the claimable signals: every signal they made claimable (`posted`), and
    every signal they claimed (`taken`, which no longer is)."""

    posted: tuple[Candidate, ...] = ()
    taken: frozenset[str] = frozenset()


class LogNotifier(abc.ABC):
    """Wakes a waiter when the event log may have grown (polling, or a database notification)."""

    tells_news = False  # whether `news` can ever answer (a notification carrying what an append did)

    @abc.abstractmethod
    def wait(self, after: int, timeout: float) -> bool:
        """Return once an event past position `after` may exist, or after `timeout` seconds.

        True when it knows the log has moved past `after` (the caller need not ask the store);
        False when the time ran out or it cannot tell. Returning early by mistake is harmless
        (the caller reads the log and waits again); sleeping through an append that is already
        there is not.
        """

    def appended(self, event: BlackboardEvent | None = None) -> None:
        """This process stored `event`: a notifier that would only see it at its next look may wake
        its waiters now. The default does nothing (notifications reach it anyway)."""

    def seen(self) -> int | None:
        """A position the log has reached, known without a query (from the last notification or
        poll), or None. Never past the log's end, and anything appended after it wakes a later
        `wait`: a waiter may note it instead of asking the store for the last position."""
        return None

    def strays(self) -> int:
        """How many notifications it heard that were not the log's (an operator's `NOTIFY` on the
        channel): each may mean anything, so a caller that noted this before a look and finds it grown
        looks again rather than trust `news`. The default hears none."""
        return 0

    def news(self, after: int, upto: int) -> LogNews | None:
        """What the appends past position `after` up to `upto` did to the claimable signals, as their
        notifications told it (without a query), or None when it cannot tell: one of them did more
        than post or claim, or was not heard (polling, a lost connection). The default cannot tell."""
        return None
