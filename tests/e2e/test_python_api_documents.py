"""The Python API gives the documents the CLI prints with `--json`, and raises the CLI's errors: the same
calls run through `Blackboard` in this process and through the real `blackboard` executable on one store
(SQLite file and PostgreSQL). Writes alternate between the two, each checked by a read through the other."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blackboard import Blackboard, BlackboardError, Conflict, InvalidInput, NotFound, Refused, TimedOut
from blackboard.infrastructure.cli.exits import exit_code
from tests.e2e.conftest import BLACKBOARD, Cli, assert_signal, assert_signals, database_url

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store(request, make_cli, agents_dir, tmp_path_factory) -> Iterator[tuple[Blackboard, Cli]]:
    url = database_url(request, tmp_path_factory, "api-docs")
    with Blackboard(url, agents_dir=agents_dir) as api:
        yield api, make_cli(url, tmp_path_factory.mktemp("cwd"))


@pytest.fixture
def board() -> str:
    return f"ps-{uuid.uuid4().hex[:8]}"


def doc(model: Any) -> Any:
    return model.model_dump(mode="json")


def same(model: Any, printed: Any) -> None:
    assert doc(model) == printed
    assert json.loads(model.model_dump_json()) == printed  # the model's own JSON, too


def unwarned(document: dict[str, Any]) -> dict[str, Any]:
    """A posted signal's document as `show` prints it later: without the post's `warnings`."""
    return {k: v for k, v in document.items() if k != "warnings"}


def test_signal_documents_are_the_clis_both_ways(store, board, monkeypatch):
    api, cli = store
    no_claude = {"BLACKBOARD_CLAUDE": "/nonexistent/claude"}  # no runner can start, whatever the machine has
    monkeypatch.setenv("BLACKBOARD_CLAUDE", no_claude["BLACKBOARD_CLAUDE"])
    upstream = api.post(
        "RESEARCH",
        board,
        "e-1",
        "stores",
        prompt="find prior work",
        context={"depth": 2},
        capabilities=["RESEARCH", "INVESTIGATION"],
        dedupe_key=f"{board}/e-1",
    )
    assert unwarned(doc(upstream)) == assert_signal(cli.ok("show", upstream.signal_id))
    printed = cli.post(
        "--blackboard",
        board,
        "--after",
        upstream.signal_id,
        "--read-key",
        "brief",
        "--write-key",
        "draft/*",
        type="REVIEW",
        ps=board,
        entry="e-2",
        topic="review it",
        env=no_claude,
    )
    same(api.show(printed["signal_id"]), unwarned(printed))
    # the fixture's agents have no handler, and their runner cannot start: both interfaces say so
    assert doc(upstream)["warnings"][0].startswith(f"only agents no worker can run fit {upstream.signal_id}")
    assert printed["warnings"][0].startswith(f"only agents no worker can run fit {printed['signal_id']}")

    claimed = api.claim(upstream.signal_id, agent="ps-researcher", token="t-1")
    same(claimed, cli.ok("show", upstream.signal_id))
    completed = cli.ok(
        "complete",
        upstream.signal_id,
        "--agent",
        "ps-researcher",
        "--token",
        "t-1",
        "--artifact",
        "notes.md",
        "--knowledge",
        "logs win",
    )
    same(api.show(upstream.signal_id), assert_signal(completed))
    same(api.wait(upstream.signal_id, timeout=10), cli.ok("wait", upstream.signal_id, "--timeout", "10"))

    failing = api.post("ANALYSIS", board, "e-3", "doomed")
    api.claim(failing.signal_id, agent="ps-analyst")
    same(
        api.fail(failing.signal_id, agent="ps-analyst", error="no sources"), cli.ok("show", failing.signal_id)
    )
    retried = cli.ok("retry", failing.signal_id)
    same(api.show(retried["signal_id"]), retried)

    same(api.signals(blackboard_id=board), assert_signals(cli.ok("signals", "--blackboard", board)))
    same(
        api.signals(status="COMPLETED", capability="INVESTIGATION", blackboard_id=board),
        cli.ok("signals", "--status", "COMPLETED", "--capability", "INVESTIGATION", "--blackboard", board),
    )
    claim_event = api.events(blackboard_id=board)[2]
    assert claim_event.event_type == "AgentSignalClaimed"
    position = claim_event.position  # as it was right after the claim
    same(api.show(upstream.signal_id, at=position), cli.ok("show", upstream.signal_id, "--at", str(position)))
    same(
        api.signals(blackboard_id=board, at=position),
        cli.ok("signals", "--blackboard", board, "--at", str(position)),
    )
    same(api.match(retried["signal_id"]), cli.ok("match", retried["signal_id"]))
    same(api.agents(), cli.ok("agents", env=no_claude))
    same(
        api.watch(["RESEARCH"], blackboard_id=board, since=0, timeout=10),
        cli.ok("watch", "--type", "RESEARCH", "--blackboard", board, "--since", "0", "--timeout", "10"),
    )
    same(api.events(blackboard_id=board), cli.ok("events", "--blackboard", board))
    same(api.events(since=position, limit=3), cli.ok("events", "--since", str(position), "--limit", "3"))


def test_entry_documents_are_the_clis_both_ways(store, board):
    api, cli = store
    first = api.write(
        "findings/store",
        {"pick": "log", "sources": 3},
        blackboard_id=board,
        author="ps-researcher",
        entry_type="finding",
        confidence=0.8,
        topics=["storage"],
        meta={"run": 1},
        depends_on=["brief"],
    )
    same(first, cli.ok("read", "findings/store", "--blackboard", board))
    second = cli.ok(
        "write",
        "findings/store",
        "--blackboard",
        board,
        "--author",
        "ps-researcher",
        "--type",
        "finding",
        "--topic",
        "storage",
        "--value",
        '{"pick": "log", "sources": 4}',
    )
    same(api.read("findings/store", blackboard_id=board), second)

    with pytest.raises(Conflict) as conflict:
        api.write("findings/store", {"pick": "documents"}, blackboard_id=board, author="ps-analyst")
    refused = cli(
        "--json",
        "write",
        "findings/store",
        "--blackboard",
        board,
        "--author",
        "ps-reviewer",
        "--text",
        "mine",
    )
    assert refused.returncode == exit_code(conflict.value) == 3
    same(api.read("findings/store", blackboard_id=board), refused.json())  # the key, with every candidate

    resolved = api.resolve(
        "findings/store", blackboard_id=board, author="ps-lead", pick=2, rationale="more sources"
    )
    same(resolved, cli.ok("read", "findings/store", "--blackboard", board))
    with pytest.raises(Conflict):
        api.write("findings/store", "a third view", blackboard_id=board, author="ps-analyst")
    retopic = api.resolve(  # its own topics, as `resolve --topic` gives them
        "findings/store", blackboard_id=board, author="ps-lead", pick=6, rationale="r", topics=["decided"]
    )
    same(retopic, cli.ok("read", "findings/store", "--blackboard", board))
    assert (resolved.topics, retopic.topics) == (["storage"], ["decided"])
    api.write(
        "plan/outline",
        ["read", "write"],
        blackboard_id=board,
        author="ps-planner",
        entry_type="plan",
        topics=["storage"],
    )

    same(
        api.history("findings/store", blackboard_id=board),
        cli.ok("read", "findings/store", "--blackboard", board, "--history"),
    )
    same(
        api.read("findings/store", blackboard_id=board, at=first.position),
        cli.ok("read", "findings/store", "--blackboard", board, "--at", str(first.position)),
    )
    same(api.entries(blackboard_id=board), cli.ok("entries", "--blackboard", board))
    same(
        api.entries(blackboard_id=board, entry_type="finding", limit=1),
        cli.ok("entries", "--blackboard", board, "--type", "finding", "--limit", "1"),
    )
    same(api.summary(blackboard_id=board), cli.ok("summary", "--blackboard", board))
    same(
        api.watch_topic("storage", blackboard_id=board, since=0, timeout=10),
        cli.ok("watch", "--topic", "storage", "--blackboard", board, "--since", "0", "--timeout", "10"),
    )
    followed = cli(
        "watch", "--topic", "storage", "--blackboard", board, "--since", "0", "--follow", "--timeout", "1"
    )
    lines = [json.loads(line) for line in followed.expect(0).stdout.splitlines()]
    assert len(lines) == 4  # versions 1, 2, the resolution, the plan
    same(api.poll_topic("storage", blackboard_id=board, since=0, timeout=10), lines)


def test_errors_are_the_clis_messages_raised_as_the_class_of_its_exit_code(store, board):
    api, cli = store
    signal = api.post("RESEARCH", board, "e-1", "contested")
    api.claim(signal.signal_id, agent="ps-researcher")
    calls: list[tuple[Any, tuple[str, ...], type[BlackboardError]]] = [
        (
            lambda: api.claim(signal.signal_id, agent="ps-analyst"),
            ("claim", signal.signal_id, "--agent", "ps-analyst"),
            Refused,
        ),
        (
            lambda: api.complete(signal.signal_id, agent="ps-analyst"),
            ("complete", signal.signal_id, "--agent", "ps-analyst"),
            Refused,
        ),
        (lambda: api.show("sig-00000000"), ("show", "sig-00000000"), NotFound),
        (
            lambda: api.claim(signal.signal_id, agent="nobody"),
            ("claim", signal.signal_id, "--agent", "nobody"),
            NotFound,
        ),
        (
            lambda: api.read("nothing/here", blackboard_id=board),
            ("read", "nothing/here", "--blackboard", board),
            NotFound,
        ),
        (
            lambda: api.wait(signal.signal_id, timeout=0.2),
            ("wait", signal.signal_id, "--timeout", "0.2"),
            TimedOut,
        ),
        (
            lambda: api.watch_topic("quiet", blackboard_id=board, timeout=0.2),
            ("watch", "--topic", "quiet", "--blackboard", board, "--timeout", "0.2"),
            TimedOut,
        ),
    ]
    for call, args, family in calls:
        with pytest.raises(family) as raised:
            call()
        printed = cli(*args)
        assert (printed.returncode, printed.stderr.strip()) == (
            exit_code(raised.value),
            f"blackboard: {raised.value}",
        )


def test_bad_input_names_the_argument_and_the_clis_rule_and_writes_nothing(store, board):
    api, cli = store
    before = len(api.events())
    with pytest.raises(InvalidInput) as raised:
        api.post("RESEARCH", board, "e-x", "bad entry id")
    printed = cli(
        "post", "--type", "RESEARCH", "--ps-id", board, "--entry-id", "e-x", "--topic", "bad entry id"
    )
    assert printed.returncode == exit_code(raised.value) == 2
    assert raised.value.field == "entry_id" and f"--entry-id: {raised.value.rule}" in printed.stderr
    with pytest.raises(InvalidInput, match="confidence: Input should be less than or equal to 1"):
        api.write("k", 1, blackboard_id=board, author="a", confidence=2)
    with pytest.raises(InvalidInput, match="^agent: "):
        api.claim("sig-00000001", agent="")
    with pytest.raises(InvalidInput, match="^value: numbers must be finite"):
        api.write("k", {"x": float("nan")}, blackboard_id=board, author="a")
    with pytest.raises(InvalidInput, match="^after: must be a list of strings, got int"):
        api.post("RESEARCH", board, "e-1", "t", after=5)
    with pytest.raises(InvalidInput, match="^context: must be JSON: Object of type set"):
        api.post("RESEARCH", board, "e-1", "t", context={"s": {1, 2}})
    assert len(api.events()) == before


def test_a_value_is_returned_as_the_store_holds_it(store, board):
    api, cli = store
    written = api.write(
        "json/keys", {1: ("a", "b")}, blackboard_id=board, author="ps-writer", meta={"n": (1,)}
    )

    assert (written.value, written.meta) == ({"1": ["a", "b"]}, {"n": [1]})
    same(written, cli.ok("read", "json/keys", "--blackboard", board))


def test_blackboard_without_arguments_opens_the_clis_default_store(tmp_path, monkeypatch):
    for name in ("BLACKBOARD_DB", "BLACKBOARD_AGENTS_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    with Blackboard() as api:
        posted = api.post("RESEARCH", "ps-1", "e-1", "the default store")

    assert (tmp_path / ".blackboard" / "blackboard.db").exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    shown = subprocess.run(
        [BLACKBOARD, "--json", "show", posted.signal_id],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    same(posted, json.loads(shown.stdout))


def test_the_readme_example_runs_as_written(tmp_path):
    page = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)```", page, re.S)
    assert example is not None
    shutil.copytree(ROOT / "agents", tmp_path / "agents")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    ran = subprocess.run(
        [sys.executable, "-c", example.group(1)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert ran.returncode == 0, ran.stderr
    summary = json.loads(ran.stdout)
    assert (summary["open_conflicts"], summary["signals_by_status"]) == ([], {"COMPLETED": 1})


def test_cancel_gives_the_cli_s_documents_and_refuses_a_final_signal_as_the_cli_does(store, board):
    api, cli = store
    first = api.post("RESEARCH", board, "e-1", "stores")
    second = cli.post("--after", first.signal_id, ps=board, entry="e-2")
    runs = [
        cli.post("--correlation-id", f"{board}-run", ps=board, entry=f"e-{n}")["signal_id"] for n in (3, 4)
    ]

    cancelled = api.cancel(first.signal_id, reason="not needed", by="alice")

    assert doc(cancelled) == assert_signal(cli.ok("show", first.signal_id))
    assert cli.ok("show", second["signal_id"])["status"] == "CANCELLED"
    with pytest.raises(Refused, match=f"{first.signal_id} is CANCELLED") as refused:
        api.cancel(first.signal_id)
    printed = cli("cancel", first.signal_id).expect(exit_code(refused.value))
    assert printed.stderr.strip() == f"blackboard: {refused.value}"
    bulk = api.cancel_all(posted_with=f"{board}-run", reason="run over")
    assert sorted(s.signal_id for s in bulk) == sorted(runs)
    assert list(api.cancel_all(blackboard_id=board)) == []
    with pytest.raises(InvalidInput, match="reason"):
        api.cancel(runs[0], reason="")
    assert api.wait(first.signal_id, timeout=1).status == "CANCELLED"  # returned, not raised


def test_priority_and_not_before_go_through_the_api_as_the_cli_s_options(store, board):
    from datetime import timedelta

    api, cli = store
    later = api.post("RESEARCH", board, "e-1", "later", priority=0, not_before=timedelta(hours=1))
    printed = assert_signal(cli.ok("show", later.signal_id))
    assert unwarned(doc(later)) == printed and printed["priority"] == 0 and printed["not_before"] is not None
    with pytest.raises(Refused, match="is not claimable before"):
        api.claim(later.signal_id, agent="ps-researcher")
    with pytest.raises(InvalidInput) as bad_priority:
        api.post("RESEARCH", board, "e-2", "t", priority=5)
    assert bad_priority.value.field == "priority"
    with pytest.raises(InvalidInput) as bad_time:
        api.post("RESEARCH", board, "e-2", "t", not_before="whenever")
    assert bad_time.value.field == "not_before"


def test_max_attempts_and_retry_after_go_through_the_api_as_the_cli_s_options(store, board):
    api, cli = store
    posted = api.post("RESEARCH", board, "e-1", "flaky", max_attempts=2)
    api.claim(posted.signal_id, agent="ps-researcher")

    retried = api.fail(posted.signal_id, agent="ps-researcher", error="the source timed out", retry_after=60)

    printed = assert_signal(cli.ok("show", posted.signal_id))
    assert doc(retried) == printed
    assert (printed["status"], printed["attempt"], printed["max_attempts"]) == ("POSTED", 2, 2)
    assert printed["attempts"][0]["error"] == "the source timed out"
    with pytest.raises(Refused, match="is not claimable before"):
        api.claim(posted.signal_id, agent="ps-researcher")
    with pytest.raises(InvalidInput) as bad:
        api.post("RESEARCH", board, "e-2", "t", max_attempts=0)
    assert bad.value.field == "max_attempts"


def test_gates_are_posted_and_decided_through_the_api_as_through_the_cli(store, board, monkeypatch):
    api, cli = store
    gate = api.post("DECISION", board, "e-1", "ship it?", gate=True, gate_timeout="2h")
    after = api.post("RESEARCH", board, "e-2", "then", after=[gate.signal_id])
    assert (gate.gate, gate.timeout_s) == (True, 7200)

    with pytest.raises(InvalidInput, match="by"):
        api.approve(gate.signal_id, by="")
    monkeypatch.setenv("BLACKBOARD_AGENT", "ps-researcher")  # as inside a handler's run
    with pytest.raises(Refused, match="ps-researcher's run may not approve a gate: only a person decides"):
        api.approve(gate.signal_id, by="ps-researcher")
    monkeypatch.delenv("BLACKBOARD_AGENT")
    approved = api.approve(gate.signal_id, by="alice", note="fine")

    assert doc(approved) == assert_signal(cli.ok("show", gate.signal_id))
    assert (approved.status, approved.decided_by, approved.decision_note) == ("COMPLETED", "alice", "fine")
    assert api.show(after.signal_id).waiting_for == []
    with pytest.raises(Refused, match="is not a gate"):
        api.reject(after.signal_id, by="bob", reason="no")
    second = api.post("DECISION", board, "e-3", "and this?", gate=True)
    rejected = api.reject(second.signal_id, by="bob", reason="no")
    assert rejected.result.error == "rejected by bob: no"


def test_signals_takes_several_capabilities_as_the_cli_s_repeated_option(store, board):
    api, cli = store
    research = api.post("RESEARCH", board, "e-1", "r").signal_id
    review = api.post("REVIEW", board, "e-2", "v").signal_id
    api.post("ANALYSIS", board, "e-3", "a")

    both = api.signals(capability=["RESEARCH", "REVIEW"], blackboard_id=board)
    one = api.signals(capability="REVIEW", blackboard_id=board)

    printed = cli.ok("signals", "--capability", "RESEARCH", "--capability", "REVIEW", "--blackboard", board)
    assert [s.signal_id for s in both] == [s["signal_id"] for s in printed] == [research, review]
    assert [s.signal_id for s in one] == [review]
    with pytest.raises(InvalidInput) as bad:
        api.signals(capability=7, blackboard_id=board)
    assert bad.value.field == "capability"
