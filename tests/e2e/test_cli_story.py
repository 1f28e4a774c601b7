"""The main story, on a SQLite file and on PostgreSQL: post, claim, complete, watch and wait across
processes, the event log, and a projection rebuild. Each backend runs the same tests on its own database
(the PostgreSQL one is the test run's database, emptied first); each signal is on a board of its own."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import Cli, assert_events, assert_signal, assert_signals, database_url

pytestmark = pytest.mark.one_process  # its tests share a costly module fixture (tests/scheduling.py)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def db_url(request, tmp_path_factory) -> str:
    return database_url(request, tmp_path_factory, "story")


@pytest.fixture(scope="module")
def story_cli(make_cli, db_url, tmp_path_factory) -> Iterator[Cli]:
    made = make_cli(db_url, tmp_path_factory.mktemp("cwd"))
    yield made
    made.close()


def _board() -> str:
    return f"ps-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def story(story_cli) -> dict:
    """db upgrade; then, at once on boards of their own: one signal posted with every option, claimed and
    completed; and two signals posted and claimed, for the watch and wait tests to complete."""
    cli = story_cli
    upgrade = cli("db", "upgrade")

    def main_story() -> dict:
        board = _board()
        posted = cli(
            "--json",
            "post",
            "--type",
            "RESEARCH",
            "--ps-id",
            "ps-story",
            "--entry-id",
            "e-12",
            "--topic",
            "event stores in Python",
            "--prompt",
            "Compare three libraries.",
            "--context",
            '{"depth": 2, "sources": ["pypi", "github"]}',
            "--capability",
            "RESEARCH",
            "--capability",
            "INVESTIGATION",
            "--posted-by",
            "ps-skill-test",
            "--blackboard",
            board,
            "--correlation-id",
            "run-77",
        )
        signal_id = posted.expect(0).json()["signal_id"]
        claimed = cli("--json", "claim", signal_id, "--agent", "ps-researcher")
        completed = cli(
            "--json",
            "complete",
            signal_id,
            "--agent",
            "ps-researcher",
            "--artifact",
            "docs/findings.md",
            "--knowledge",
            "eventsourcing is mature",
            "--knowledge",
            "esdbclient needs a server",
        )
        return {"board": board, "id": signal_id, "posted": posted, "claimed": claimed, "completed": completed}

    def claimed_by(agent: str) -> tuple[str, str]:
        board = _board()
        signal_id = cli.post("--blackboard", board)["signal_id"]
        cli.ok("claim", signal_id, "--agent", agent)
        return board, signal_id

    main, for_watch, for_wait, for_race = cli.chains(
        main_story,
        lambda: claimed_by("ps-researcher"),
        lambda: claimed_by("ps-analyst"),
        lambda: cli.post("--blackboard", _board())["signal_id"],
    )
    return {**main, "upgrade": upgrade, "for_watch": for_watch, "for_wait": for_wait, "for_race": for_race}


def test_db_upgrade_creates_the_schema(story):
    assert story["upgrade"].expect(0).stdout.strip()


def test_post_uses_every_option(story):
    doc = assert_signal(story["posted"].expect(0).json())
    assert doc["status"] == "POSTED"
    assert doc["signal_type"] == "RESEARCH"
    assert doc["blackboard_id"] == story["board"]
    assert doc["payload"] == {
        "ps_id": "ps-story",
        "entry_id": "e-12",
        "topic": "event stores in Python",
        "prompt": "Compare three libraries.",
        "context": {"depth": 2, "sources": ["pypi", "github"]},
    }
    assert doc["target_capabilities"] == ["RESEARCH", "INVESTIGATION"]
    assert doc["posted_by"] == "ps-skill-test"


def test_claim_by_a_capable_agent(story):
    doc = assert_signal(story["claimed"].expect(0).json())
    assert (doc["signal_id"], doc["status"], doc["claimed_by"]) == (story["id"], "CLAIMED", "ps-researcher")
    assert doc["claimed_at"]


def test_complete_stores_artifact_and_knowledge(story):
    doc = assert_signal(story["completed"].expect(0).json())
    assert doc["status"] == "COMPLETED" and doc["completed_at"]
    assert doc["result"]["artifact_path"] == "docs/findings.md"
    assert doc["result"]["knowledge_items"] == ["eventsourcing is mature", "esdbclient needs a server"]


def test_a_claim_race_between_two_processes_has_one_winner(story, story_cli):
    signal_id = story["for_race"]  # POSTED; both agents may claim it
    calls = story_cli.many(
        {
            agent: (("--json", "claim", signal_id, "--agent", agent), None)
            for agent in ("ps-researcher", "ps-analyst")
        }
    )
    results = {agent: call.result() for agent, call in calls.items()}
    winners = [agent for agent, result in results.items() if result.returncode == 0]
    assert len(winners) == 1, results
    (winner,), (loser,) = winners, [a for a in results if a not in winners]
    assert results[loser].expect(3).stderr.count(winner) >= 1  # already claimed: stderr says by whom
    assert assert_signal(results[winner].json())["claimed_by"] == winner


def test_show_reads_the_completed_signal(story, story_cli):
    doc = assert_signal(story_cli.ok("show", story["id"]))
    assert doc == story["completed"].json()  # the read model holds what `complete` returned


def test_signals_lists_the_board(story, story_cli):
    docs = assert_signals(story_cli.ok("signals", "--blackboard", story["board"]))
    assert [(d["signal_id"], d["status"]) for d in docs] == [(story["id"], "COMPLETED")]


def test_events_are_the_story_in_order(story, story_cli):
    every = assert_events(story_cli.ok("events", "--blackboard", story["board"]))
    # the completion's two knowledge items landed right after it, each in an entry key's own stream
    assert [(e["event_type"], e["data"]["key"]) for e in every[3:]] == [
        ("EntryWritten", f"{story['id']}/knowledge/1"),
        ("EntryWritten", f"{story['id']}/knowledge/2"),
    ]
    events = [e for e in every if e["stream_id"] == story["board"]]
    assert [e["event_type"] for e in events] == [
        "AgentSignalPosted",
        "AgentSignalClaimed",
        "AgentSignalCompleted",
    ]
    assert [e["version"] for e in events] == [1, 2, 3]
    assert {e["stream_id"] for e in events} == {story["board"]}
    assert {e["data"]["signal_id"] for e in events} == {story["id"]}
    positions = [e["position"] for e in events]
    assert positions == sorted(positions) and len(set(positions)) == 3
    assert events[0]["metadata"]["correlation_id"] == "run-77"  # --correlation-id reaches the log
    since = story_cli.ok("events", "--blackboard", story["board"], "--since", str(positions[0]))
    assert [e["position"] for e in since] == [e["position"] for e in every[1:]]


def test_projection_rebuild_keeps_the_signals(story, story_cli):
    before = assert_signals(story_cli.ok("signals"))
    rebuilt = story_cli("projection", "rebuild").expect(0)
    assert "rebuilt" in rebuilt.stdout
    after = assert_signals(story_cli.ok("signals"))
    assert after == before
    assert story["id"] in {d["signal_id"] for d in after}


def test_watch_prints_a_completion_made_by_another_process(story, story_cli):
    cli, (board, signal_id) = story_cli, story["for_watch"]  # CLAIMED by ps-researcher
    watch = cli.start("--json", "watch", "--type", "RESEARCH", "--blackboard", board, "--timeout", "30")
    cli.ok("complete", signal_id, "--agent", "ps-researcher", "--knowledge", "done")
    completed_at = time.monotonic()
    result = cli.finish(watch, timeout=40).expect(0)
    assert time.monotonic() - completed_at < 10, "watch did not wake up promptly"
    doc = assert_signal(result.json())
    assert (doc["signal_id"], doc["status"]) == (signal_id, "COMPLETED")


def test_wait_returns_when_another_process_completes(story, story_cli):
    cli, (_, signal_id) = story_cli, story["for_wait"]  # CLAIMED by ps-analyst
    waiting = cli.start("--json", "wait", signal_id, "--timeout", "30")
    assert waiting.poll() is None, "wait returned before the signal was final"
    cli.ok("complete", signal_id, "--agent", "ps-analyst")
    completed_at = time.monotonic()
    result = cli.finish(waiting, timeout=40).expect(0)
    assert time.monotonic() - completed_at < 10, "wait did not wake up promptly"
    doc = assert_signal(result.json())
    assert (doc["signal_id"], doc["status"], doc["claimed_by"]) == (signal_id, "COMPLETED", "ps-analyst")
