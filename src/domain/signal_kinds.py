"""What kind of work a signal is and where it stands: the names every interface gives a signal's type and
status, defined once. Plain Python (no model): the command line names them in its grammar and its help
before it knows what it runs, and `domain.signals` builds the signal's model on them.
"""

from __future__ import annotations

from enum import StrEnum


class SignalType(StrEnum):
    RESEARCH = "RESEARCH"
    ANALYSIS = "ANALYSIS"
    REVIEW = "REVIEW"
    DECISION = "DECISION"
    INVESTIGATION = "INVESTIGATION"
    SYNTHESIS = "SYNTHESIS"


class SignalStatus(StrEnum):
    POSTED = "POSTED"
    CLAIMED = "CLAIMED"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    EXPIRED = "EXPIRED"
    UNCLAIMED = "UNCLAIMED"
    CANCELLED = "CANCELLED"  # someone ended it on purpose (`blackboard cancel`), or an upstream's cancel

    @property
    def is_final(self) -> bool:
        return self in FINAL_STATUSES


FINAL_STATUSES = frozenset(
    {
        SignalStatus.COMPLETED,
        SignalStatus.FAILED,
        SignalStatus.EXPIRED,
        SignalStatus.UNCLAIMED,
        SignalStatus.CANCELLED,
    }
)
