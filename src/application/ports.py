"""Ports: what the application needs from the outside world, stated as contracts adapters keep."""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from blackboard.application.errors import ConcurrencyConflict, StoreUnavailable  # noqa: F401 - the errors of these ports
from blackboard.domain.capabilities import AgentProfile
from blackboard.domain.events import BlackboardEvent
from blackboard.domain.signals import AgentSignal, Candidate, SignalStatus


@dataclass(frozen=True, slots=True)
class Recorded:
    """An event as stored: its global position (commit order) and when it was recorded."""

    position: int
    event: BlackboardEvent
    recorded_at: datetime
    metadata: Mapping[str, Any] = field(default_factory=dict)
    projected: bool = False  # the store folded it into the read model in the same transaction


class EventStore(abc.ABC):
    """Append-only log of blackboard events, one stream per blackboard."""

    @abc.abstractmethod
    def append(
        self,
        blackboard_id: str,
        expected_version: int,
        events: Sequence[BlackboardEvent],
        metadata: Mapping[str, Any] | None = None,
        resulting: Mapping[str, AgentSignal] | None = None,
    ) -> list[Recorded]:
        """Store all of `events` or none of them.

        `resulting`, when the caller knows it (its aggregate applied the events), holds every signal
        the events change, as it stands after them; a store that keeps a read model in step may write
        those rows as they are instead of reading and folding the old ones again.

        The board must be at `expected_version` and the events must carry the versions after it;
        otherwise raise ConcurrencyConflict and store nothing. Appending events whose ids are all
        stored already is a no-op that returns []. `metadata` (actor, correlation and causation
        ids) is kept with every event. Returns the stored events with their global positions.
        Raises StoreUnavailable when the store cannot be reached.
        """

    @abc.abstractmethod
    def load(self, blackboard_id: str, after_version: int = 0) -> list[BlackboardEvent]:
        """The board's events with a version above `after_version`, in version order ([] if none)."""

    @abc.abstractmethod
    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        """Events of every board with a position above `after`, in position order, never skipping one."""

    @abc.abstractmethod
    def last_position(self) -> int:
        """The highest stored position (0 when empty)."""

    @contextmanager
    def exclusive(self, blackboard_id: str) -> Iterator[None]:
        """While open, no other writer appends to this board, so a `load` then `append` made inside
        cannot conflict. Used after an optimistic attempt lost a race. The default holds nothing."""
        yield


class SnapshotStore(abc.ABC):
    """Saved board states; disposable (a missing or unreadable one means: replay the events)."""

    @abc.abstractmethod
    def get(self, blackboard_id: str) -> tuple[int, list[AgentSignal]] | None:
        """The latest snapshot's version and signals, or None."""

    @abc.abstractmethod
    def save(self, blackboard_id: str, version: int, signals: Sequence[AgentSignal]) -> None:
        """Keep this state unless a snapshot of a later version is already kept."""


class AgentRegistry(abc.ABC):
    """The agents that may claim signals."""

    @abc.abstractmethod
    def get_all(self) -> list[AgentProfile]:
        """Every registered agent, ordered by name."""

    def get(self, agent_id: str) -> AgentProfile | None:
        return next((a for a in self.get_all() if a.agent_id == agent_id), None)

    def get_by_capability(self, capability: str) -> list[AgentProfile]:
        """Agents declaring the capability, best score first."""
        able = [a for a in self.get_all() if a.score_for_capability(capability) > 0]
        return sorted(able, key=lambda a: (-a.score_for_capability(capability), a.agent_id))


@dataclass(frozen=True, slots=True)
class SignalFilter:
    status: SignalStatus | None = None
    signal_type: str | None = None
    capabilities: tuple[str, ...] = ()
    blackboard_id: str | None = None
    claimable_only: bool = False
    limit: int | None = None

    @classmethod
    def claimable(cls, capabilities: Sequence[str], limit: int, blackboard_id: str | None = None) -> SignalFilter:
        """POSTED signals with nothing left to wait for, targeting any of `capabilities`."""
        return cls(status=SignalStatus.POSTED, capabilities=tuple(capabilities), blackboard_id=blackboard_id,
                   claimable_only=True, limit=limit)


class SignalReadModel(abc.ABC):
    """The query side: signals folded from the event log, and the position folded up to."""

    @abc.abstractmethod
    def get(self, signal_id: str) -> AgentSignal | None: ...

    @abc.abstractmethod
    def find(self, criteria: SignalFilter) -> list[AgentSignal]:
        """Signals matching every given criterion, oldest first (created_at, then id)."""

    def candidates(self, capabilities: Sequence[str], limit: int, blackboard_id: str | None = None) -> list[Candidate]:
        """Claimable signals (POSTED, nothing to wait for) that target any of `capabilities`, oldest
        first: what `find` gives with `claimable_only`, but only what choosing one needs (a worker
        reads many per round and claims only some)."""
        found = self.find(SignalFilter.claimable(capabilities, limit, blackboard_id))
        return [Candidate(s.signal_id, s.blackboard_id, s.target_capabilities, s.created_at) for s in found]

    def live_boards(self, blackboard_id: str | None = None) -> list[str]:
        """The boards holding a POSTED or CLAIMED signal (what an expiry sweep must look at)."""
        return list(dict.fromkeys(
            s.blackboard_id
            for status in (SignalStatus.POSTED, SignalStatus.CLAIMED)
            for s in self.find(SignalFilter(status=status, blackboard_id=blackboard_id))
        ))

    @abc.abstractmethod
    def position(self) -> int:
        """The global position of the last event folded in."""

    @abc.abstractmethod
    def apply(self, records: Iterable[Recorded]) -> None:
        """Fold events in position order; records at or below `position()` are ignored."""

    @abc.abstractmethod
    def reset(self) -> None:
        """Forget everything, back to position 0 (the start of a rebuild)."""


class EventPublisher(abc.ABC):
    """Tells in-process subscribers about events after they are stored."""

    @abc.abstractmethod
    def publish(self, events: Sequence[BlackboardEvent]) -> None: ...


class LogNotifier(abc.ABC):
    """Wakes a waiter when the event log may have grown (polling, or a database notification)."""

    @abc.abstractmethod
    def wait(self, after: int, timeout: float) -> bool:
        """Return once an event past position `after` may exist, or after `timeout` seconds.

        True when it knows the log has moved past `after` (the caller need not ask the store);
        False when the time ran out or it cannot tell. Returning early by mistake is harmless
        (the caller reads the log and waits again); sleeping through an append that is already
        there is not.
        """

    def seen(self) -> int | None:
        """A position the log has reached, known without a query (from the last notification or
        poll), or None. Never past the log's end, and anything appended after it wakes a later
        `wait`: a waiter may note it instead of asking the store for the last position."""
        return None


class Clock(abc.ABC):
    @abc.abstractmethod
    def now(self) -> datetime:
        """The current time, timezone-aware."""


class IdGenerator(abc.ABC):
    @abc.abstractmethod
    def new_signal_id(self) -> str:
        """A fresh `sig-` + 8 hex id."""
