"""An import replays the board through its rules (issue 27, item 2), through the real executable: a genuine
export of a busy board (retries, cancels, key-restricted claims, entries, a conflict) imports, and each
edit that makes a history no command could have recorded is refused with exit 2 naming the event's
place and the rule, writing nothing."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Cli

pytestmark = pytest.mark.one_process  # its tests share a costly module fixture (tests/scheduling.py)

AGENT = "ps-researcher"


def busy_board(cli: Cli) -> str:
    board = f"busy-{uuid.uuid4().hex[:8]}"
    done = cli.post("--blackboard", board)["signal_id"]
    cli.ok("claim", done, "--agent", AGENT, "--token", "t-1")
    cli.ok("complete", done, "--agent", AGENT, "--token", "t-1", "--knowledge", "logs keep facts")
    failed = cli.post("--blackboard", board)["signal_id"]
    cli.ok("claim", failed, "--agent", AGENT)
    cli.ok("fail", failed, "--agent", AGENT, "--error", "broke")
    cli.ok("retry", failed)
    upstream = cli.post("--blackboard", board)["signal_id"]
    cli.post("--blackboard", board, "--after", upstream)
    cli.ok("cancel", upstream, "--reason", "not needed")  # and what waits on it
    keyed = cli.post("--blackboard", board, "--write-key", "draft/*")["signal_id"]
    cli.ok("claim", keyed, "--agent", AGENT, "--token", "t-2")
    cli.ok(
        "write", "draft/a", "--blackboard", board, "--author", AGENT, "--value", "1", "--signal", keyed,
        "--token", "t-2",
    )  # fmt: skip
    cli.ok("write", "notes/free", "--blackboard", board, "--author", "alice", "--value", '"mine"')
    cli.ok("write", "plan", "--blackboard", board, "--author", "ps-a", "--value", '"a"')
    cli("write", "plan", "--blackboard", board, "--author", "ps-b", "--value", '"b"').expect(3)
    cli.ok("resolve", "plan", "--blackboard", board, "--author", "lead", "--pick", "2", "--rationale", "b")
    flaky = cli.post("--blackboard", board, "--max-attempts", "2")["signal_id"]  # a failed attempt, retried
    cli.ok("claim", flaky, "--agent", AGENT)
    cli.ok("fail", flaky, "--agent", AGENT, "--error", "offline", "--retry-after", "0")
    approved = cli.post("--blackboard", board, "--gate")["signal_id"]
    cli.ok("approve", approved, "--by", "alice", "--note", "fine")
    rejected = cli.post("--blackboard", board, "--gate")["signal_id"]
    cli.ok("reject", rejected, "--by", "bob", "--reason", "not now")
    cli.ok("budget", board, "--usd", "5", "--by", "alice")
    return board


@pytest.fixture(scope="module")
def exported(make_cli, tmp_path_factory) -> dict[str, Any]:
    cwd = tmp_path_factory.mktemp("busy")
    cli = make_cli(f"sqlite:///{cwd / 'busy.db'}", cwd)
    board = busy_board(cli)
    cli("export", board, "--output", str(cwd / "busy.json")).expect(0)
    return json.loads((cwd / "busy.json").read_text())


def _find(doc: dict[str, Any], event_type: str, **data: Any) -> dict[str, Any]:
    return next(
        e
        for e in doc["events"]
        if e["event_type"] == event_type and all(e["data"].get(k) == v for k, v in data.items())
    )


def _insert_after(doc: dict[str, Any], after: dict[str, Any], event: dict[str, Any]) -> None:
    """Put `event` into the board's stream right after `after`: later versions and positions move up one."""
    events = doc["events"]
    at = events.index(after) + 1
    for later in events[at:]:
        later["position"] += 1
        if later["stream_id"] == after["stream_id"]:
            later["version"] += 1
    events.insert(
        at,
        {
            **event,
            "event_id": str(uuid.uuid4()),
            "stream_id": after["stream_id"],
            "position": after["position"] + 1,
            "version": after["version"] + 1,
        },
    )


def _approved_a_signal_that_is_no_gate(doc: dict[str, Any]) -> None:
    approval = copy.deepcopy(_find(doc, "AgentSignalApproved"))
    posted = next(
        e for e in doc["events"] if e["event_type"] == "AgentSignalPosted" and not e["data"].get("gate")
    )
    approval["data"]["signal_id"] = posted["data"]["signal_id"]
    _insert_after(doc, posted, approval)


def _more_attempts_than_posted(doc: dict[str, Any]) -> None:
    _find(doc, "AgentSignalAttemptFailed")["data"]["max_attempts"] = 5  # posted with --max-attempts 2


def _never_claimed(doc: dict[str, Any]) -> None:
    _find(doc, "AgentSignalCompleted")["data"]["completed_by"] = "ps-intruder"


def _claim_after_cancel(doc: dict[str, Any]) -> None:
    cancelled = next(e for e in doc["events"] if e["event_type"] == "AgentSignalCancelled")
    claim = copy.deepcopy(_find(doc, "AgentSignalClaimed"))
    claim["data"]["signal_id"] = cancelled["data"]["signal_id"]
    _insert_after(doc, cancelled, claim)


def _wrong_token(doc: dict[str, Any]) -> None:
    draft = next(e for e in doc["events"] if e["stream_id"].endswith("\x1fdraft/a"))
    draft["metadata"]["token_given"] = False


def _version_gap(doc: dict[str, Any]) -> None:
    failed = _find(doc, "AgentSignalFailed")
    for event in doc["events"][doc["events"].index(failed) :]:
        if event["stream_id"] == failed["stream_id"]:
            event["version"] += 1


def _outside_claimed_keys(doc: dict[str, Any]) -> None:
    free = next(e for e in doc["events"] if e["stream_id"].endswith("\x1fnotes/free"))
    free["data"]["author"] = AGENT  # who holds the claim restricted to draft/*


def _outside_named_keys(doc: dict[str, Any]) -> None:
    draft = next(e for e in doc["events"] if e["stream_id"].endswith("\x1fdraft/a"))
    draft["data"]["author"] = "ps-writer"  # not the claimer of the signal it names


def _completed_twice(doc: dict[str, Any]) -> None:
    completed = _find(doc, "AgentSignalCompleted")
    _insert_after(doc, completed, copy.deepcopy(completed))


def _resolve_without_conflict(doc: dict[str, Any]) -> None:
    kept = next(e for e in doc["events"] if e["event_type"] == "EntryCandidateKept")
    kept["event_type"] = "EntryWritten"
    del kept["data"]["holder"]


EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "completed by one who never claimed it": (_never_claimed, "rule NotTheClaimer"),
    "claimed after it was cancelled": (_claim_after_cancel, "rule SignalNotClaimable"),
    "completed twice": (_completed_twice, "rule InvalidTransition"),
    "written under a claim without its token": (_wrong_token, "the claim's token was not presented"),
    "a version gap": (_version_gap, "versions go 1, 2, ... without a gap"),
    "written outside the keys of the author's claim": (_outside_claimed_keys, "rule KeyPermissionDenied"),
    "written under a signal by one not its claimer": (_outside_named_keys, "only its claimer"),
    "a conflict resolved that never began": (_resolve_without_conflict, "rule NotInConflict"),
    "a signal approved that is no gate": (_approved_a_signal_that_is_no_gate, "rule NotAGate"),
    "a retry with more attempts than posted": (_more_attempts_than_posted, "posted with 2 attempts, not 5"),
}


def test_a_genuine_export_of_a_busy_board_imports_and_round_trips(exported, cli, tmp_path):
    (tmp_path / "busy.json").write_text(json.dumps(exported))

    imported = cli.ok("import", str(tmp_path / "busy.json"))

    assert imported["events"] == len(exported["events"])
    cli("export", exported["blackboard_id"], "--output", str(tmp_path / "again.json")).expect(0)
    assert json.loads((tmp_path / "again.json").read_text()) == exported


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_export_edited_into_a_history_no_command_could_make_is_refused_naming_the_event_and_rule(
    edit, exported, cli, tmp_path
):
    change, says = EDITS[edit]
    document = copy.deepcopy(exported)
    change(document)
    path = Path(tmp_path / "edited.json")
    path.write_text(json.dumps(document))

    refused = cli("import", str(path)).expect(2)

    assert says in refused.stderr, refused.stderr
    assert "blackboard: events[" in refused.stderr, refused.stderr
    assert cli.ok("events", "--all") == []
