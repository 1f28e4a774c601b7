"""`post --capability auto` through the real CLI, over a folder of agent files shaped like the public Claude
Code subagent collections (tests/fixtures/everyday-agents: no `capabilities`; a description, some with
`<example>` blocks and an unquoted `: ` as Claude Code accepts them; tools, model).

Each everyday request must rank its specialist first in `match`, above the threshold, and that specialist
must be able to claim it; a request no agent is about leaves everyone below the threshold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Cli

pytestmark = pytest.mark.one_process  # its tests share a costly module fixture (tests/scheduling.py)

FOLDER = Path(__file__).parent.parent / "fixtures" / "everyday-agents"
# the claims come after every post and match has run, which can take more than the default 30 s on a busy machine
SLOW = {"BLACKBOARD_POST_TIMEOUT": "3600"}

# (topic, prompt, the specialist people would pick)
EVERYDAY = [
    (
        "Review PR 42",
        "Please review the changes in pull request 42 for code quality before we merge.",
        "code-reviewer",
    ),
    ("Login crashes", "The login endpoint crashes with a TypeError; here is the stack trace.", "debugger"),
    (
        "Slow orders query",
        "The orders dashboard takes 9 seconds; the SQL query needs an index or a rewrite.",
        "database-optimizer",
    ),
    (
        "Document the billing service",
        "Write a README and a short user guide for the billing service.",
        "technical-writer",
    ),
    (
        "Tests for payments",
        "Add unit and integration tests for the payment module; coverage is at 40%.",
        "test-automator",
    ),
    (
        "Check the auth flow",
        "Check our OAuth2 login and JWT handling for vulnerabilities.",
        "security-auditor",
    ),
    (
        "Accessible signup",
        "Make the signup form usable with a screen reader and keyboard navigation.",
        "accessibility-tester",
    ),
    (
        "Invoices API",
        "Design the REST API for invoices: endpoints, pagination and versioning.",
        "api-designer",
    ),
    (
        "Outage",
        "Production is down: 500 errors since the last deploy, check the logs.",
        "devops-troubleshooter",
    ),
    (
        "Churn model",
        "Train a machine learning model to predict churn and serve it in production.",
        "ml-engineer",
    ),
]
NONSENSE = [
    ("Banana bread", "A recipe with walnuts and a crunchy top."),
    ("Weekend trip", "Plan the weekend trip to the mountains and book a hotel."),
]


class Board:
    """Every request posted with `--capability auto`, then matched and claimed by its specialist, all at once."""

    def __init__(self, cli: Cli) -> None:
        def post(n: int, topic: str, prompt: str) -> tuple[str, ...]:
            return (
                "--json",
                "post",
                "--type",
                "RESEARCH",
                "--ps-id",
                "ps-auto",
                "--entry-id",
                f"e-{n}",
                "--topic",
                topic,
                "--prompt",
                prompt,
                "--capability",
                "auto",
            )

        asked = [(topic, prompt) for topic, prompt, _ in EVERYDAY] + NONSENSE
        posted = cli.many({str(n): (post(n, t, p), SLOW) for n, (t, p) in enumerate(asked)})
        self.posted = [posted[str(n)].result().expect(0).json() for n in range(len(asked))]
        ids = [s["signal_id"] for s in self.posted]
        matched = cli.many({i: (("--json", "match", i), SLOW) for i in ids})
        self.rankings: list[list[dict[str, Any]]] = [matched[i].result().expect(0).json() for i in ids]
        runner_up = self.rankings[0][1]["agent"]
        self.runner_up = (
            runner_up,
            cli("claim", ids[0], "--agent", runner_up, env=SLOW),
        )  # before the specialist
        claims = cli.many(
            {
                i: (("--json", "claim", i, "--agent", who), SLOW)
                for i, (_, _, who) in zip(ids[: len(EVERYDAY)], EVERYDAY, strict=True)
            }
        )
        self.claims = [claims[i].result() for i in ids[: len(EVERYDAY)]]


@pytest.fixture(scope="module")
def board(make_cli, tmp_path_factory) -> Board:
    where = tmp_path_factory.mktemp("auto")
    return Board(make_cli(f"sqlite:///{where / 'blackboard.db'}", where, agents=FOLDER))


def test_the_folder_holds_at_least_twenty_agents_as_public_collections_write_them():
    texts = [f.read_text(encoding="utf-8") for f in sorted(FOLDER.glob("*.md"))]
    assert len(texts) >= 20
    assert all("capabilities:" not in t and "\ndescription: " in t for t in texts)
    # as Claude Code registers them: <example> blocks, unquoted `: ` and escaped newlines in the description
    assert sum("<example>" in t and "\ndescription: Use this agent when" in t for t in texts) >= 1
    assert sum("\\n\\n<example>" in t for t in texts) >= 2


@pytest.mark.parametrize("n", range(len(EVERYDAY)), ids=[who for _, _, who in EVERYDAY])
def test_the_specialist_ranks_first_above_the_threshold_and_claims_it(board, n):
    topic, _, specialist = EVERYDAY[n]
    ranking = board.rankings[n]
    first, second = ranking[0], ranking[1]
    assert first["agent"] == specialist, f"{topic!r}: {ranking[:3]}"
    assert first["passes"] and first["score"] > first["threshold"] == 0.8
    assert 0 <= second["score"] < first["score"] <= 1
    assert board.posted[n]["target_capabilities"] == ["auto"]  # the signal keeps what was posted
    # none of these agents has a handler: the post says the fitting ones (by text) cannot be run by a worker
    assert f"({specialist}" in " ".join(board.posted[n]["warnings"])
    claimed = board.claims[n].expect(0).json()
    assert claimed["claimed_by"] == specialist


@pytest.mark.parametrize("n", range(len(NONSENSE)), ids=[topic for topic, _ in NONSENSE])
def test_a_request_no_agent_is_about_leaves_everyone_below_the_threshold(board, n):
    ranking = board.rankings[len(EVERYDAY) + n]
    assert not any(r["passes"] for r in ranking)
    assert max(r["score"] for r in ranking) < 0.5
    assert board.posted[len(EVERYDAY) + n]["status"] == "UNCLAIMED"  # said when posted: nobody fits


def test_an_agent_below_the_threshold_for_the_request_cannot_claim_it(board):
    agent, refused = board.runner_up
    assert agent != "code-reviewer"
    refused.expect(3)
    assert "threshold" in refused.stderr
