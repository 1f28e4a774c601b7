"""Configuration from flags and environment variables, validated before anything runs."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.persistence import DEFAULT_URL, SYNCHRONOUS_MODES

# name -> (environment variable, default, parser, rule shown when the value is refused)
SETTINGS: dict[str, tuple[str, Any, Callable[[str], Any], str]] = {
    "db": ("BLACKBOARD_DB", DEFAULT_URL, str, "an SQLAlchemy URL"),
    "agents_dir": ("BLACKBOARD_AGENTS_DIR", "./agents", str, "a folder"),
    "claim_threshold": ("BLACKBOARD_CLAIM_THRESHOLD", 0.8, float, "a number from 0 to 1"),
    "post_timeout": ("BLACKBOARD_POST_TIMEOUT", 30.0, float, "seconds, above 0"),
    "claim_timeout": ("BLACKBOARD_CLAIM_TIMEOUT", 300.0, float, "seconds, above 0"),
    "sqlite_synchronous": ("BLACKBOARD_SQLITE_SYNCHRONOUS", "FULL", str.upper, " or ".join(SYNCHRONOUS_MODES)),
    "sqlite_busy_timeout": ("BLACKBOARD_SQLITE_BUSY_TIMEOUT", 30.0, float, "seconds, above 0"),
    "pool_size": ("BLACKBOARD_POOL_SIZE", 5, int, "a whole number above 0"),
    "max_overflow": ("BLACKBOARD_MAX_OVERFLOW", 10, int, "a whole number, 0 or more"),
    "pool_timeout": ("BLACKBOARD_POOL_TIMEOUT", 30.0, float, "seconds, above 0"),
    "pool_pre_ping": ("BLACKBOARD_POOL_PRE_PING", False, lambda raw: _flag(raw), "1, true, yes, 0, false or no"),
    "poll_interval": ("BLACKBOARD_POLL_INTERVAL", 0.02, float, "seconds, above 0"),
}
CHECKS: dict[str, Callable[[Any], bool]] = {
    "claim_threshold": lambda v: 0 <= v <= 1,
    "sqlite_synchronous": lambda v: v in SYNCHRONOUS_MODES,
    "max_overflow": lambda v: v >= 0,
    "pool_pre_ping": lambda v: True,
    "db": bool,
    "agents_dir": bool,
}


def _flag(raw: str) -> bool:
    text = str(raw).strip().lower()
    if text in ("1", "true", "yes"):
        return True
    if text in ("0", "false", "no"):
        return False
    raise ValueError(raw)


def load(flags: Mapping[str, Any], env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Each setting from its flag if given, else its environment variable, else its default."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    for name, (variable, default, parse, rule) in SETTINGS.items():
        flag = flags.get(name)
        raw, source = (flag, f"--{name.replace('_', '-')}") if flag is not None else (env.get(variable), variable)
        if raw is None or raw == "":
            values[name] = default
            continue
        try:
            value = parse(raw)
        except ValueError:
            raise InvalidInput(source, f"must be {rule}, got {raw!r}") from None
        if not CHECKS.get(name, lambda v: v > 0)(value):
            raise InvalidInput(source, f"must be {rule}, got {raw!r}")
        values[name] = value
    return values


def json_output(flag: bool) -> bool:
    return flag or os.environ.get("BLACKBOARD_JSON", "").lower() in ("1", "true", "yes")
