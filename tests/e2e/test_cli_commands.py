"""Each command of docs/cli.md on a SQLite file: what it prints, and each refusal with its exit code.

Most tests read one board built once for this module (`board`). Their calls must not write, so they are
listed in READS, each next to its test, and started all at once when the board is ready (a CLI call is
mostly start-up time); each test then asserts on its own call. Tests that change state get a fresh
database of their own (`cli`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future

import pytest

from tests.e2e.conftest import Cli, Result, assert_events, assert_signal, assert_signals, write_agents

pytestmark = pytest.mark.one_process  # its tests share a costly module fixture (tests/scheduling.py)

LONG_TIMEOUTS = {
    "BLACKBOARD_POST_TIMEOUT": "3600",
    "BLACKBOARD_CLAIM_TIMEOUT": "3600",
}  # nothing expires meanwhile


class Board:
    """Six signals on two boards, one in each interesting state, and the outputs of the commands that made them.

    ps-alpha: s1 RESEARCH POSTED (no options) | s2 RESEARCH+INVESTIGATION CLAIMED by ps-researcher |
              s3 REVIEW COMPLETED by ps-reviewer | s4 ANALYSIS POSTED after s1 (pending)
    ps-beta:  s5 INVESTIGATION POSTED (posted in text mode) | s6 DECISION FAILED by ps-generalist (threshold 0.5)
    """

    def __init__(self, cli: Cli) -> None:
        self.cli = cli
        self.post1 = cli(
            "--json",
            "post",
            "--type",
            "RESEARCH",
            "--ps-id",
            "ps-alpha",
            "--entry-id",
            "e-1",
            "--topic",
            "prior work",
        )
        self.s1 = self.post1.expect(0).json()["signal_id"]
        self.s2 = cli.post(
            "--capability", "RESEARCH", "--capability", "INVESTIGATION", ps="ps-alpha", entry="e-2"
        )["signal_id"]
        self.claim2 = cli("claim", self.s2, "--agent", "ps-researcher")  # text mode
        self.s3 = cli.post(type="REVIEW", ps="ps-alpha", entry="e-3", topic="review the design")["signal_id"]
        cli.ok("claim", self.s3, "--agent", "ps-reviewer")
        self.complete3 = cli(
            "--json", "complete", self.s3, "--agent", "ps-reviewer", "--knowledge", "looks right"
        )
        self.s4 = cli.post("--after", self.s1, type="ANALYSIS", ps="ps-alpha", entry="e-4")["signal_id"]
        self.post5 = cli(
            "post",
            "--type",
            "INVESTIGATION",
            "--ps-id",
            "ps-beta",
            "--entry-id",
            "e-5",
            "--topic",
            "why is it slow",
        )  # text mode: the id is the first word
        self.s5 = self.post5.expect(0).stdout.split()[0]
        self.s6 = cli.post(type="DECISION", ps="ps-beta", entry="e-6", topic="pick one")["signal_id"]
        self.claim6 = cli("--json", "claim", self.s6, "--agent", "ps-generalist")
        self.fail6 = cli(
            "--json", "fail", self.s6, "--agent", "ps-generalist", "--error", "no data to decide on"
        )
        self.events = assert_events(cli.ok("events"))
        self.positions = [e["position"] for e in self.events]
        self._reads: dict[str, Future[Result]] = cli.many(
            {name: (args(self), {**LONG_TIMEOUTS, **env}) for name, (args, env) in READS.items()}
        )

    def __getitem__(self, key: str) -> str:
        return getattr(self, key)

    def read(self, name: str) -> Result:
        return self._reads[name].result()


READS: dict[str, tuple[Callable[[Board], tuple[str, ...]], dict[str, str]]] = {}


def _register(name: str, args: tuple[str, ...], env: dict[str, str] | None = None) -> None:
    """`{s1}`-style fields are the board's signal ids, `{p8}` the position of its 9th event, `{db}` and
    `{agents}` the board's database URL and agents folder."""
    READS[name] = (
        lambda b: tuple(
            a.format(
                **{f"s{i}": b[f"s{i}"] for i in range(1, 7)},
                **{f"p{i}": p for i, p in enumerate(b.positions)},
                db=b.cli.db_url,
                agents=b.cli.agents_dir,
            )
            for a in args
        ),
        env or {},
    )


def reads(*args: str, env: dict[str, str] | None = None) -> Callable[[Callable], Callable]:
    """Decorates a test of the board: `args` is its read-only call, and the test's `result` fixture its outcome."""

    def register(test: Callable) -> Callable:
        _register(test.__name__, args, env)
        return test

    return register


@pytest.fixture(scope="module")
def board(make_cli, tmp_path_factory) -> Board:
    folder = tmp_path_factory.mktemp("board")
    return Board(make_cli(f"sqlite:///{folder / 'blackboard.db'}", folder))


@pytest.fixture
def result(board, request) -> Result:
    """The outcome of the call that @reads registered for this test."""
    return board.read(request.node.originalname)


# ---------------------------------------------------------------- post
def test_post_defaults_board_capabilities_and_poster(board):
    doc = assert_signal(board.post1.expect(0).json())
    assert doc["blackboard_id"] == "ps-alpha"  # the PS id
    assert doc["target_capabilities"] == ["RESEARCH"]  # the signal type
    assert doc["posted_by"] and doc["status"] == "POSTED" and doc["claimed_by"] is None
    assert doc["payload"]["topic"] == "prior work"


def test_post_text_output_names_the_signal(board):
    first = board.post5.expect(0).stdout.splitlines()[0]
    assert first.startswith("sig-") and "POSTED" in first and "why is it slow" in first


def test_post_with_the_same_key_on_the_same_board_returns_the_first_signal(cli):
    first = cli.post("--key", "ps-1/e-1")
    again = cli.post("--key", "ps-1/e-1", topic="posted twice by a retrying script")
    other_board = cli.post("--key", "ps-1/e-1", "--blackboard", "ps-other")
    assert again["signal_id"] == first["signal_id"]
    assert again["payload"]["topic"] == "a topic"
    assert other_board["signal_id"] != first["signal_id"]  # keys are per board
    posted = [e for e in assert_events(cli.ok("events")) if e["event_type"] == "AgentSignalPosted"]
    assert [e["data"]["signal_id"] for e in posted] == [first["signal_id"], other_board["signal_id"]]


# ---------------------------------------------------------------- claim
def test_claim_text_output(board):
    result = board.claim2.expect(0)
    assert board.s2 in result.stdout and "CLAIMED" in result.stdout and "ps-researcher" in result.stdout


@reads("claim", "{s2}", "--agent", "ps-analyst")
def test_claim_of_a_claimed_signal_is_refused_naming_the_claimer(result):
    result.expect(3)
    assert "ps-researcher" in result.stderr and result.stdout == ""


@reads("claim", "{s5}", "--agent", "ps-researcher")
def test_claim_below_the_threshold_is_refused(result):
    # ps-researcher scores 0.7 for INVESTIGATION, not above the default threshold 0.8
    result.expect(3)
    assert "threshold" in result.stderr


def test_claim_uses_the_agents_own_threshold(board):
    # ps-generalist scores 0.6 for DECISION: below the default 0.8, above its own threshold 0.5
    doc = assert_signal(board.claim6.expect(0).json())
    assert (doc["status"], doc["claimed_by"]) == ("CLAIMED", "ps-generalist")


@reads("claim", "{s1}", "--agent", "ps-nobody")
def test_claim_by_an_unknown_agent_is_not_found(result):
    result.expect(4)
    assert "ps-nobody" in result.stderr


@reads("claim", "sig-0000beef", "--agent", "ps-researcher")
def test_claim_of_an_unknown_signal_is_not_found(result):
    result.expect(4)
    assert "sig-0000beef" in result.stderr


@reads("claim", "{s4}", "--agent", "ps-analyst")
def test_claim_with_dependencies_pending_is_refused(board, result):
    result.expect(3)
    assert board.s1 in result.stderr


# ---------------------------------------------------------------- complete, fail
@reads("complete", "{s2}", "--agent", "ps-analyst")
def test_complete_by_another_agent_is_refused(result):
    result.expect(3)
    assert "ps-researcher" in result.stderr


@reads("complete", "{s3}", "--agent", "ps-reviewer", "--knowledge", "again")
def test_complete_of_a_completed_signal_is_refused(result):
    result.expect(3)
    assert "COMPLETED" in result.stderr


def test_fail_records_the_error(board):
    doc = assert_signal(board.fail6.expect(0).json())
    assert doc["status"] == "FAILED"
    assert doc["result"]["error"] == "no data to decide on"


@reads("fail", "{s1}", "--agent", "ps-researcher", "--error", "nope")
def test_fail_of_an_unclaimed_signal_is_refused(result):
    result.expect(3)
    assert "POSTED" in result.stderr


# ---------------------------------------------------------------- show, signals
@reads("show", "{s3}")
def test_show_prints_the_signal(board, result):
    result.expect(0)
    assert board.s3 in result.stdout and "COMPLETED" in result.stdout and "looks right" in result.stdout


@reads("--json", "show", "{s3}")
def test_show_json_is_the_completed_document(board, result):
    result.expect(0)
    assert assert_signal(result.json()) == board.complete3.json()


@reads("show", "sig-0000beef")
def test_show_of_an_unknown_signal_is_not_found(result):
    result.expect(4)
    assert "sig-0000beef" in result.stderr


@reads("show", "sig-XYZ")
def test_show_of_a_malformed_id_is_bad_input(board, result):
    result.expect(2)
    assert "sig-XYZ" in result.stderr


SIGNAL_FILTERS = {
    "all": ((), ["s1", "s2", "s3", "s4", "s5", "s6"]),
    "status": (("--status", "POSTED"), ["s1", "s4", "s5"]),
    "type": (("--type", "RESEARCH"), ["s1", "s2"]),
    "capability": (("--capability", "INVESTIGATION"), ["s2", "s5"]),
    "blackboard": (("--blackboard", "ps-beta"), ["s5", "s6"]),
    "limit": (("--limit", "2"), ["s1", "s2"]),
    "combined": (("--status", "POSTED", "--blackboard", "ps-alpha", "--limit", "1"), ["s1"]),
}
for _name, (_args, _) in SIGNAL_FILTERS.items():
    _register(f"signals-{_name}", ("--json", "signals", *_args))


@pytest.mark.parametrize("name", SIGNAL_FILTERS)
def test_signals_filters(board, name):
    docs = assert_signals(board.read(f"signals-{name}").expect(0).json())
    assert [d["signal_id"] for d in docs] == [board[k] for k in SIGNAL_FILTERS[name][1]]  # oldest first


@reads("signals", "--blackboard", "ps-beta")
def test_signals_text_lists_one_line_each(board, result):
    result.expect(0)
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2 and board.s5 in lines[0] and board.s6 in lines[1]


# ---------------------------------------------------------------- match, agents
@reads("--json", "match", "{s5}")
def test_match_ranks_agents_by_score_and_says_who_passes(result):
    ranking = result.expect(0).json()  # INVESTIGATION
    assert [r["agent"] for r in ranking][:2] == ["ps-researcher", "ps-generalist"]
    assert [r["score"] for r in ranking] == sorted((r["score"] for r in ranking), reverse=True)
    passes = {r["agent"]: r["passes"] for r in ranking}
    assert passes == {
        "ps-researcher": False,
        "ps-generalist": True,
        "ps-analyst": False,
        "ps-reviewer": False,
    }
    assert {r["agent"]: r["threshold"] for r in ranking}["ps-generalist"] == 0.5


@reads("match", "{s2}")
def test_match_text_marks_who_may_claim(result):
    lines = result.expect(0).stdout.splitlines()
    researcher = next(line for line in lines if "ps-researcher" in line)
    reviewer = next(line for line in lines if "ps-reviewer" in line)
    assert "yes" in researcher and "no" in reviewer
    assert lines.index(researcher) < lines.index(reviewer)


@reads("match", "sig-0000beef")
def test_match_of_an_unknown_signal_is_not_found(result):
    result.expect(4)


@reads("--json", "agents")
def test_agents_lists_every_file(result):
    report = result.expect(0).json()
    by_name = {a["name"]: a for a in report["agents"]}
    assert (report["loaded"], report["files"], report["left_out"]) == (4, 4, [])
    assert set(by_name) == {"ps-researcher", "ps-analyst", "ps-reviewer", "ps-generalist"}
    assert by_name["ps-generalist"]["threshold"] == 0.5
    assert {c["type"]: c["score"] for c in by_name["ps-analyst"]["capabilities"]} == {
        "ANALYSIS": 0.9,
        "RESEARCH": 0.85,
    }
    assert by_name["ps-reviewer"]["file"].endswith("ps-reviewer.md")


def test_agents_reports_a_bad_file_and_lists_the_others(make_cli, tmp_path):
    folder = write_agents(
        tmp_path / "agents",
        {
            "broken.md": "---\nname: ps-broken\ncapabilities:\n  - type: RESEARCH\n    score: 1.5\n---\nbody\n",
        },
    )
    result = make_cli(f"sqlite:///{tmp_path / 'b.db'}", tmp_path, folder)("agents").expect(0)
    listed, left_out = result.stdout.split("left out:\n")
    assert "broken.md: capabilities[0].score: must be between 0 and 1, got 1.5" in left_out
    for name in ("ps-researcher", "ps-analyst", "ps-reviewer", "ps-generalist"):
        assert name in listed
    assert "ps-broken" not in listed and left_out.endswith(f"4 of 5 files loaded from {folder}\n")


# ---------------------------------------------------------------- wait, watch
def test_wait_on_a_final_signal_returns_at_once(board):
    doc = assert_signal(board.cli.ok("wait", board.s3, "--timeout", "30"))  # waiting would end in exit 5
    assert doc["status"] == "COMPLETED"


@reads("--json", "wait", "{s6}", "--timeout", "30")
def test_wait_on_a_failed_signal_exits_3_and_prints_it(board, result):
    result.expect(3)
    doc = assert_signal(result.json())
    assert (doc["signal_id"], doc["status"]) == (board.s6, "FAILED")
    assert "FAILED" in result.stderr


@reads("wait", "{s1}", "--timeout", "0.5")
def test_wait_times_out(result):
    result.expect(5)
    assert result.stdout == "" and "timed out" in result.stderr


@reads("wait", "sig-0000beef", "--timeout", "0.5")
def test_wait_for_an_unknown_signal_is_not_found(result):
    result.expect(4)


@reads("watch", "--type", "REVIEW", "--timeout", "0.5")
def test_watch_with_nothing_completing_times_out(result):
    result.expect(5)
    assert result.stdout == "" and "timed out" in result.stderr


def test_watch_is_not_woken_by_another_type(cli):
    signal_id = cli.post(type="ANALYSIS")["signal_id"]
    cli.ok("claim", signal_id, "--agent", "ps-analyst")
    started = time.monotonic()
    watch = cli.start("watch", "--type", "RESEARCH", "--type", "REVIEW", "--timeout", "2.5")
    cli.ok("complete", signal_id, "--agent", "ps-analyst")
    result = cli.finish(watch, timeout=30).expect(5)
    assert result.stdout == "" and time.monotonic() - started >= 2.5


# ---------------------------------------------------------------- expire
def test_expire_moves_overdue_signals_to_expired(cli):
    posted = cli.post(entry="e-1")["signal_id"]
    claimed = cli.post(entry="e-2")["signal_id"]
    cli.ok("claim", claimed, "--agent", "ps-researcher")
    time.sleep(0.3)
    expired = assert_signals(
        cli.ok("expire", env={"BLACKBOARD_POST_TIMEOUT": "0.2", "BLACKBOARD_CLAIM_TIMEOUT": "0.2"})
    )
    assert {d["signal_id"]: d["status"] for d in expired} == {posted: "EXPIRED", claimed: "EXPIRED"}


@reads("--json", "expire")
def test_expire_leaves_signals_within_their_timeouts(result):
    result.expect(0)  # with LONG_TIMEOUTS
    assert result.json() == []


# ---------------------------------------------------------------- events
def test_events_lists_the_log_in_order_with_positions(board):
    """The completion's knowledge item lands on the board as an entry right after it (EntryWritten)."""
    assert board.positions == sorted(set(board.positions))
    assert [e["event_type"] for e in board.events] == [
        "AgentSignalPosted",
        "AgentSignalPosted",
        "AgentSignalClaimed",
        "AgentSignalPosted",
        "AgentSignalClaimed",
        "AgentSignalCompleted",
        "EntryWritten",
        "AgentSignalPosted",
        "AgentSignalPosted",
        "AgentSignalPosted",
        "AgentSignalClaimed",
        "AgentSignalFailed",
    ]
    for stream in ("ps-alpha", "ps-beta"):
        versions = [e["version"] for e in board.events if e["stream_id"] == stream]
        assert versions == list(range(1, len(versions) + 1))


@reads("--json", "events", "--blackboard", "ps-beta")
def test_events_of_one_blackboard(board, result):
    events = assert_events(result.expect(0).json())
    assert {e["stream_id"] for e in events} == {"ps-beta"}
    assert [e["data"]["signal_id"] for e in events] == [board.s5, board.s6, board.s6, board.s6]


@reads("--json", "events", "--since", "{p8}")
def test_events_since_a_position(board, result):
    events = assert_events(result.expect(0).json())
    assert [e["position"] for e in events] == board.positions[9:]


@reads("--json", "events", "--since", "{p2}", "--limit", "3")
def test_events_limit(board, result):
    result.expect(0)
    assert [e["position"] for e in assert_events(result.json())] == board.positions[3:6]


@reads("events", "--blackboard", "ps-beta")
def test_events_text_shows_positions_and_types(board, result):
    lines = result.expect(0).stdout.strip().splitlines()
    assert len(lines) == 4 and "AgentSignalFailed" in lines[-1]
    positions = [e["position"] for e in board.events if e["stream_id"] == "ps-beta"]
    assert [int(line.split()[0]) for line in lines] == positions


# ---------------------------------------------------------------- configuration
@reads(
    "--db",
    "{db}",
    "--agents-dir",
    "{agents}",
    "--json",
    "match",
    "{s5}",
    env={
        "BLACKBOARD_DB": "postgresql+psycopg://nobody@127.0.0.1:1/x",
        "BLACKBOARD_AGENTS_DIR": "/nonexistent",
    },
)
def test_flags_before_the_subcommand_win_over_the_environment(result):
    assert {r["agent"] for r in result.expect(0).json()} == {
        "ps-researcher",
        "ps-analyst",
        "ps-reviewer",
        "ps-generalist",
    }


def test_defaults_are_relative_to_the_working_directory(cli, agents_dir):
    write_agents(cli.cwd / "agents")  # ./agents
    doc = cli.post(type="REVIEW", env={"BLACKBOARD_DB": "", "BLACKBOARD_AGENTS_DIR": ""})
    assert (
        doc["status"] == "POSTED"
    )  # ps-reviewer was found: with no capable agent it would be UNCLAIMED at once
    assert (cli.cwd / ".blackboard" / "blackboard.db").is_file()
    assert not (cli.cwd / "blackboard.db").exists()  # the fixture's BLACKBOARD_DB was not used


# ---------------------------------------------------------------- JSON switches
@reads("show", "{s1}", "--json")
def test_json_after_the_subcommand(board, result):
    result.expect(0)
    assert assert_signal(result.json())["signal_id"] == board.s1


@reads("signals", "--blackboard", "ps-beta", env={"BLACKBOARD_JSON": "1"})
def test_json_from_the_environment(board, result):
    docs = assert_signals(result.expect(0).json())
    assert [d["signal_id"] for d in docs] == [board.s5, board.s6]
