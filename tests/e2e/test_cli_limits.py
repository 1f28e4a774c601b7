"""Limits (docs/control.md) through the real CLI on SQLite and PostgreSQL: a concurrency key shared by two
agents, a board's budget that makes its signals wait (`status` and `next` say why) until it is raised, bad
budgets and bad agent-file values refused."""

from __future__ import annotations

import pytest

from blackboard.application.commands import ClaimSignal, CompleteSignal
from blackboard.domain.signals import SignalUsage
from blackboard.infrastructure.composition import settings
from blackboard.infrastructure.composition.container import Container
from tests.e2e.conftest import QUICK_AGENT, Cli, cli_with_agents


def keyed(name: str) -> str:
    return (
        f"---\nname: {name}\ncapabilities: {{ANALYSIS: 0.9}}\ncommand: echo done\n"
        "concurrency: {key: model-api, max: 1}\n---\nUnder one API's quota.\n"
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def lcli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    agents = {"ps-quick.md": QUICK_AGENT, "ps-key-a.md": keyed("ps-key-a"), "ps-key-b.md": keyed("ps-key-b")}
    return cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "limits", agents)


def test_two_agents_naming_one_key_of_max_1_claim_one_signal_at_a_time_across_boards(lcli):
    one = lcli.post(type="ANALYSIS", ps="ps-k1", entry="e-1")["signal_id"]
    two = lcli.post(type="ANALYSIS", ps="ps-k2", entry="e-2")["signal_id"]

    lcli.ok("claim", one, "--agent", "ps-key-a")
    refused = lcli("claim", two, "--agent", "ps-key-b").expect(3)
    assert "concurrency key model-api" in refused.stderr
    assert lcli.ok("show", two)["status"] == "POSTED"

    lcli.ok("complete", one, "--agent", "ps-key-a")
    assert lcli.ok("claim", two, "--agent", "ps-key-b")["status"] == "CLAIMED"


def test_a_board_at_its_budget_waits_saying_why_until_the_budget_is_raised(lcli):
    waiting = lcli.post(ps="ps-b", entry="e-1")["signal_id"]

    paused = lcli.ok("budget", "ps-b", "--usd", "0", "--by", "alice", "--reason", "hold everything")
    assert paused["reached"].startswith("budget reached") and paused["usd"] == 0.0
    refused = lcli("claim", waiting, "--agent", "ps-quick").expect(3)
    assert "budget reached" in refused.stderr and "blackboard budget" in refused.stderr
    (board,) = lcli.ok("status", "--blackboard", "ps-b")
    assert board["budget"]["reached"].startswith("budget reached")
    assert "wait: budget reached" in lcli("status").expect(0).stdout
    planned = lcli.ok("next", "--blackboard", "ps-b")
    assert planned["next"] == [] and [m["signal_id"] for m in planned["waiting_for_a_budget"]] == [waiting]
    assert "waiting for a budget on ps-b" in lcli("next").expect(0).stdout
    lcli.ok("worker", "--agent", "ps-quick", "--once", "--board", "ps-b")
    assert lcli.ok("show", waiting)["status"] == "POSTED"

    raised = lcli.ok("budget", "ps-b", "--usd", "2")
    assert raised["reached"] is None
    lcli.ok("worker", "--agent", "ps-quick", "--once", "--board", "ps-b")
    assert lcli.ok("show", waiting)["status"] == "COMPLETED"
    budget_events = [e for e in lcli.ok("events", "--all") if e["event_type"] == "BoardBudgetSet"]
    assert [(e["data"]["usd"], e["data"]["set_by"], e["metadata"]["actor"]) for e in budget_events] == [
        (0.0, "alice", "alice"),
        (2.0, "ps-skill", "ps-skill"),
    ]


def record_a_run(cli: Cli, board: str, cost: float, tokens: int) -> None:
    """What a runner's worker does: claim, then complete with the run's usage (in this process, on the
    same database, as the worker's own service would)."""
    signal_id = cli.post(ps=board, entry="e-99")["signal_id"]
    service = Container(config=settings.load({}, env=cli.environment())).service()
    service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id="ps-quick"))
    usage = SignalUsage(runner="anthropic", input_tokens=tokens, cost_usd=cost)
    service.complete_signal(CompleteSignal(signal_id=signal_id, agent_id="ps-quick", usage=usage))


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("--usd", "0.5"), "usd"),
        (("--tokens", "100"), "tokens"),
        (("--usd", "-1"), "--usd"),
        (("--usd", "inf"), "--usd"),
        (("--tokens", "1.5"), "--tokens"),
    ],
)
def test_a_budget_below_what_was_spent_or_not_a_finite_amount_exits_2_and_writes_nothing(lcli, args, field):
    record_a_run(lcli, "ps-s", cost=0.75, tokens=300)
    before = lcli.ok("events", "--all")

    refused = lcli("budget", "ps-s", *args).expect(2)

    assert field in refused.stderr
    if not field.startswith("--"):
        assert "already spent" in refused.stderr
    assert lcli.ok("events", "--all") == before
    assert lcli.ok("budget", "ps-s")["spent_usd"] == 0.75


@pytest.mark.parametrize(
    ("value", "field"),
    [("{key: model-api, max: 0}", "concurrency.max"), ('{key: "", max: 2}', "concurrency.key")],
)
def test_a_bad_concurrency_in_an_agent_file_is_reported_as_a_broken_file(make_cli, tmp_path, value, field):
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "ps-bad.md").write_text(
        f"---\nname: ps-bad\ncapabilities: {{RESEARCH: 0.9}}\ncommand: echo done\nconcurrency: {value}\n---\nx\n"
    )
    cli = make_cli(f"sqlite:///{tmp_path / 'b.db'}", tmp_path, agents)

    listed = cli("agents").expect(0)

    assert field in listed.stdout
    assert cli("worker", "--agent", "ps-bad", "--once").returncode != 0


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("{usd: 0}", "estimate.usd: must be a positive number of US dollars, got 0"),
        ("{tokens: 1.5}", "estimate.tokens: must be a whole number of tokens, 1 or more, got 1.5"),
        ("{tokens: '100'}", "estimate.tokens: must be a whole number of tokens, 1 or more, got '100'"),
        ("{}", "estimate: give usd or tokens (or both), such as {usd: 0.5, tokens: 100000}"),
        ("{usd: 1, dollars: 2}", "estimate.dollars: is not a key of estimate (use usd and tokens)"),
        ("lots", "estimate: must be a mapping such as {usd: 0.5, tokens: 100000}, got 'lots'"),
    ],
)
def test_a_bad_estimate_in_an_agent_file_is_reported_naming_the_field_and_the_rule(
    make_cli, tmp_path, value, said
):
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "ps-bad.md").write_text(f"---\nname: ps-bad\nrunner: anthropic\nestimate: {value}\n---\nx\n")
    cli = make_cli(f"sqlite:///{tmp_path / 'b.db'}", tmp_path, agents)

    listed = cli("agents").expect(0)

    assert said in listed.stdout
    assert cli("worker", "--agent", "ps-bad", "--once").returncode != 0


def test_the_python_api_sets_and_shows_a_budget_as_the_cli_does(lcli):
    from blackboard import Blackboard, InvalidInput

    lcli.post(ps="ps-api", entry="e-1")
    with Blackboard(lcli.db_url, agents_dir=lcli.agents_dir) as bb:
        set_here = bb.budget("ps-api", usd=3, tokens=1000, by="alice", reason="api")
        with pytest.raises(InvalidInput, match="usd"):
            bb.budget("ps-api", usd=float("nan"))
        shown = bb.budget("ps-api")

    assert set_here == shown
    assert shown.model_dump(mode="json") == lcli.ok("budget", "ps-api")
    assert (shown.usd, shown.tokens, shown.reached) == (3.0, 1000, None)


def test_a_run_does_not_raise_its_own_board_s_budget(lcli):
    """Inside a handler's or runner's run (BLACKBOARD_AGENT set, even alone) `budget` with a limit is refused,
    exit 3, writing nothing; showing the budget is allowed."""
    before = lcli.ok("events", "--all")

    refused = lcli("budget", "ps-run", "--usd", "1000000", env={"BLACKBOARD_AGENT": "ps-writer"}).expect(3)

    assert "agent ps-writer's run may not set the budget of ps-run: only a person sets a board's limits" in (
        refused.stderr
    )
    assert lcli.ok("events", "--all") == before
    lcli("budget", "ps-run", env={"BLACKBOARD_AGENT": "ps-writer"}).expect(0)
