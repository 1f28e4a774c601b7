"""The web view's cards answer "why is it here" (docs/web.md), in a real headless Chromium: each card shows
its priority, its attempt of its limit once there is more than one, its labels, what its runs cost, and for a
POSTED signal why it waits, in the words of `blackboard next`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from selenium.webdriver.common.by import By

from blackboard.application.commands import ClaimSignal, CompleteSignal
from blackboard.domain.signals import SignalUsage
from blackboard.infrastructure.composition import settings
from blackboard.infrastructure.composition.container import Container
from tests.e2e.conftest import Cli, database_url
from tests.e2e.test_ui_page import csp_refusals
from tests.e2e.web import UiServer, artifact, browser, settled  # noqa: F401 - the browser fixture


@pytest.fixture(params=["sqlite", "postgresql"])
def cards_cli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    made = make_cli(database_url(request, tmp_path_factory, "ui-cards"), tmp_path)
    made.ok("db", "upgrade")
    return made


def card_text(driver, signal_id: str) -> str:
    """The card's text, read afresh if the page redrew the card as it was read (a live record)."""
    return settled(
        driver, lambda d: d.find_element(By.CSS_SELECTOR, f'.card[data-signal="{signal_id}"]').text
    )


def shown(driver, signal_id: str, status: str, *texts: str) -> bool:
    found = driver.find_elements(
        By.CSS_SELECTOR, f'.column[data-status="{status}"] .card[data-signal="{signal_id}"]'
    )
    return bool(found) and all(t in found[0].text for t in texts)


def test_each_card_says_why_it_is_here(cards_cli, browser):
    cli, driver = cards_cli, browser
    urgent = cli.post("--priority", "0", "--label", "bug", ps="ps-c", entry="e-1", topic="urgent")[
        "signal_id"
    ]
    gate = cli.post("--gate", type="DECISION", ps="ps-c", entry="e-2", topic="ship it?")["signal_id"]
    after = cli.post("--after", urgent, ps="ps-c", entry="e-3", topic="then this")["signal_id"]
    later = cli.post("--not-before", "1h", "--priority", "4", ps="ps-c", entry="e-4", topic="tomorrow")
    flaky = cli.post("--max-attempts", "3", ps="ps-c", entry="e-5", topic="flaky")["signal_id"]
    cli.ok("claim", flaky, "--agent", "ps-researcher")
    cli.ok("fail", flaky, "--agent", "ps-researcher", "--error", "try again")
    assert cli.ok("show", flaky)["attempt"] == 2
    # a run that cost something: completed through the service, with its usage
    container = Container(config=settings.load({}, env=cli.environment()))
    service = container.service()
    paid = cli.post(ps="ps-c", entry="e-6", topic="paid")["signal_id"]
    service.claim_signal(ClaimSignal(signal_id=paid, agent_id="ps-researcher"))
    usage = SignalUsage(runner="anthropic", model="m", input_tokens=1200, output_tokens=300, cost_usd=0.0123)
    service.complete_signal(CompleteSignal(signal_id=paid, agent_id="ps-researcher", usage=usage))

    next_said = cli.ok("next")
    person = next(m["reason"] for m in next_said["waiting_for_a_person"] if m["signal_id"] == gate)
    time = next(m["reason"] for m in next_said["waiting_for_a_time"] if m["signal_id"] == later["signal_id"])
    assert person == f"waiting for a person: blackboard approve {gate} --by NAME"
    not_before = datetime.fromisoformat(later["not_before"])
    assert not_before > datetime.now(UTC) + timedelta(minutes=50)

    server = UiServer(cli).wait_ready()
    try:
        driver.get(f"{server.url}/?board=ps-c")
        settled(driver, lambda d: shown(d, urgent, "POSTED", "P0", "bug", "a worker that fits: RESEARCH"))
        settled(driver, lambda d: shown(d, gate, "POSTED", "P2", person))
        settled(driver, lambda d: shown(d, after, "POSTED", f"waits for {urgent}"))
        settled(driver, lambda d: shown(d, later["signal_id"], "POSTED", "P4", time))
        settled(driver, lambda d: shown(d, flaky, "POSTED", "attempt 2/3"))
        settled(driver, lambda d: shown(d, paid, "COMPLETED", "$0.0123 · 1,500 tokens"))
        # only what applies: one attempt of one, no cost without a run, no reason once it is not POSTED
        assert "attempt" not in card_text(driver, urgent) and "$" not in card_text(driver, urgent)
        assert "worker that fits" not in card_text(driver, paid) and "attempt" not in card_text(driver, paid)
        assert "waits for" not in card_text(driver, gate) and "worker that fits" not in card_text(
            driver, gate
        )

        # live: a claim takes the reason off, and the retry's next failure shows its next attempt
        cli.ok("claim", urgent, "--agent", "ps-researcher")
        settled(driver, lambda d: shown(d, urgent, "CLAIMED", "P0", "bug"))
        assert "worker that fits" not in card_text(driver, urgent)
        driver.save_screenshot(str(artifact("ui-cards.png")))
        assert csp_refusals(driver) == []
    finally:
        server.stop()
