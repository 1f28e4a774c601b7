"""`blackboard ui`'s /metrics: the real server scraped over HTTP after real work on its database, the answer
parsed with the official client's own parsers (Prometheus' text format, and OpenMetrics when asked for):
signals by status, the claim-wait and run-time gauge histograms (each signal in the bucket its times put
it in, a span the clocks made negative at 0), open conflicts, runners' tokens and cost, live workers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from dependency_injector import providers
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families

from blackboard.application.commands import ClaimSignal, CompleteSignal, FailSignal, PostSignal
from blackboard.application.knowledge.commands import WriteEntry
from blackboard.application.ports import Clock
from blackboard.domain.knowledge.entries import KeyInConflict
from blackboard.domain.signals import SignalUsage
from blackboard.infrastructure.composition import settings
from blackboard.infrastructure.composition.container import Container
from tests.e2e.conftest import QUICK_AGENT, Cli, cli_with_agents
from tests.e2e.web import UiServer


class SteppedClock(Clock):
    """The work's own times, so each signal's wait and run are known to the second."""

    def __init__(self, start: datetime) -> None:
        self.at = start

    def now(self) -> datetime:
        return self.at


@pytest.fixture(params=["sqlite", "postgresql"])
def mcli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    return cli_with_agents(
        request, make_cli, tmp_path_factory, tmp_path, "metrics", {"ps-quick.md": QUICK_AGENT}
    )


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample by name and labels, from the official parser (which refuses a malformed exposition)."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def do_the_work(cli: Cli) -> None:
    """On board ps-m: one signal claimed 2 s after its post and completed 70 s later by a runner that used
    tokens; one claimed after 72 s and failed 3 s later; one claimed and still running; one completed by a
    process whose clock is 4 s behind its claimer's (a run of -4 s); one never claimed. A conflict on an
    entry key. Through the service, in this process, with a clock of the test's own."""
    clock = SteppedClock(datetime.now(UTC) - timedelta(hours=1))
    container = Container(config=settings.load({}, env=cli.environment()))
    container.clock.override(providers.Object(clock))
    service, knowledge = container.service(), container.knowledge()

    def post(topic: str) -> str:
        command = PostSignal(signal_type="RESEARCH", ps_id="ps-m", entry_id="e-1", topic=topic)
        return service.post_signal(command).signal_id

    def after(seconds: float) -> None:
        clock.at += timedelta(seconds=seconds)

    done, failing, running, skewed = post("done"), post("failing"), post("running"), post("skewed")
    post("waiting")
    after(2)
    service.claim_signal(ClaimSignal(signal_id=done, agent_id="ps-quick"))
    after(70)
    usage = SignalUsage(runner="anthropic", model="m", input_tokens=1200, output_tokens=300, cost_usd=0.25)
    service.complete_signal(CompleteSignal(signal_id=done, agent_id="ps-quick", usage=usage))
    service.claim_signal(ClaimSignal(signal_id=failing, agent_id="ps-quick"))  # 72 s after its post
    after(3)
    cost = SignalUsage(runner="anthropic", input_tokens=100, output_tokens=0, cost_usd=0.05)
    service.fail_signal(FailSignal(signal_id=failing, agent_id="ps-quick", error="no", usage=cost))
    service.claim_signal(ClaimSignal(signal_id=running, agent_id="ps-quick"))  # 75 s after its post
    service.claim_signal(ClaimSignal(signal_id=skewed, agent_id="ps-quick"))  # 75 s too
    after(-4)
    service.complete_signal(CompleteSignal(signal_id=skewed, agent_id="ps-quick"))

    knowledge.write(WriteEntry(blackboard_id="ps-m", key="plan", value="x", author="ps-a"))
    knowledge.write(WriteEntry(blackboard_id="ps-m", key="agreed", value=1, author="ps-a"))
    with pytest.raises(KeyInConflict):
        knowledge.write(WriteEntry(blackboard_id="ps-m", key="plan", value="y", author="ps-b"))
    container.shutdown_resources()


def test_metrics_are_the_boards_numbers_in_prometheus_text_format(mcli: Cli):
    do_the_work(mcli)
    worker = mcli.start("worker", "--agent", "ps-quick", "--board", "ps-idle")  # beats: a live worker
    server = UiServer(mcli).wait_ready()
    try:
        status, headers, body = server.get("/metrics")  # no token, no cookie: loopback, like the page
        assert status == 200, body
        assert headers["content-type"].startswith("text/plain; version="), headers
        assert headers["content-security-policy"].startswith("default-src 'none'")
        found = samples(body.decode())

        def value(name: str, **labels: str) -> float:
            return found[(name, tuple(sorted(labels.items())))]

        board = {"board": "ps-m"}
        assert {
            s: value("blackboard_signals", status=s, **board)
            for s in ("POSTED", "CLAIMED", "COMPLETED", "FAILED", "EXPIRED")
        } == {"POSTED": 1, "CLAIMED": 1, "COMPLETED": 2, "FAILED": 1, "EXPIRED": 0}
        assert value("blackboard_open_conflicts", **board) == 1
        assert value("blackboard_entries", **board) == 2
        assert value("blackboard_oldest_waiting_seconds", **board) >= 3600

        # claim waits 2, 72, 75, 75 s: one within 5 s, all four within 300 s (gauge histograms: the
        # signals as they stand, so _gcount and _gsum, not a counter's _count and _sum)
        wait = {
            le: value("blackboard_claim_wait_seconds_bucket", le=le, **board)
            for le in ("1.0", "5.0", "60.0", "300.0", "+Inf")
        }
        assert wait == {"1.0": 0, "5.0": 1, "60.0": 1, "300.0": 4, "+Inf": 4}
        assert value("blackboard_claim_wait_seconds_gcount", **board) == 4
        assert value("blackboard_claim_wait_seconds_gsum", **board) == pytest.approx(224, abs=0.01)
        # runs: 70 s and -4 s (counted 0) completed, 3 s failed; the claim still running is in no run time
        completed, failed = {**board, "status": "COMPLETED"}, {**board, "status": "FAILED"}
        assert value("blackboard_run_seconds_bucket", le="0.1", **completed) == 1
        assert value("blackboard_run_seconds_bucket", le="60.0", **completed) == 1
        assert value("blackboard_run_seconds_bucket", le="300.0", **completed) == 2
        assert value("blackboard_run_seconds_gsum", **completed) == pytest.approx(70, abs=0.01)
        assert value("blackboard_run_seconds_bucket", le="1.0", **failed) == 0
        assert value("blackboard_run_seconds_bucket", le="5.0", **failed) == 1
        assert value("blackboard_run_seconds_gcount", **failed) == 1
        assert not any(
            name == "blackboard_run_seconds_gcount" and ("status", "CLAIMED") in labels
            for name, labels in found
        )

        agent = {**board, "agent": "ps-quick"}
        assert value("blackboard_runner_tokens_total", kind="input", **agent) == 1300
        assert value("blackboard_runner_tokens_total", kind="output", **agent) == 300
        assert value("blackboard_runner_cost_usd_total", **agent) == pytest.approx(0.30)
        assert value("blackboard_runner_runs_total", **agent) == 2
        assert value("blackboard_live_workers", agent="ps-quick") == 1

        # Prometheus asks for OpenMetrics first: there the histograms are typed gaugehistogram (no rate())
        status, headers, body = server.get(
            "/metrics", {"Accept": "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4"}
        )
        assert status == 200, body
        assert headers["content-type"].startswith("application/openmetrics-text"), headers
        types = {family.name: family.type for family in openmetrics_families(body.decode())}
        assert types["blackboard_claim_wait_seconds"] == "gaugehistogram"
        assert types["blackboard_run_seconds"] == "gaugehistogram"
        assert types["blackboard_runner_tokens"] == "counter"
    finally:
        server.stop()
        worker.terminate()
        mcli.finish(worker)


def test_unpriced_runs_are_left_out_of_the_cost_and_counted_in_their_own_series(mcli: Cli):
    """Issue 34, item 10: /metrics counted a run of a model without a price as $0 (free, to a dashboard). The
    cost counter now holds the priced runs only, with no sample where no run was priced, and
    blackboard_runner_unpriced_runs counts the others."""
    container = Container(config=settings.load({}, env=mcli.environment()))
    service = container.service()

    def ran(board: str, cost: float | None) -> None:
        posted = service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id=board, entry_id="e-1", topic="t")
        )
        service.claim_signal(ClaimSignal(signal_id=posted.signal_id, agent_id="ps-quick"))
        usage = SignalUsage(runner="openai", model="local", input_tokens=10, output_tokens=1, cost_usd=cost)
        service.complete_signal(CompleteSignal(signal_id=posted.signal_id, agent_id="ps-quick", usage=usage))

    ran("ps-local", None)
    ran("ps-local", None)
    ran("ps-mixed", 0.25)
    ran("ps-mixed", None)
    container.shutdown_resources()
    server = UiServer(mcli).wait_ready()
    try:
        status, _, body = server.get("/metrics")
    finally:
        server.stop()

    assert status == 200, body
    found = samples(body.decode())
    local, mixed = {"board": "ps-local", "agent": "ps-quick"}, {"board": "ps-mixed", "agent": "ps-quick"}

    def key(name: str, labels: dict[str, str]) -> tuple[str, tuple[tuple[str, str], ...]]:
        return name, tuple(sorted(labels.items()))

    assert key("blackboard_runner_cost_usd_total", local) not in found  # unknown: no sample, never 0
    assert found[key("blackboard_runner_unpriced_runs_total", local)] == 2
    assert found[key("blackboard_runner_runs_total", local)] == 2
    assert found[key("blackboard_runner_cost_usd_total", mixed)] == pytest.approx(0.25)
    assert found[key("blackboard_runner_unpriced_runs_total", mixed)] == 1
