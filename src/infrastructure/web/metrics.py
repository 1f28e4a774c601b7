"""`/metrics`: the board in OpenMetrics or Prometheus' text format, read from the read model at each scrape.

A custom collector of the official client library (prometheus_client): nothing is counted in this
process, so the numbers are the store's, whichever process did the work, and a restart of the server
loses none. Each scrape is a handful of GROUP BYs (`status`'s own, and one per histogram), answered as
rows per board, whatever the length of the log or the number of signals. The histograms are of the
signals as they stand (a retried signal leaves its claim wait's bucket), so a bucket can go down: gauge
histograms (OpenMetrics' `gaugehistogram`), which Prometheus does not take for counters (docs/web.md)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeHistogramMetricFamily,
    GaugeMetricFamily,
    Metric,
)
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector, CollectorRegistry
from prometheus_client.samples import Sample

from blackboard.application.errors import UpgradeNeeded
from blackboard.application.ports import CLAIM_WAIT, RUN_TIME, Durations
from blackboard.application.status import BoardStatus, StatusQueries
from blackboard.domain.flows import FLOW_STATES
from blackboard.domain.signals import SignalStatus

logger = logging.getLogger(__name__)
# seconds: from a claim within a worker's wake-up to a run of hours
BOUNDS = (0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0, 14400.0, 86400.0)


class BoardCollector(Collector):
    def __init__(self, status: StatusQueries, labels: tuple[str, ...] = ()) -> None:
        self._status = status
        self._labels = labels  # the signal labels counted apart (BLACKBOARD_METRIC_LABELS)

    def collect(self) -> Iterator[Metric]:
        try:
            boards, unreadable = self._status.overview(), None  # catches the read model up first
        except UpgradeNeeded as exc:  # an event of a newer release: what was folded before it, said so
            boards, unreadable = self._status.overview(catch_up=False), exc
            logger.warning("/metrics serves the read model as folded before an event it cannot read: %s", exc)
        upgrade = GaugeMetricFamily(
            "blackboard_upgrade_needed",
            "1 while the log holds an event this release cannot read (a newer release wrote it): the numbers "
            "are the read model's as folded before it, and the server's log names the event; else 0",
        )
        upgrade.add_metric([], 0 if unreadable is None else 1)
        yield upgrade
        signals = GaugeMetricFamily(
            "blackboard_signals",
            "Signals on the board, by status (as the read model holds them now); with `label`, those carrying "
            "that label, for the labels BLACKBOARD_METRIC_LABELS names",
            labels=["board", "status"],
        )
        conflicts = GaugeMetricFamily(
            "blackboard_open_conflicts",
            "Entry keys of the board in conflict (open candidates)",
            labels=["board"],
        )
        entries = GaugeMetricFamily("blackboard_entries", "Entry keys on the board", labels=["board"])
        gates = GaugeMetricFamily(
            "blackboard_open_gates", "Gates a person may decide now (approve, reject)", labels=["board"]
        )
        oldest = GaugeMetricFamily(
            "blackboard_oldest_waiting_seconds",
            "How long the board's oldest POSTED signal has waited (0: none waits)",
            labels=["board"],
        )
        runs = CounterMetricFamily(
            "blackboard_runner_runs",
            "Runner runs recorded with a completion or failure",
            labels=["board", "agent"],
        )
        tokens = CounterMetricFamily(
            "blackboard_runner_tokens",
            "Tokens runners' runs used, as they recorded them",
            labels=["board", "agent", "kind"],
        )
        cost = CounterMetricFamily(
            "blackboard_runner_cost_usd",
            "What runners' priced runs cost in US dollars (an unpriced run is left out: "
            "blackboard_runner_unpriced_runs; no sample where no run was priced)",
            labels=["board", "agent"],
        )
        unpriced = CounterMetricFamily(
            "blackboard_runner_unpriced_runs",
            "Runner runs whose cost is unknown (a model the runner could not price), left out of the cost",
            labels=["board", "agent"],
        )
        stalls = CounterMetricFamily(
            "blackboard_stalls",
            "Runs stopped because they showed no progress (no output line, token or tool call) for their agent "
            'file\'s stall_timeout: each a failed attempt (docs/control.md, "Stalls")',
            labels=["board"],
        )
        for board in boards:
            name = board.blackboard_id
            stalls.add_metric([name], board.stalls)
            for status in SignalStatus:  # every status, 0 included: a series does not vanish when it empties
                signals.add_metric([name, str(status)], board.signals.get(str(status), 0))
            conflicts.add_metric([name], board.open_conflicts)
            entries.add_metric([name], board.entries)
            gates.add_metric([name], len(board.open_gates))
            oldest.add_metric([name], board.waiting_seconds or 0.0)
            for agent, used in sorted(board.usage.items()):
                runs.add_metric([name, agent], used.runs)
                tokens.add_metric([name, agent, "input"], used.input_tokens)
                tokens.add_metric([name, agent, "output"], used.output_tokens)
                if (known := used.known_cost_usd) is not None:  # unknown is no 0: a dashboard reads 0 as free
                    cost.add_metric([name, agent], known)
                unpriced.add_metric([name, agent], used.unpriced_runs)
        for label, by_board in self._status.labelled_counts(self._labels).items():
            for name, counts in sorted(by_board.items()):  # the same family, with a `label`: a board's
                for status in SignalStatus:  # signals carrying it (select the board's all with label="")
                    signals.samples.append(
                        Sample(
                            "blackboard_signals",
                            {"board": name, "status": str(status), "label": label},
                            counts.get(str(status), 0),
                        )
                    )
        yield from (signals, conflicts, entries, gates, oldest, runs, tokens, cost, unpriced)
        yield stalls
        yield from _flows(boards)
        yield _rate_limited(boards)

        workers = GaugeMetricFamily(
            "blackboard_live_workers", "Worker processes beating now, by agent", labels=["agent"]
        )
        by_agent: dict[str, int] = {}
        for worker in self._status.live_workers():
            by_agent[worker.agent_id] = by_agent.get(worker.agent_id, 0) + 1
        for agent, n in sorted(by_agent.items()):
            workers.add_metric([agent], n)
        yield workers

        wait = GaugeHistogramMetricFamily(
            "blackboard_claim_wait_seconds",
            "From a signal's post to its claim (a retried signal: its current claim), of the signals claimed",
            labels=["board"],
        )
        for found in self._status.durations(CLAIM_WAIT, BOUNDS):
            wait.add_metric([found.blackboard_id], _buckets(found), gsum_value=found.seconds)
        yield wait
        run = GaugeHistogramMetricFamily(
            "blackboard_run_seconds",
            "From a signal's claim to its end (completed, failed, expired, cancelled), by how it ended",
            labels=["board", "status"],
        )
        for found in self._status.durations(RUN_TIME, BOUNDS):
            run.add_metric(
                [found.blackboard_id, str(found.status)], _buckets(found), gsum_value=found.seconds
            )
        yield run


def _flows(boards: list[BoardStatus]) -> Iterator[Metric]:
    """Flows by state, and each running flow's steps by status (a flow's series go once it ends: one per
    flow ever run would grow without bound)."""
    states = GaugeMetricFamily(
        "blackboard_flows",
        "Flows run on the board, by state (running, completed, failed, cancelled)",
        labels=["board", "state"],
    )
    steps = GaugeMetricFamily(
        "blackboard_flow_steps",
        "The steps of each running flow, by the status each stands at (a step retried: its latest signal's)",
        labels=["board", "flow", "status"],
    )
    for board in boards:
        for state in FLOW_STATES:
            if board.flow_states:
                states.add_metric([board.blackboard_id, state], board.flow_states.get(state, 0))
        for flow in board.flows:
            if flow.state == "running":
                for status in SignalStatus:
                    steps.add_metric(
                        [board.blackboard_id, flow.flow_id, str(status)], flow.counts.get(str(status), 0)
                    )
    yield from (states, steps)


def _rate_limited(boards: list[BoardStatus]) -> Metric:
    """The POSTED signals each rate limit holds now, on every board (`waiting: rate limit K`)."""
    held = GaugeMetricFamily(
        "blackboard_rate_limited",
        "POSTED signals a rate limit holds now (their best agent's shared window has no room), by its key",
        labels=["key"],
    )
    by_key: dict[str, int] = {}
    for board in boards:
        for key, n in board.rate_limited.items():
            by_key[key] = by_key.get(key, 0) + n
    for key, n in sorted(by_key.items()):
        held.add_metric([key], n)
    return held


def _buckets(found: Durations) -> list[tuple[str, float]]:
    """Cumulative counts per upper bound, as Prometheus' histogram buckets are, and +Inf for them all."""
    return [*((repr(bound), n) for bound, n in zip(BOUNDS, found.within, strict=True)), ("+Inf", found.count)]


class Metrics:
    """A registry of this one collector (not the library's global one: none of this process's own
    numbers, only the board's), rendered at each scrape."""

    def __init__(self, status: StatusQueries, labels: tuple[str, ...] | None = None) -> None:
        """`labels`: the signal labels to count by; None: BLACKBOARD_METRIC_LABELS' (composition/settings.py)."""
        if labels is None:
            from blackboard.infrastructure.composition.settings import load

            labels = load({}).metric_labels
        self._registry = CollectorRegistry(auto_describe=False)
        self._registry.register(BoardCollector(status, labels))

    def render(self, accept: str = "") -> tuple[bytes, str]:
        """The exposition and its content type: OpenMetrics when the scraper accepts it (Prometheus asks
        for it first), where the histograms say `gaugehistogram`; else Prometheus' text format 0.0.4."""
        encode, content_type = choose_encoder(accept)
        return encode(self._registry), content_type
