"""The run's entries so far, as each step's signal carries them in its context (`entries`): the problem and
what the run's steps left on the board (their landed findings, and any entry written under a step's signal),
newest first, each with its key, at most `BUDGET` bytes of JSON in all. A handler reads them on its stdin (the
signal document), a runner's agent in its message (the context is part of it)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from blackboard.application.entry_values import json_size
from blackboard.domain.solve.run import SolveRun

BUDGET = 16 * 1024  # bytes of JSON (UTF-8, compact) the list may take in the signal's context
SMALLEST_CUT = 256  # bytes of value below which an entry that does not fit is left out, not cut


def run_entries(
    run: SolveRun, entries: Sequence[Any], budget: int = BUDGET
) -> tuple[list[dict[str, Any]], int]:
    """The run's entries among the board's (`Entry`), newest first, as JSON objects `{key, entry_type,
    author, signal_id, value}` whose list takes at most `budget` bytes; the entry that no longer fits whole
    is cut (its value as text, `cut`: how many characters were left out), those after it are left out. Returns
    the list and how many entries were left out."""
    steps = {s.signal_id for s in run.steps if s.signal_id is not None}
    ours = sorted(
        (e for e in entries if e.key.startswith(f"solve/{run.run_id}/") or e.current.signal_id in steps),
        key=lambda e: e.current.position,
        reverse=True,
    )
    shown: list[dict[str, Any]] = []
    used = 2  # the list's brackets
    for entry in ours:
        item = _item(entry)
        comma = 1 if shown else 0
        if used + comma + json_size(item) <= budget:
            shown.append(item)
            used += comma + json_size(item)
            continue
        if (cut := _cut(item, budget - used - comma)) is not None:
            shown.append(cut)
        break
    return shown, len(ours) - len(shown)


def _item(entry: Any) -> dict[str, Any]:
    v = entry.current
    return {
        "key": entry.key,
        "entry_type": v.entry_type,
        "author": v.author,
        "signal_id": v.signal_id,
        "value": v.value,
    }


def _cut(item: dict[str, Any], room: int) -> dict[str, Any] | None:
    """The item with its value cut (as text) to take at most `room` bytes; None when too little would be left
    of the value to be worth showing."""
    value = item["value"]
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    left = room - json_size({**item, "value": "", "cut": len(text)})  # `cut` at its widest: never over room
    if left < SMALLEST_CUT:
        return None
    fits, over = 0, min(len(text), left) + 1  # a character takes at least one byte: no more than `left` fit
    while over - fits > 1:  # the longest start of the text whose JSON string takes at most `left` bytes
        n = (fits + over) // 2
        fits, over = (n, over) if json_size(text[:n]) - 2 <= left else (fits, n)
    return {**item, "value": text[:fits], "cut": len(text) - fits}
