"""The smallest in-process handler: `entrypoint: handlers.noop:handle` in an agent file of this folder.

A worker imports this module once and calls `handle` with each claimed signal's document; returning
None completes the signal with no artifact and no knowledge items. It is what a benchmark can time to
see the cost of the worker itself, without a process per signal.
"""

from __future__ import annotations

from typing import Any


def handle(document: dict[str, Any]) -> None:
    return None
