"""Application errors: every error a use case raises on purpose, each under one family of `BlackboardError`.

The domain's families say what was wrong with the command (`InvalidInput`, `RuleViolation`,
`NotFound`); the application adds the two that say why a well-formed command did not go through:
`TimedOut` (nothing happened within the time asked for) and `Unavailable` (the store or the board
could not serve it just now). An interface maps families to outcomes, never single classes.
Adapters translate their drivers' errors into these, so nothing above them sees a driver's error.
"""

from __future__ import annotations

from blackboard.domain.errors import BlackboardError, NotFound, RuleViolation


class TimedOut(BlackboardError):
    """Nothing the caller waited for happened within its timeout; nothing was changed."""


class Unavailable(BlackboardError):
    """The command could not be carried out just now (the store unreachable or locked, the board
    changing too fast); nothing was written, and the same command may succeed when tried again."""


class WaitTimedOut(TimedOut):
    def __init__(self, what: str, seconds: float, recheck_in: float | None = None) -> None:
        super().__init__(f"timed out after {seconds:g}s waiting for {what}")
        self.what = what  # what was awaited, in the message's words (AsyncBlackboard says it again)
        self.seconds = seconds
        # seconds until the awaited signal's deadline, when it has one: a caller that waits on (AsyncBlackboard)
        # checks again then, when the board decides whether it expired (None: only an event can answer)
        self.recheck_in = recheck_in


class StoreUnavailable(Unavailable):
    """The store could not be reached or answered with an error that is not a conflict."""


class ConcurrencyConflict(Unavailable):
    """Another writer appended to the board first; reload and decide again."""

    def __init__(self, blackboard_id: str, expected_version: int) -> None:
        super().__init__(f"blackboard {blackboard_id} moved past version {expected_version}")
        self.blackboard_id = blackboard_id
        self.expected_version = expected_version


class BoardExists(RuleViolation):
    """An import of a board into a store that holds some of it already: refused, nothing written
    (an import recreates a board; it never merges into one)."""

    def __init__(self, blackboard_id: str, why: str) -> None:
        super().__init__(f"board {blackboard_id} cannot be imported: {why}; nothing was written")
        self.blackboard_id = blackboard_id


class NotPermitted(RuleViolation):
    """The caller may not do this (application/callers.py, TABLE): refused, exit 3, nothing written. The
    message names the caller and the act: `agent A's run of SIG may not approve a gate: only a person decides`."""

    def __init__(self, who: str, verb: str, why: str) -> None:
        super().__init__(f"{who} may not {verb}: {why}")
        self.who = who
        self.verb = verb


class BoardNotFound(NotFound):
    def __init__(self, blackboard_id: str) -> None:
        super().__init__(f"no blackboard {blackboard_id} in this store: it holds no event of it")
        self.blackboard_id = blackboard_id


class UpgradeNeeded(BlackboardError):
    """This blackboard is older than what it reads: an event of a type or schema version it does not know,
    or a database at a revision it may not run beside. It stops there: nothing past it was read or written."""
