"""The words every interface uses for a signal that waits for a worker that fits, defined once.

By default a POSTED signal that no live worker fits waits for one, however long (docs/control.md, "Work
waits for its worker"); `post`, `show`, `signals`, `next` and `status` say so in these words. A gate waits
for a person, and a signal posted for later for its time: `next` and the web view's cards say so in the
words below.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

WORKER_THAT_FITS = "a worker that fits"


def waiting_for_a_worker(target_capabilities: Iterable[str]) -> str:
    """What the signal waits for, its `waiting` in a document: `a worker that fits: RESEARCH`."""
    return f"{WORKER_THAT_FITS}: {', '.join(target_capabilities)}"


def approve_command(signal_id: str) -> str:
    """The command that decides a gate: `blackboard approve SIG --by NAME`."""
    return f"blackboard approve {signal_id} --by NAME"


def waiting_for_a_person(signal_id: str) -> str:
    """What an open gate waits for: `waiting for a person: blackboard approve SIG --by NAME`."""
    return f"waiting for a person: {approve_command(signal_id)}"


def waiting_for_a_time(not_before: datetime, gate: bool) -> str:
    """What a signal posted for later (or a retry's wait) waits for: its `not_before`."""
    then = "a person decides it" if gate else "it may be claimed"
    return f"not before {not_before:%H:%M:%S} UTC ({not_before:%Y-%m-%d}); {then} from then"
