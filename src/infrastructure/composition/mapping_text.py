"""A setting whose value is a table by model (`BLACKBOARD_PRICES`, `BLACKBOARD_RATE_LIMITS`), read from its text."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def mapping_of(raw: Any) -> Mapping[Any, Any] | None:
    """`raw` (JSON or YAML text, or a mapping given in code) as a mapping; None for empty text; ValueError for
    anything else."""
    given = raw
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            return None
        try:
            given = json.loads(text)
        except ValueError:
            import yaml  # only for a value that is not JSON

            try:
                given = yaml.safe_load(text)
            except yaml.YAMLError:
                raise ValueError(raw) from None
    if not isinstance(given, Mapping):
        raise ValueError(raw)
    return given
