"""Rate limits (docs/control.md, "Rate limits") through the real CLI on SQLite and PostgreSQL: two agents naming
one key share its window across boards; a signal the window holds stays POSTED and `claim`, `show`, `next` and
`status` say `waiting: rate limit K`; the window refills with time; bad `rate_limit` values in an agent file are
reported as a broken file."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Cli, cli_with_agents

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
