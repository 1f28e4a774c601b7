"""The contract of rate limits' windows (application/ports/rates.py, and the unit of work's `rate_window`):
what every adapter keeps alike. A claim's transaction and a runner's call see one window per key."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import pytest

from blackboard.application.ports import UnitOfWork
from blackboard.application.ports.rates import RateWindows
from blackboard.domain.rates import RateLimit

T0 = datetime(2026, 1, 1, tzinfo=UTC)
LIMIT = RateLimit(key="api", requests_per_minute=60, tokens_per_minute=6000)


@dataclass
class RateParts:
    windows: RateWindows
    uow: UnitOfWork


class RateWindowsContract:
    @pytest.fixture
    def parts(self) -> RateParts:
        raise NotImplementedError

    def test_a_key_never_used_has_a_full_window_recording_its_limit(self, parts):
        window = parts.windows.change(LIMIT, T0, lambda w: None)

        assert (window.key, window.requests, window.tokens) == ("api", 60, 6000)
        assert window.limit == LIMIT and window.holds(T0) == 0

    def test_what_a_change_makes_of_the_window_is_kept_and_listed_by_key(self, parts):
        closed = T0 + timedelta(seconds=8)
        parts.windows.change(LIMIT, T0, lambda w: replace(w.taken(LIMIT, T0, 60), closed_until=closed))
        other = RateLimit(key="another", requests_per_minute=5)
        parts.windows.change(other, T0, lambda w: w.taken(other, T0))

        found = {w.key: w for w in parts.windows.windows()}

        assert sorted(found) == ["another", "api"]
        assert found["api"].requests == pytest.approx(0) and found["api"].closed_until == closed
        assert found["api"].holds(T0 + timedelta(seconds=7)) > 0
        assert found["another"].requests == pytest.approx(4)

    def test_a_claims_transaction_and_a_call_share_the_keys_window(self, parts):
        with parts.uow.board("ps-1") as tx:
            held = tx.rate_window(LIMIT, T0)
            tx.keep_rate_window(held.taken(LIMIT, T0, 10))

        seen = parts.windows.change(LIMIT, T0, lambda w: w.taken(LIMIT, T0))

        assert seen.requests == pytest.approx(49)
        with parts.uow.board("ps-2") as tx:  # another board: the same window
            assert tx.rate_window(LIMIT, T0).requests == pytest.approx(49)

    def test_a_window_kept_in_a_transaction_rolled_back_stays_as_it_was(self, parts):
        with pytest.raises(RuntimeError), parts.uow.board("ps-1") as tx:
            tx.keep_rate_window(tx.rate_window(LIMIT, T0).taken(LIMIT, T0, 30))
            raise RuntimeError("the claim was refused")

        assert parts.windows.change(LIMIT, T0, lambda w: None).requests == pytest.approx(60)
