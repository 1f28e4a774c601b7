"""The webhooks' pure rules (domain/webhooks.py) and their settings: which announcement a gate is owed, the
backoff doubling up to the give-up time, the signature a receiver checks, and the secret kept from runs."""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime, timedelta

import pytest

from blackboard.domain.errors import InvalidInput
from blackboard.domain.signal_kinds import SignalStatus, SignalType
from blackboard.domain.signals import AgentSignal, SignalPayload
from blackboard.domain.webhooks import ending_of, next_try, opens_now
from blackboard.infrastructure.composition.settings import board_environment, load
from blackboard.infrastructure.webhooks.sending import signature

T0 = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
SECRET = "whsec-unit"


def test_the_wait_doubles_after_each_failure_and_the_last_try_is_at_the_give_up_time():
    first, hour = timedelta(seconds=10), timedelta(hours=1)
    at, waits = T0, []
    for attempts in range(1, 20):
        again = next_try(attempts, T0, at, first, hour)
        if again is None:
            break
        waits.append((again - at).total_seconds())
        at = again

    assert waits[:5] == [10, 20, 40, 80, 160]
    assert at == T0 + hour  # the last try falls on the hour, and after it fails ...
    assert next_try(len(waits) + 1, T0, at, first, hour) is None  # ... it is given up


def test_a_huge_first_wait_never_overflows():
    assert next_try(60, T0, T0, timedelta(seconds=1e9), timedelta(seconds=1e9)) == T0 + timedelta(seconds=1e9)


def signal_of(status: SignalStatus, gate: bool, not_before: datetime | None = None) -> AgentSignal:
    return AgentSignal(
        signal_id="sig-0000000a",
        blackboard_id="bb-1",
        signal_type=SignalType.DECISION,
        payload=SignalPayload(ps_id="PS-1", entry_id="e-1", topic="publish?"),
        target_capabilities=(),
        posted_by="ps-skill",
        created_at=T0,
        status=status,
        gate=gate,
        not_before=not_before,
    )


@pytest.mark.parametrize(
    ("status", "event"),
    [
        (SignalStatus.COMPLETED, "gate.approved"),
        (SignalStatus.FAILED, "gate.rejected"),
        (SignalStatus.EXPIRED, "gate.timed_out"),
        (SignalStatus.CANCELLED, "gate.cancelled"),
        (SignalStatus.POSTED, None),
    ],
)
def test_a_gate_that_ended_is_owed_the_announcement_of_its_end(status, event):
    assert ending_of(signal_of(status, gate=True)) == event
    assert ending_of(signal_of(status, gate=False)) is None


def test_a_gate_opens_for_its_announcement_once_its_not_before_has_come():
    later = signal_of(SignalStatus.POSTED, gate=True, not_before=T0 + timedelta(hours=1))

    assert opens_now(signal_of(SignalStatus.POSTED, gate=True), T0)
    assert not opens_now(later, T0) and opens_now(later, T0 + timedelta(hours=1))
    assert not opens_now(signal_of(SignalStatus.POSTED, gate=False), T0)


def test_the_signature_is_the_hmac_sha256_of_the_exact_bytes():
    body = '{"event":"gate.opened","topic":"café"}'.encode()
    expected = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()

    assert signature(SECRET, body) == f"sha256={expected}"
    assert signature(SECRET, body + b" ") != signature(SECRET, body)


def test_a_run_of_the_worker_is_never_handed_the_secret_nor_the_urls():
    config = load(
        {}, env={"BLACKBOARD_WEBHOOKS": "https://hooks.example/x", "BLACKBOARD_WEBHOOK_SECRET": SECRET}
    )

    handed = dict(board_environment(config))

    assert SECRET not in handed.values() and "BLACKBOARD_WEBHOOKS" not in handed
    assert SECRET not in repr(config)


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"BLACKBOARD_WEBHOOKS": "https://hooks.example/x"}, "BLACKBOARD_WEBHOOK_SECRET: must be set"),
        (
            {"BLACKBOARD_WEBHOOKS": "hooks.example", "BLACKBOARD_WEBHOOK_SECRET": "s"},
            "BLACKBOARD_WEBHOOKS: must be",
        ),
        (
            {"BLACKBOARD_WEBHOOKS": "http://a b/", "BLACKBOARD_WEBHOOK_SECRET": "s"},
            "BLACKBOARD_WEBHOOKS: must be",
        ),
        (
            {"BLACKBOARD_UI_URL": "javascript:alert(1)"},
            "BLACKBOARD_UI_URL: must be an http:// or https:// URL",
        ),
        ({"BLACKBOARD_WEBHOOK_RETRY": "0"}, "BLACKBOARD_WEBHOOK_RETRY: must be seconds"),
    ],
)
def test_bad_webhook_settings_are_refused_naming_the_variable(env, says):
    with pytest.raises(InvalidInput, match=says):
        load({}, env=env)


def test_urls_are_split_on_commas_each_once_and_the_ui_url_loses_its_trailing_slash():
    config = load(
        {},
        env={
            "BLACKBOARD_WEBHOOKS": " https://a.example/x ,https://a.example/x,, http://b.example:9/y",
            "BLACKBOARD_WEBHOOK_SECRET": SECRET,
            "BLACKBOARD_UI_URL": "https://board.example/team/",
        },
    )

    assert config.webhooks == ("https://a.example/x", "http://b.example:9/y")
    assert config.ui_url == "https://board.example/team"
