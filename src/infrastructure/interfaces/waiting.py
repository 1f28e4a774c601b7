"""The words every interface uses for a signal that waits for a worker that fits, defined once.

By default a POSTED signal that no live worker fits waits for one, however long (docs/control.md, "Work
waits for its worker"); `post`, `show`, `signals`, `next` and `status` say so in these words.
"""

from __future__ import annotations

from collections.abc import Iterable

WORKER_THAT_FITS = "a worker that fits"


def waiting_for_a_worker(target_capabilities: Iterable[str]) -> str:
    """What the signal waits for, its `waiting` in a document: `a worker that fits: RESEARCH`."""
    return f"{WORKER_THAT_FITS}: {', '.join(target_capabilities)}"
