"""Issue 24's race at its full size (`make faults`): two workers in two processes under one concurrency key
of max 1, over 1,000 signals on SQLite and PostgreSQL, never two claims at once as the log tells it."""

from __future__ import annotations

from tests.integration.test_concurrency_race import race, race_under_one_key  # noqa: F401 - the fixture

SIGNALS = 1_000


def test_a_thousand_signals_under_a_key_of_max_1_never_hold_two_claims_at_once(race):
    race_under_one_key(race, SIGNALS)
