"""Each input that once reached exit 1 or was accepted (issue "Trust"): now exit 2, naming the option or
variable and the rule, and nothing written. All run at once on one database, which must stay empty."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Cli

pytestmark = pytest.mark.one_process  # its tests share a costly module fixture (tests/scheduling.py)

POST = ("post", "--type", "RESEARCH", "--ps-id", "ps-1", "--entry-id", "e-1", "--topic", "t")
WRITE = ("write", "k/1", "--blackboard", "b-1", "--author", "a", "--type", "finding")
TOO_BIG = str(2**64)

# case: (arguments, environment, what stderr must say)
CASES: dict[str, tuple[tuple[str, ...], dict[str, str] | None, str]] = {
    "context-out-of-range": ((*POST, "--context", '{"a": 1e400}'), None, "--context: numbers must be finite"),
    "context-nested-thousands-deep": (
        (*POST, "--context", "[" * 5000 + "]" * 5000),
        None,
        "--context: must nest at most 32 levels",
    ),
    "context-nested-past-the-limit": (
        (*POST, "--context", '{"a": ' + "[" * 40 + "]" * 40 + "}"),
        None,
        "--context: must nest at most 32 levels",
    ),
    "context-huge-integer": (
        (*POST, "--context", '{"a": ' + "9" * 5000 + "}"),
        None,
        "--context: integers must fit in 64 bits",
    ),
    "context-lone-surrogate": (
        (*POST, "--context", '{"a": "\\ud800"}'),
        None,
        "--context: the string at /a holds a lone surrogate",
    ),
    "context-nul": (
        (*POST, "--context", '{"a": "\\u0000"}'),
        None,
        "--context: the string at /a holds U+0000",
    ),
    "value-out-of-range": ((*WRITE, "--value", "[1e999]"), None, "--value: numbers must be finite"),
    "meta-too-deep": (
        (*WRITE, "--value", "1", "--meta", '{"m": ' + "[" * 40 + "]" * 40 + "}"),
        None,
        "--meta: must nest at most 32 levels",
    ),
    "watch-timeout-nan": (
        ("watch", "--type", "RESEARCH", "--timeout", "nan"),
        None,
        "--timeout: Input should be a finite number",
    ),
    "wait-timeout-nan": (
        ("wait", "sig-0000beef", "--timeout", "nan"),
        None,
        "--timeout: Input should be a finite number",
    ),
    "wait-timeout-inf": (
        ("wait", "sig-0000beef", "--timeout", "inf"),
        None,
        "--timeout: Input should be a finite number",
    ),
    "grace-nan": (
        ("worker", "--agent", "ps-researcher", "--once", "--grace", "nan"),
        None,
        "--grace: must be 0 or more",
    ),
    "head-start-nan": (
        ("worker", "--agent", "ps-researcher", "--once", "--head-start", "nan"),
        None,
        "--head-start: must be",
    ),
    "concurrency-huge": (
        ("worker", "--agent", "ps-researcher", "--once", "--concurrency", TOO_BIG),
        None,
        "--concurrency: must be a whole number from 1 to 10000",
    ),
    "events-since-past-64-bits": (
        ("events", "--since", TOO_BIG),
        None,
        "--since: Input should be less than or equal to 9223372036854775807",
    ),
    "show-at-past-64-bits": (
        ("show", "sig-0000beef", "--at", TOO_BIG),
        None,
        "--at: Input should be less than or equal to 9223372036854775807",
    ),
    "signals-limit-past-64-bits": (
        ("signals", "--limit", TOO_BIG),
        None,
        "--limit: Input should be less than or equal to 9223372036854775807",
    ),
    "read-at-past-64-bits": (
        ("read", "k/1", "--blackboard", "b-1", "--at", TOO_BIG),
        None,
        "--at: Input should be less than or equal to 9223372036854775807",
    ),
    "db-flag-not-a-url": (
        ("--db", "foo://bar", "signals"),
        None,
        "--db: must be an SQLAlchemy URL of SQLite or PostgreSQL",
    ),
    "db-variable-not-a-url": (
        ("signals",),
        {"BLACKBOARD_DB": "not a url"},
        "BLACKBOARD_DB: must be an SQLAlchemy URL",
    ),
    "db-flag-empty": (("--db", "", "signals"), None, "--db: must be an SQLAlchemy URL"),
    "post-timeout-inf": (
        ("signals",),
        {"BLACKBOARD_POST_TIMEOUT": "inf"},
        "BLACKBOARD_POST_TIMEOUT: must be seconds, above 0 and at most",
    ),
    "claim-timeout-1e300": (
        ("signals",),
        {"BLACKBOARD_CLAIM_TIMEOUT": "1e300"},
        "BLACKBOARD_CLAIM_TIMEOUT: must be seconds",
    ),
    "busy-timeout-nan": (
        ("signals",),
        {"BLACKBOARD_SQLITE_BUSY_TIMEOUT": "nan"},
        "BLACKBOARD_SQLITE_BUSY_TIMEOUT: must be",
    ),
    "topic-not-utf8": (
        (*POST, "--topic", "caf\udce9"),
        None,
        "--topic: must be valid UTF-8 text",
    ),  # b"caf\xe9"
    "json-any-value": (
        ("signals",),
        {"BLACKBOARD_JSON": "banana"},
        "BLACKBOARD_JSON: must be 1, true, yes, 0, false or no",
    ),
}


@pytest.fixture(scope="module")
def attempts(make_cli, tmp_path_factory):
    folder = tmp_path_factory.mktemp("limits")
    cli: Cli = make_cli(f"sqlite:///{folder / 'blackboard.db'}", folder)
    started = cli.many({name: (args, env) for name, (args, env, _) in CASES.items()})
    results = {name: future.result() for name, future in started.items()}
    return cli, results


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_exits_2_naming_the_field_and_the_rule(attempts, case):
    _, results = attempts

    result = results[case].expect(2)

    assert CASES[case][2] in result.stderr


def test_none_of_the_refused_inputs_wrote_anything(attempts):
    cli, _ = attempts

    assert cli.ok("events") == []
