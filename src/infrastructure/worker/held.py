"""The runs a worker holds: each claim's lease by the worker's own clock, and its keeper told of their processes.

A claim lapses `claim timeout` seconds after its last renewal, whatever the worker knows (a database outage: its
renewals fail). A run whose lease lapsed is stopped by the worker as soon as it looks (`lapsed`), and by the
keeper at that very moment if the worker cannot look (stopped, hung): one rule, `keeper.lease.Lease`, counted
from the moment the worker sent the renewal the board recorded (no later than the board's own), or, before the
first, from the run's start (just after the board recorded the claim).
"""

from __future__ import annotations

import threading

from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure.keeper.client import Keeper
from blackboard.infrastructure.keeper.lease import Lease
from blackboard.infrastructure.keeper.marks import identity, marks


class HeldRuns:
    """`keeper`: None where runs are not kept (a worker without one); `claim_timeout`: None, no leases judged."""

    def __init__(self, claim_timeout: float | None, keeper: Keeper | None = None) -> None:
        self._timeout, self._keeper = claim_timeout, keeper
        self._leases: dict[str, Lease] = {}
        self._lock = threading.Lock()

    def hold(self, claimed: AgentSignal) -> None:
        """A claim the worker starts to run."""
        if self._timeout is not None:
            with self._lock:
                self._leases[claimed.signal_id] = Lease.starting_now(self._timeout)

    def identity(self, agent: str, claimed: AgentSignal) -> dict[str, str]:
        """The variables the run's root process carries (keeper/marks.py): its own claim's token, no other."""
        return identity(agent, claimed.signal_id, claimed.claim_token or "", claimed.blackboard_id)

    def started(self, claimed: AgentSignal, pid: int) -> None:
        """The run's root process started: the keeper kills its tree if the worker ends or the lease lapses."""
        lease = self._leases.get(claimed.signal_id)
        if self._keeper is not None and lease is not None:
            self._keeper.hold(
                claimed.signal_id, pid, marks(claimed.signal_id, claimed.claim_token or ""), lease
            )

    def renewed(self, signal_id: str, sent: Lease) -> None:
        """The board renewed the claim with a command sent at `sent` (Lease.starting_now before sending)."""
        with self._lock:
            if signal_id not in self._leases:
                return
            self._leases[signal_id] = sent
        if self._keeper is not None:
            self._keeper.renewed(signal_id, sent)

    def sending(self) -> Lease | None:
        """The lease a renewal sent now starts, should the board record it."""
        return Lease.starting_now(self._timeout) if self._timeout is not None else None

    def lapsed(self, signal_id: str) -> str | None:
        """Why the run must stop now because its claim lapsed by this worker's clock, or None."""
        if self._keeper is not None:
            self._keeper.check()
        lease = self._leases.get(signal_id)
        return lease.reason() if lease is not None and lease.lapsed() else None

    def release(self, signal_id: str) -> str | None:
        """The run ended: the keeper forgets it. Why its claim lapsed meanwhile, if it did."""
        if self._keeper is not None:
            self._keeper.ended(signal_id)
        with self._lock:
            lease = self._leases.pop(signal_id, None)
        return lease.reason() if lease is not None and lease.lapsed() else None
