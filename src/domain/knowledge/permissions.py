"""Key permissions: which entry keys the claimer of a signal may read and write while it holds the claim.

A signal posted with key lists (`post --read-key K --write-key K`, a trailing `*` matching a prefix)
restricts every write and read that names it (`--signal SIG`):
- only while the signal is CLAIMED and its lease has not run out (a claim past its claim timeout
  counts as lost, as the sweeper would expire it);
- only by the claimer, presenting the claim's token when the claim has one;
- only for a key its lists name: a write for the write list, a read for either list (who may write a
  key may read what it wrote).
A signal without key lists restricts nothing: naming it only records where the work came from.

The claims bind whether or not a write names them (`bound_write`): while an author holds live claims
on signals with write keys on a board, each of its writes (and resolves) on that board that names no
signal with key lists must fall within the union of those claims' write keys. An author holding no
such claim (a person's own writes, an agent between claims) is not restricted; nor are the items a
completion lands (the completion is the claimer's permission).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Literal

from blackboard.domain.errors import RuleViolation
from blackboard.domain.signals import AgentSignal, SignalStatus

# An entry key's characters, optionally ending in `*` (a prefix, possibly empty: `*` is every key).
KEY_PATTERN_RULE = re.compile(r"[A-Za-z0-9_.:/-]{1,200}\*?|\*")

Access = Literal["read", "write"]


class KeyPermissionDenied(RuleViolation):
    """Refused (exit 3): the signal's key permissions do not allow this read or write."""

    def __init__(self, signal_id: str, key: str, access: Access, why: str) -> None:
        super().__init__(f"{access} of {key} under {signal_id} refused: {why}")
        self.signal_id = signal_id
        self.key = key
        self.access = access
        self.why = why


def matches(pattern: str, key: str) -> bool:
    """`draft/*` matches every key starting with `draft/`; any other pattern only the key itself."""
    return key.startswith(pattern[:-1]) if pattern.endswith("*") else key == pattern


def allowed(patterns: Iterable[str], key: str) -> bool:
    return any(matches(p, key) for p in patterns)


def restricts(signal: AgentSignal) -> bool:
    return bool(signal.read_keys or signal.write_keys)


def lease_live(signal: AgentSignal, at: datetime, claim_timeout: timedelta) -> bool:
    lease = signal.lease_started
    return lease is None or at - lease < claim_timeout


def bound_write(
    held: Iterable[AgentSignal], key: str, author: str, at: datetime, claim_timeout: timedelta
) -> None:
    """Raises KeyPermissionDenied unless `key` is in the union of the write keys of the claims
    `author` holds (live, on signals with write keys) among `held`. Holding none: nothing to check."""
    binding = [
        s
        for s in held
        if s.write_keys
        and s.status is SignalStatus.CLAIMED
        and s.claimed_by == author
        and lease_live(s, at, claim_timeout)
    ]
    if not binding:
        return
    patterns = sorted({p for s in binding for p in s.write_keys})
    if not allowed(patterns, key):
        claims = ", ".join(sorted(s.signal_id for s in binding))
        raise KeyPermissionDenied(
            claims,
            key,
            "write",
            f"{author} holds key-restricted claims ({claims}) and {key} is not in their write keys "
            f"({', '.join(patterns)})",
        )


def check(
    signal: AgentSignal,
    access: Access,
    key: str,
    author: str,
    token: str | None,
    at: datetime,
    claim_timeout: timedelta,
) -> None:
    """Raises KeyPermissionDenied unless `author` may `access` `key` under `signal` at `at`."""
    if not restricts(signal):
        return
    deny = lambda why: KeyPermissionDenied(signal.signal_id, key, access, why)  # noqa: E731
    if signal.status is not SignalStatus.CLAIMED:
        raise deny(f"the signal is {signal.status.value}, not held by a claim")
    if not lease_live(signal, at, claim_timeout):
        raise deny(
            f"{signal.claimed_by}'s claim ran past its claim timeout ({claim_timeout.total_seconds():g} s)"
        )
    if not signal.held_by(author, token):  # the claimer rule; which part failed says why
        if author != signal.claimed_by:
            raise deny(f"only its claimer {signal.claimed_by} may, not {author}")
        raise deny("the claim's token was not presented" if token is None else "the token is not the claim's")
    patterns = signal.write_keys if access == "write" else (*signal.read_keys, *signal.write_keys)
    if not allowed(patterns, key):
        raise deny(f"{key} is not in its {access} keys ({', '.join(patterns) or 'none'})")
