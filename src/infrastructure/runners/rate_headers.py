"""What a model API's answer says of its rate limits, read from its headers (domain/rates.py, `RateSaid`).

Anthropic's `anthropic-ratelimit-requests-remaining` and `anthropic-ratelimit-tokens-remaining` (else the
smaller of its `-input-tokens-` and `-output-tokens-remaining`), OpenAI's `x-ratelimit-remaining-requests`
and `x-ratelimit-remaining-tokens`, and a 429's `retry-after-ms` or `retry-after`. A header that is missing
or not a number says nothing; it never fails a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from blackboard.domain.rates import RateSaid

REQUESTS = ("anthropic-ratelimit-requests-remaining", "x-ratelimit-remaining-requests")
TOKENS = ("anthropic-ratelimit-tokens-remaining", "x-ratelimit-remaining-tokens")
TOKENS_APART = ("anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-output-tokens-remaining")


def rate_said(headers: Mapping[str, Any] | None, retry_after: float | None = None) -> RateSaid:
    """What `headers` say (None: no answer's), with a 429's wait in seconds (None: not a 429)."""
    if headers is None:
        return RateSaid(retry_after=retry_after)
    tokens = _first(headers, TOKENS)
    if tokens is None:
        apart = [n for n in (_whole(headers.get(name)) for name in TOKENS_APART) if n is not None]
        tokens = min(apart) if apart else None
    return RateSaid(retry_after, _first(headers, REQUESTS), tokens)


def headers_of(error: BaseException) -> Mapping[str, Any] | None:
    """The headers of the answer an SDK's status error carries, if any."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    return headers if headers is not None and hasattr(headers, "get") else None


def _first(headers: Mapping[str, Any], names: tuple[str, ...]) -> int | None:
    for name in names:
        if (value := _whole(headers.get(name))) is not None:
            return value
    return None


def _whole(value: Any) -> int | None:
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None
