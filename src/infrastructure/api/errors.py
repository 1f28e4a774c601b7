"""The Python API's exceptions: the error families of the one table (errors/families.py), each under its
family's name in CamelCase (`refused` is `Refused`; a test holds the names to the table).

They are the same classes (aliases, not copies), so one error means one exit code whichever
interface raised it: `InvalidInput` 2, `Refused` 3 (`Conflict` is one), `NotFound` 4,
`TimedOut` 5, `Unavailable` 1, `UpgradeNeeded` 6; every one is a `BlackboardError`.
"""

from __future__ import annotations

from blackboard.application.errors import TimedOut, Unavailable, UpgradeNeeded
from blackboard.application.solve.ports import IterationsSpent  # TimedOut: `solve` gave no answer in time
from blackboard.domain.errors import BlackboardError, InvalidInput, NotFound, RuleViolation
from blackboard.domain.knowledge.entries import KeyInConflict

Refused = RuleViolation  # the state machine or a rule of the board refused the call; nothing was written
Conflict = KeyInConflict  # a write kept as a conflict candidate (it *was* recorded); `.entry` is the key now


class Closed(Unavailable):
    """A call on a Blackboard after `close()`."""

    def __init__(self) -> None:
        super().__init__("this Blackboard is closed; open a new one")


__all__ = [
    "BlackboardError",
    "Closed",
    "Conflict",
    "InvalidInput",
    "IterationsSpent",
    "NotFound",
    "Refused",
    "TimedOut",
    "Unavailable",
    "UpgradeNeeded",
]
