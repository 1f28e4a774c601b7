"""Bad input, bad configuration, unexpected errors and help: exit codes 1 and 2, clear messages, nothing written.

None of the refused calls may write, so `attempts` starts them all at once on one database (a CLI call is
mostly start-up time), then reads the event log once: each bad post targets a board of its own
(`ps-<case>`), so a post that wrongly wrote is pinned on its own test.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import Future, wait
from dataclasses import dataclass
from typing import Any

import pytest

from tests.e2e.conftest import BLACKBOARD, Cli, Result, assert_events

pytestmark = pytest.mark.one_process  # its tests share a costly module fixture (tests/scheduling.py)

UNREACHABLE = "postgresql+psycopg://nobody@127.0.0.1:1/x"


def post(case: str, *args: str) -> tuple[str, ...]:
    return ("post", "--ps-id", f"ps-{case}", "--topic", "a topic", *args)


# case: (arguments, exit code, what stderr must name)
BAD_POSTS = {
    "entry-id": (post("entry-id", "--type", "RESEARCH", "--entry-id", "7"), 2, "--entry-id"),
    "topic-too-long": (
        (
            "post",
            "--ps-id",
            "ps-topic-too-long",
            "--type",
            "RESEARCH",
            "--entry-id",
            "e-1",
            "--topic",
            "x" * 201,
        ),
        2,
        "--topic",
    ),
    "context-not-json": (
        post("context-not-json", "--type", "RESEARCH", "--entry-id", "e-1", "--context", "{depth: 2}"),
        2,
        "--context",
    ),
    "context-not-object": (
        post("context-not-object", "--type", "RESEARCH", "--entry-id", "e-1", "--context", "[1, 2]"),
        2,
        "--context",
    ),
    "unknown-type": (post("unknown-type", "--type", "GOSSIP", "--entry-id", "e-1"), 2, "--type"),
    "after-unknown-signal": (
        post("after-unknown-signal", "--type", "RESEARCH", "--entry-id", "e-1", "--after", "sig-0000beef"),
        4,
        "sig-0000beef",
    ),
    "context-nan": (
        post("context-nan", "--type", "RESEARCH", "--entry-id", "e-1", "--context", '{"ratio": NaN}'),
        2,
        "--context",
    ),
}
BAD_VALUES = {
    "signals-limit": (("signals", "--limit", "0"), "--limit"),
    "events-since": (("events", "--since", "-1"), "--since"),
    "watch-timeout": (("watch", "--type", "RESEARCH", "--timeout", "-1"), "--timeout"),
}
BAD_SETTINGS = {
    "BLACKBOARD_CLAIM_THRESHOLD": "abc",
    "BLACKBOARD_POST_TIMEOUT": "-1",
    "BLACKBOARD_POOL_PRE_PING": "maybe",
}
# A bad BLACKBOARD_POOL_PRE_PING stops every command before it opens the database.
PRE_PING_CALLS = {
    "post": post("pre-ping", "--type", "RESEARCH", "--entry-id", "e-1"),
    "claim": ("claim", "sig-0000beef", "--agent", "ps-researcher"),
    "expire": ("expire",),
    "worker": ("worker", "--agent", "ps-researcher", "--once"),
    "db-upgrade": ("db", "upgrade"),
}
PRE_PING_RULE = "BLACKBOARD_POOL_PRE_PING: must be 1, true, yes, 0, false or no, got 'maybe'"
TOKEN_CALLS = {
    "complete": ("complete", "sig-0000beef", "--agent", "ps-researcher", "--token", "tok-1"),
    "fail": ("fail", "sig-0000beef", "--agent", "ps-researcher", "--token", "tok-1", "--error", "gave up"),
}


@dataclass
class Attempts:
    cli: Cli
    calls: dict[str, Future[Result]]
    new_events: list[dict[str, Any]]

    def __getitem__(self, name: str) -> Result:
        return self.calls[name].result()

    def events_of(self, board: str) -> list[dict[str, Any]]:
        return [e for e in self.new_events if e["stream_id"] == board]


@pytest.fixture(scope="module")
def attempts(make_cli, tmp_path_factory) -> Attempts:
    folder = tmp_path_factory.mktemp("bad-input")
    cli = make_cli(f"sqlite:///{folder / 'blackboard.db'}", folder)
    cli.post(ps="ps-1", entry="e-1")  # the log is not empty: "no new event" is measured from here
    last = assert_events(cli.ok("events"))[-1]["position"]
    calls: dict[str, tuple[tuple[str, ...], dict[str, str] | None]] = {
        **{f"post-{case}": (args, None) for case, (args, _, _) in BAD_POSTS.items()},
        **{f"value-{case}": (args, None) for case, (args, _) in BAD_VALUES.items()},
        **{f"setting-{name}": (("signals",), {name: value}) for name, value in BAD_SETTINGS.items()},
        **{f"token-{name}": (args, None) for name, args in TOKEN_CALLS.items()},
        **{
            f"pre-ping-{name}": (args, {"BLACKBOARD_POOL_PRE_PING": "maybe"})
            for name, args in PRE_PING_CALLS.items()
        },
        "unreachable": (("signals",), {"BLACKBOARD_DB": UNREACHABLE}),
    }
    futures = cli.many(calls)
    wait(futures.values())
    return Attempts(cli, futures, assert_events(cli.ok("events", "--since", str(last))))


@pytest.mark.parametrize("case", [c for c in BAD_POSTS if c != "context-nan"])
def test_invalid_post_is_refused_and_writes_nothing(attempts, case):
    _, code, field = BAD_POSTS[case]
    result = attempts[f"post-{case}"].expect(code)
    assert field in result.stderr, f"stderr does not name {field}: {result.stderr}"
    assert result.stdout == ""
    assert attempts.events_of(f"ps-{case}") == []


def test_context_with_nan_is_not_json(attempts):
    assert attempts.events_of("ps-context-nan") == []
    assert "--context" in attempts["post-context-nan"].expect(2).stderr


@pytest.mark.parametrize("case", BAD_VALUES)
def test_invalid_option_value_is_bad_input_naming_it(attempts, case):
    result = attempts[f"value-{case}"].expect(2)
    assert BAD_VALUES[case][1] in result.stderr


@pytest.mark.parametrize("variable", BAD_SETTINGS)
def test_bad_configuration_is_bad_input_naming_the_variable(attempts, variable):
    result = attempts[f"setting-{variable}"].expect(2)
    assert variable in result.stderr and BAD_SETTINGS[variable] in result.stderr


@pytest.mark.parametrize("command", PRE_PING_CALLS)
def test_a_bad_pool_pre_ping_value_stops_any_command_naming_the_rule_and_writing_nothing(attempts, command):
    result = attempts[f"pre-ping-{command}"].expect(2)
    assert PRE_PING_RULE in result.stderr and result.stdout == ""
    assert attempts.events_of("ps-pre-ping") == []


@pytest.mark.parametrize("command", TOKEN_CALLS)
def test_complete_and_fail_accept_a_token(attempts, command):
    result = attempts[f"token-{command}"].expect(4)  # the option is accepted; the signal does not exist
    assert "sig-0000beef" in result.stderr


def test_unreachable_database_is_an_unexpected_error(attempts):
    result = attempts["unreachable"].expect(1)
    assert result.stderr.startswith("blackboard:") and result.stdout == ""


def test_unexpected_error_is_one_line(attempts):
    result = attempts["unreachable"].expect(1)
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_closed_stdout_shows_no_traceback(attempts):
    cli = attempts.cli
    proc = subprocess.Popen(
        [BLACKBOARD, "--json", "agents"],
        env=cli.environment(),
        cwd=cli.cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc.stdout.close()  # the reader went away before anything was printed
    stderr = proc.stderr.read()
    proc.wait(timeout=60)
    assert "Traceback" not in stderr, stderr


COMMANDS = [
    "db upgrade",
    "post",
    "claim",
    "complete",
    "fail",
    "show",
    "signals",
    "match",
    "agents",
    "watch",
    "wait",
    "expire",
    "events",
    "projection rebuild",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_an_example(command, tmp_path):
    done = subprocess.run(
        [BLACKBOARD, *command.split(), "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "example" in done.stdout.lower()
    examples = [line.strip() for line in done.stdout.splitlines() if line.strip().startswith("blackboard ")]
    assert any(command.split()[-1] in line.split() for line in examples), done.stdout
