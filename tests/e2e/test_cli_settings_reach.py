"""What a setting or flag promises, through the real executable: each test here fails against a one-line bug
that once went unnoticed (issue 17, item 6): `claim` ignoring BLACKBOARD_CLAIM_THRESHOLD, `watch --blackboard`
ignoring the board, and a dedupe key forgotten once a board is restored (imported into a fresh store, or its
read model rebuilt)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Cli, assert_events, assert_signal


def test_claim_honours_the_threshold_from_the_environment(cli):
    # ps-analyst scores 0.85 for RESEARCH and has no threshold of its own: above the default 0.8 ...
    below = cli.post(entry="e-1")["signal_id"]
    refused = cli("claim", below, "--agent", "ps-analyst", env={"BLACKBOARD_CLAIM_THRESHOLD": "0.9"}).expect(
        3
    )
    assert "threshold" in refused.stderr and "0.9" in refused.stderr
    assert cli.ok("show", below)["status"] == "POSTED"  # the refusal wrote nothing
    # ... and the same claim passes with a lower one, or the default
    doc = assert_signal(
        cli.ok("claim", below, "--agent", "ps-analyst", env={"BLACKBOARD_CLAIM_THRESHOLD": "0.5"})
    )
    assert (doc["status"], doc["claimed_by"]) == ("CLAIMED", "ps-analyst")


def test_watch_blackboard_reports_only_a_completion_on_that_board(cli):
    elsewhere = cli.post(ps="ps-other", entry="e-1")["signal_id"]
    mine = cli.post(ps="ps-mine", entry="e-2")["signal_id"]
    for signal_id in (elsewhere, mine):
        cli.ok("claim", signal_id, "--agent", "ps-researcher")
    watch = cli.start("--json", "watch", "--type", "RESEARCH", "--blackboard", "ps-mine", "--timeout", "60")
    cli.ok("complete", elsewhere, "--agent", "ps-researcher")  # first: a watch ignoring the board takes it
    cli.ok("complete", mine, "--agent", "ps-researcher")
    found = cli.finish(watch, timeout=90).expect(0).json()
    assert (found["signal_id"], found["blackboard_id"]) == (mine, "ps-mine")


def _posts(cli: Cli) -> list[str]:
    return [
        e["data"]["signal_id"]
        for e in assert_events(cli.ok("events"))
        if e["event_type"] == "AgentSignalPosted"
    ]


@pytest.mark.parametrize("restore", ["import into a fresh store", "projection rebuild"])
def test_a_repeated_post_after_the_board_is_restored_returns_the_first_signal(make_cli, tmp_path, restore):
    source = make_cli(f"sqlite:///{tmp_path / 'source.db'}", tmp_path)
    first = source.post("--key", "ps-1/e-1", entry="e-1")["signal_id"]
    source.post(entry="e-2")  # another signal, so the board holds more than the keyed one
    if restore == "projection rebuild":
        source.ok("projection", "rebuild")
        board = source
    else:
        source("export", "ps-1", "--output", str(tmp_path / "ps-1.json")).expect(0)
        board = make_cli(f"sqlite:///{tmp_path / 'restored.db'}", tmp_path)
        board.ok("import", str(tmp_path / "ps-1.json"))
    before = _posts(board)

    again = board.post("--key", "ps-1/e-1", entry="e-1", topic="posted again by a retrying script")

    assert again["signal_id"] == first and again["payload"]["topic"] == "a topic"
    assert _posts(board) == before  # no second signal
