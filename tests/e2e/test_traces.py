"""Traces across processes (docs/operate.md, "Traces"): a `post` in one CLI process and the claim, run and
completion in a `worker --once` process land in one trace, the post's correlation id's; a claim and a failure
by hand, each its own process, join the post's trace too. Each process keeps its spans in the SDK's memory
and appends them to a file at exit (BLACKBOARD_TRACES_FILE, for tests); without it, and without OTEL_*
variables, nothing is traced (and opentelemetry is not imported: tests/integration/test_command_imports.py)."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path

import pytest

from tests.e2e.conftest import QUICK_AGENT, Cli


@pytest.fixture
def qcli(make_cli, tmp_path) -> Cli:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "ps-quick.md").write_text(QUICK_AGENT)
    return make_cli(f"sqlite:///{tmp_path / 'b.db'}", tmp_path, agents)


def spans_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_post_and_the_workers_claim_run_and_completion_are_one_trace_across_processes(qcli: Cli, tmp_path):
    traces = tmp_path / "spans.jsonl"
    traced = {"BLACKBOARD_TRACES_FILE": str(traces)}
    posted = qcli.post(env=traced)["signal_id"]
    qcli.ok("worker", "--agent", "ps-quick", "--once", env=traced)
    by_hand = qcli.post("--correlation-id", "job-7", "--topic", "by hand", env=traced)["signal_id"]
    qcli.ok("claim", by_hand, "--agent", "ps-quick", env=traced)
    qcli.ok("fail", by_hand, "--agent", "ps-quick", "--error", "no luck", env=traced)
    qcli.post(topic="not traced")  # no variable: no span

    spans = spans_of(traces)
    one = {s["name"]: s for s in spans if s["attributes"]["blackboard.signal_id"] == posted}
    (post_event,) = [
        e
        for e in qcli.ok("events", "--all")
        if e["event_type"] == "AgentSignalPosted" and e["data"]["signal_id"] == posted
    ]
    trace = uuid.UUID(post_event["metadata"]["correlation_id"]).hex  # the correlation id's 128 bits

    assert sorted(one) == ["blackboard.claim", "blackboard.complete", "blackboard.post", "blackboard.run"]
    assert {s["trace_id"] for s in one.values()} == {trace}
    assert one["blackboard.post"]["parent_id"] is None
    assert one["blackboard.claim"]["parent_id"] == one["blackboard.post"]["span_id"]
    assert one["blackboard.run"]["parent_id"] == one["blackboard.claim"]["span_id"]
    assert one["blackboard.complete"]["parent_id"] == one["blackboard.run"]["span_id"]
    assert (
        one["blackboard.post"]["pid"] != one["blackboard.claim"]["pid"] == one["blackboard.complete"]["pid"]
    )
    assert (
        one["blackboard.post"]["start"] <= one["blackboard.post"]["end"] <= one["blackboard.claim"]["start"]
    )
    assert one["blackboard.complete"]["attributes"]["blackboard.status"] == "COMPLETED"

    other = {s["name"]: s for s in spans if s["attributes"]["blackboard.signal_id"] == by_hand}
    named = hashlib.sha256(b"job-7").hexdigest()[:32]  # a correlation id that is no UUID
    assert sorted(other) == ["blackboard.claim", "blackboard.fail", "blackboard.post"]
    assert {s["trace_id"] for s in other.values()} == {named}
    assert len({s["pid"] for s in other.values()}) == 3
    # each in a process of its own: both children of the post, found in the log
    assert (
        other["blackboard.claim"]["parent_id"]
        == other["blackboard.fail"]["parent_id"]
        == other["blackboard.post"]["span_id"]
    )
    assert other["blackboard.fail"]["status"] == "ERROR" and one["blackboard.complete"]["status"] == "UNSET"
    assert len(spans) == 7  # the untraced post added none
