"""The shapes a `capabilities` key comes in, told apart: scores the blackboard uses, or something else.

Scores: a mapping of names to numbers (`{REVIEW: 0.9}`), a list of `{type, score}`, or a list of names
(`[REVIEW, DEBUG]`, each at 1.0). Some public collections use the key for governance instead (lists of
allowed tools, forbidden actions, free-text abilities): such a value is ignored with a warning, and the
agent loads as if it declared none (its name is then its capability at 1.0).
"""

from __future__ import annotations

import re
from typing import Any

_NAME_LIKE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/-]*$")  # one word: a capability name, not a sentence
FIX = "to give it scores, write capabilities: {REVIEW: 0.9}"


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def usable_capabilities(value: Any, name: str) -> tuple[Any, tuple[str, str] | None]:
    """(the value to validate as scores, or None when there are none to use; a (warning, fix) or None).

    A value in one of the score shapes is returned for strict checking (a score of 1.4 is still an
    error); a value in no score shape is not an error, only ignored."""
    if value is None:
        return None, None
    if isinstance(value, dict) and value and all(_scalar(v) for v in value.values()):
        return value, None
    if isinstance(value, list) and value:
        if all(isinstance(item, str) and _NAME_LIKE.match(item) for item in value):
            return [{"type": item, "score": 1.0} for item in value], None
        if any(isinstance(item, dict) and {"type", "score"} & set(item) for item in value):
            return value, None
    what = "is empty" if value in ({}, [], "") else f"is not a score map ({_shown(value)})"
    return None, (
        f"capabilities: {what}; ignored: the agent takes signals for its name, {name.upper()}, at 1.0",
        FIX,
    )


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return f"a mapping of {', '.join(map(str, list(value)[:3]))}{' ...' if len(value) > 3 else ''}"
    if isinstance(value, list):
        return f"a list of {len(value)} item(s) that are not capability names"
    return f"a {type(value).__name__}"
