"""Rate limits (docs/control.md, "Rate limits") through the real CLI on SQLite and PostgreSQL: two agents naming
one key share its window across boards; a signal the window holds stays POSTED and `claim`, `show`, `next` and
`status` say `waiting: rate limit K` (and the Python API's claim is refused alike, `/metrics` counts what the
key holds); the window refills with time; bad `rate_limit` values in an agent file are
reported as a broken file."""

from __future__ import annotations

import pytest

from blackboard import Blackboard, Refused
from tests.e2e.conftest import Cli, cli_with_agents
from tests.e2e.test_ui_metrics import samples
from tests.e2e.web import UiServer
from tests.waiting import wait_until

KEY = "model-api"


def limited(name: str, rpm: int = 2) -> str:
    return (
        f"---\nname: {name}\ncapabilities: {{ANALYSIS: 0.9}}\ncommand: echo done\n"
        f"rate_limit: {{key: {KEY}, requests_per_minute: {rpm}}}\n---\nUnder one API's rate limit.\n"
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def rcli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    agents = {"ps-rate-a.md": limited("ps-rate-a"), "ps-rate-b.md": limited("ps-rate-b")}
    return cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "rates", agents)


def test_two_agents_naming_one_key_share_its_window_and_a_held_signal_says_so_everywhere(rcli):
    first = [rcli.post(type="ANALYSIS", ps=f"ps-r{n}", entry=f"e-{n}")["signal_id"] for n in (1, 2)]
    held = rcli.post(type="ANALYSIS", ps="ps-r3", entry="e-3")["signal_id"]

    rcli.ok("claim", first[0], "--agent", "ps-rate-a")
    rcli.ok("claim", first[1], "--agent", "ps-rate-b")  # the other agent, another board: the same window
    refused = rcli("claim", held, "--agent", "ps-rate-a").expect(3)

    assert f"waiting: rate limit {KEY}" in refused.stderr
    assert "Traceback" not in refused.stderr
    shown = rcli.ok("show", held)
    assert shown["status"] == "POSTED" and shown["waiting_for_a_rate_limit"] == KEY
    assert f"waiting: rate limit {KEY}" in rcli("show", held).expect(0).stdout
    planned = rcli.ok("next", "--blackboard", "ps-r3")
    assert planned["next"] == []
    assert [(m["signal_id"], m["reason"]) for m in planned["waiting_for_a_rate_limit"]] == [
        (held, f"waiting: rate limit {KEY}")
    ]
    assert f"waiting: rate limit {KEY}" in rcli("next").expect(0).stdout
    (board,) = rcli.ok("status", "--blackboard", "ps-r3")
    assert board["waiting_for_a_rate_limit"] == {KEY: 1}
    assert f"waiting: rate limit {KEY}" in rcli("status").expect(0).stdout


def test_the_python_api_shares_the_window_with_cli_processes_and_metrics_count_what_it_holds(rcli):
    ids = [rcli.post(type="ANALYSIS", ps="ps-p", entry=f"e-{n}")["signal_id"] for n in range(3)]
    for signal_id in ids[:2]:
        rcli.ok("claim", signal_id, "--agent", "ps-rate-b")  # another process: the window is the database's

    with Blackboard(rcli.db_url, agents_dir=rcli.agents_dir) as bb, pytest.raises(Refused) as refused:
        bb.claim(ids[2], agent="ps-rate-a")

    assert f"waiting: rate limit {KEY}" in str(refused.value)
    assert rcli.ok("show", ids[2])["status"] == "POSTED"
    server = UiServer(rcli).wait_ready()
    try:
        code, _, body = server.get("/metrics")
    finally:
        server.stop()
    assert code == 200
    assert samples(body.decode())[("blackboard_rate_limited", (("key", KEY),))] == 1


def test_a_window_refills_with_time_and_a_limit_never_used_has_room(make_cli, tmp_path):
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "ps-slow.md").write_text(limited("ps-slow", rpm=6))  # a request comes back every 10 s
    cli = make_cli(f"sqlite:///{tmp_path / 'b.db'}", tmp_path, agents)
    ids = [cli.post(type="ANALYSIS", ps="ps-t", entry=f"e-{n}")["signal_id"] for n in range(7)]

    with Blackboard(cli.db_url, agents_dir=cli.agents_dir) as bb:
        for signal_id in ids[:6]:  # a minute's worth at once: a window never used is full
            bb.claim(signal_id, agent="ps-slow")
        with pytest.raises(Refused):
            bb.claim(ids[6], agent="ps-slow")
    wait_until(
        lambda: cli("claim", ids[6], "--agent", "ps-slow").returncode == 0,
        timeout=60,
        what="the window to refill",
        interval=1.0,
    )

    assert cli.ok("show", ids[6])["status"] == "CLAIMED"


def test_a_bad_rate_limit_in_an_agent_file_is_reported_as_a_broken_file(make_cli, tmp_path):
    agents = tmp_path / "agents"
    agents.mkdir()
    for name, value in {
        "ps-zero": f"{{key: {KEY}, requests_per_minute: 0}}",
        "ps-none": f"{{key: {KEY}}}",
        "ps-nokey": "{requests_per_minute: 5}",
        "ps-typo": f"{{key: {KEY}, rpm: 5}}",
    }.items():
        (agents / f"{name}.md").write_text(
            f"---\nname: {name}\ncapabilities: {{RESEARCH: 0.9}}\ncommand: echo done\nrate_limit: {value}\n---\nx\n"
        )
    cli = make_cli(f"sqlite:///{tmp_path / 'b.db'}", tmp_path, agents)

    listed = cli("agents").expect(0).stdout

    assert "rate_limit.requests_per_minute: must be a whole number of requests, 1 or more, got 0" in listed
    assert "rate_limit: give requests_per_minute or tokens_per_minute" in listed
    assert "rate_limit.key: is required" in listed
    assert "rate_limit.rpm: is not a key of rate_limit" in listed
    assert cli("worker", "--agent", "ps-zero", "--once").returncode != 0


def test_a_rate_limit_configured_for_a_model_holds_the_agents_that_call_it(make_cli, tmp_path):
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "ps-writer.md").write_text(
        "---\nname: ps-writer\ncapabilities: {SYNTHESIS: 0.9}\nrunner: anthropic\nmodel: sonnet\n---\nYou write.\n"
    )
    cli = make_cli(f"sqlite:///{tmp_path / 'b.db'}", tmp_path, agents)
    configured = {
        "BLACKBOARD_RATE_LIMITS": '{"claude-sonnet-5-5": {"key": "sonnet-api", "requests_per_minute": 1}}'
    }
    ids = [cli.post(type="SYNTHESIS", ps="ps-c", entry=f"e-{n}")["signal_id"] for n in range(2)]

    cli("--json", "claim", ids[0], "--agent", "ps-writer", env=configured).expect(0)
    refused = cli("claim", ids[1], "--agent", "ps-writer", env=configured).expect(3)

    assert "waiting: rate limit sonnet-api" in refused.stderr
    assert cli("claim", ids[1], "--agent", "ps-writer").returncode == 0  # no limit configured: claimed


@pytest.mark.parametrize(
    "value",
    [
        '{"m": {"key": "k"}}',
        '{"m": {"key": "k", "requests_per_minute": 0}}',
        '{"m": {"requests_per_minute": 5}}',
        '{"m": {"key": "k", "rpm": 5}}',
        "[1, 2]",
    ],
)
def test_a_bad_rate_limits_setting_exits_2_naming_it(make_cli, tmp_path, value):
    agents = tmp_path / "agents"
    agents.mkdir()
    cli = make_cli(f"sqlite:///{tmp_path / 'b.db'}", tmp_path, agents)

    refused = cli("status", env={"BLACKBOARD_RATE_LIMITS": value}).expect(2)

    assert "BLACKBOARD_RATE_LIMITS" in refused.stderr and "requests_per_minute" in refused.stderr
