"""A time given by a person: an ISO 8601 time, or a duration from now (`90s`, `10m`, `2h`, `1d`)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from blackboard.domain.errors import InvalidInput

DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(s|m|h|d)")
SPAN = re.compile(r"(\d+(?:\.\d+)?)\s*(s|m|h|d)?")  # a length of time: a bare number is seconds
UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}
LONGEST = timedelta(days=3650)  # further than this is a typo, not a plan


def parse_when(raw: str | datetime | timedelta, now: datetime, field: str) -> datetime:
    """The moment `raw` names: a datetime as it is (a naive one is UTC), a timedelta or a duration after
    `now`, or an ISO 8601 time (a naive one is UTC). Anything else is InvalidInput naming `field`."""
    if isinstance(raw, timedelta):
        return _within(now + raw, now, field, str(raw))
    if isinstance(raw, datetime):
        return _within(raw if raw.tzinfo else raw.replace(tzinfo=UTC), now, field, raw.isoformat())
    text = str(raw).strip()
    if match := DURATION.fullmatch(text.lower()):
        return _within(now + timedelta(seconds=float(match[1]) * UNIT[match[2]]), now, field, text)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            field,
            f"must be an ISO 8601 time (2026-11-27T10:00:00+00:00) or a duration such as 90s, 10m, 2h, 1d; "
            f"got {text[:40]!r}",
        ) from None
    return _within(moment if moment.tzinfo else moment.replace(tzinfo=UTC), now, field, text)


def _within(moment: datetime, now: datetime, field: str, text: str) -> datetime:
    if moment - now > LONGEST:
        raise InvalidInput(field, f"must be within {LONGEST.days} days from now, got {text[:40]!r}")
    return moment.astimezone(UTC)


def parse_duration(raw: str | float | timedelta, field: str) -> float:
    """Seconds: a timedelta, a number of seconds (given as a number or as text, `30`), or a duration such as
    `90s`, `10m`, `2h`, `1d`; above 0 and within ten years. Anything else is InvalidInput naming `field`."""
    if isinstance(raw, timedelta):
        seconds = raw.total_seconds()
    elif isinstance(raw, int | float) and not isinstance(raw, bool):
        seconds = float(raw)
    else:
        text = str(raw).strip().lower()
        match = SPAN.fullmatch(text)
        if match is None:
            raise InvalidInput(
                field, f"must be seconds (30) or a duration such as 90s, 10m, 2h, 1d; got {text[:40]!r}"
            )
        seconds = float(match[1]) * UNIT[match[2] or "s"]
    if not 0 < seconds <= LONGEST.total_seconds():  # also refuses NaN
        raise InvalidInput(field, f"must be above 0 and within {LONGEST.days} days, got {raw!s:.40}")
    return seconds
