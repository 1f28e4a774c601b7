"""The rules of the values commands carry, stated once: every command model's fields are made of these.

Every interface (CLI, MCP, Python API, web view) builds the same command models from what it was given,
so a rule here holds on all four, with one message: pydantic's, naming the field, as each interface
spells it (infrastructure/errors/input.py). The models are lax about the form a number comes in (`"5"`
is 5; a command line and a query string have nothing but text), strict about its value: finite, within
64 bits, within its range. A new field takes one of these types (or a new one here) and is checked
everywhere at once; tests/e2e/test_one_validation_layer.py generates bad values from the field's
constraints and drives them through the four interfaces.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from blackboard.application.bounds import MAX_INT64, MAX_NAME, MAX_SECONDS, MAX_TOKEN


def printable(text: str) -> str:
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise ValueError("must not contain control characters")
    return text


# A board id, an entry's author, section, role and label: 1..200 characters, no control character (so
# an entry key's stream id, `<board>\x1f<key>`, is never a board's).
Printable = Annotated[str, Field(min_length=1, max_length=MAX_NAME), AfterValidator(printable)]
# a worker's public id: its agent's name, "/", a UUID (worker/process.py)
WorkerId = Annotated[str, Field(min_length=1, max_length=MAX_NAME + 37), AfterValidator(printable)]
BoardName = Printable
# Who posts, claims or cancels, a capability, a dedupe key, a correlation id: 1..200 characters, any
# (stored text is shown escaped, never replayed to a terminal: docs/cli.md, "Limits on input").
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME)]
Token = Annotated[str, Field(min_length=1, max_length=MAX_TOKEN), AfterValidator(printable)]

# A log position or a count: a 64-bit signed integer, what SQLite and PostgreSQL store (past it a
# query overflows), the same bound on every interface.
Position = Annotated[int, Field(ge=0, le=MAX_INT64)]
Count = Annotated[int, Field(ge=1, le=MAX_INT64)]

# How long a call may wait: a finite number of seconds (nan would never end, inf neither), at most about
# 31 years (past it a deadline overflows).
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]

# A fraction (an entry's confidence) and an amount of money: finite numbers in their range.
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Dollars = Annotated[float, Field(gt=0, le=1e9, allow_inf_nan=False)]

# An entry key, or a key prefix ending in `*` (`*` alone: every key).
KeyPattern = Annotated[str, Field(pattern=r"^([A-Za-z0-9_.:/-]{1,200}\*?|\*)$")]
