"""A command model's ValidationError as InvalidInput, naming each field as the caller spelled it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from blackboard.domain.errors import InvalidInput


def invalid_input(exc: Any, names: Mapping[str, str]) -> InvalidInput:
    """`exc` (a pydantic ValidationError) as bad input naming each field, by `names` (a model field ->
    what the caller typed: a CLI option, a Python argument), and its rule."""
    problems = []
    for error in exc.errors():
        field = names.get(str(error["loc"][0]), str(error["loc"][0])) if error["loc"] else "input"
        problems.append((field, f"{error['msg']} (got {error.get('input')!r})"))
    (field, rule), more = problems[0], [f"{f}: {r}" for f, r in problems[1:]]
    return InvalidInput(field, "; ".join([rule, *more]))
