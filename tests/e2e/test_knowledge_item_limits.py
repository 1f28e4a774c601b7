"""A completion whose knowledge item no entry could hold (over 1 MiB as an entry's value, or holding NUL or a
lone surrogate) is refused whole, the same way on every path, on SQLite and on PostgreSQL: the CLI (exit 2),
the Python API (InvalidInput), an agent's MCP server (a tool error), and a worker's command handler,
entrypoint and runner (the signal FAILED, `handler output refused: knowledge_items[i]: ...`). Nothing is
written by a refused completion: before, it was COMPLETED and its item never became an entry (a traceback
in the log of the process that tried to land it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from blackboard import Blackboard, InvalidInput
from tests.e2e.conftest import Cli, cli_with_agents
from tests.e2e.mcp_client import served
from tests.runners.hostile import claude_script, hostile_env, init_line, result_line

BIG = "x" * 1_300_000  # 1,300,002 bytes as an entry's value (JSON, with its quotes)
TOO_BIG = (
    "must be at most 1048576 bytes as an entry's value (1 MiB), got 1300002: write it to a file and return "
    "its artifact_path"
)
NUL = "the string at the top holds U+0000 (NUL), which cannot be stored"

AGENTS = {
    "ps-researcher.md": "---\nname: ps-researcher\ncapabilities: {RESEARCH: 0.9}\n---\nResearches.\n",
    "big-command.md": (
        "---\nname: big-command\ncapabilities: {BIGCOMMAND: 1}\ncommand: python3 big_command.py\n---\n"
    ),
    "big_command.py": (
        f"import json\nprint(json.dumps({{'knowledge_items': ['fine', 'x' * {len(BIG)}]}}))\n"
    ),
    "nul-entry.md": "---\nname: nul-entry\ncapabilities: {NULENTRY: 1}\nentrypoint: nulhandlers.nul:handle\n---\n",
    "reviewer.md": "---\nname: reviewer\ndescription: Reviews.\ntimeout: 60\n---\nReview.\n",
}
NUL_HANDLER = "def handle(document):\n    return {'knowledge_items': ['fine', 'a\\x00b']}\n"


@pytest.fixture(params=["sqlite", "postgresql"])
def kcli(request, make_cli, tmp_path_factory, tmp_path) -> Iterator[Cli]:
    made = cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "knowledge-limits", AGENTS)
    (made.agents_dir / "nulhandlers").mkdir()
    (made.agents_dir / "nulhandlers" / "nul.py").write_text(NUL_HANDLER, encoding="utf-8")
    yield made
    made.close()


def claimed(cli: Cli) -> str:
    """A signal claimed by ps-researcher."""
    signal_id = cli.post()["signal_id"]
    cli.ok("claim", signal_id, "--agent", "ps-researcher")
    return signal_id


def log_size(cli: Cli) -> int:
    return len(cli.ok("events", "--since", "0", "--limit", "100000"))


def knowledge_entries(cli: Cli, signal_id: str) -> list[Any]:
    return [e for e in cli.ok("entries", "--blackboard", "ps-1") if e["key"].startswith(signal_id)]


def test_the_cli_refuses_an_item_no_entry_could_hold_naming_it_and_writes_nothing(kcli):
    """Run from a shell, no argument can be that long (the kernel's limit is 128 KiB an argument) nor hold
    NUL, and one that is not UTF-8 is refused by the parser; the tests' CLI runs `main` with its arguments
    in a process of its own, as a program that calls it in its own process does, and then the rule holds."""
    signal_id = claimed(kcli)
    before = log_size(kcli)

    refused = kcli(
        "complete", signal_id, "--agent", "ps-researcher", "--knowledge", "fine", "--knowledge", BIG
    )

    assert refused.expect(2).stderr == f"blackboard: knowledge_items[1]: {TOO_BIG}\n"
    assert log_size(kcli) == before and kcli.ok("show", signal_id)["status"] == "CLAIMED"


@pytest.mark.parametrize("item, rule", [(BIG, TOO_BIG), ("a\x00b", NUL)], ids=["over-1-MiB", "NUL"])
def test_the_python_api_refuses_an_item_no_entry_could_hold_naming_it_and_writes_nothing(kcli, item, rule):
    signal_id = claimed(kcli)
    before = log_size(kcli)

    with Blackboard(kcli.db_url, agents_dir=kcli.agents_dir) as board:
        with pytest.raises(InvalidInput) as refused:
            board.complete(signal_id, agent="ps-researcher", knowledge_items=["fine", item])

    assert str(refused.value) == f"knowledge_items[1]: {rule}"
    assert log_size(kcli) == before and kcli.ok("show", signal_id)["status"] == "CLAIMED"


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_agent_s_mcp_server_refuses_an_item_no_entry_could_hold_as_a_tool_error(kcli, anyio_backend):
    signal_id = kcli.post()["signal_id"]
    async with served(kcli, "--agent", "ps-researcher") as server:
        await server.call("blackboard_claim", signal_id=signal_id)
        before = log_size(kcli)
        text, details = await server.refused(
            "blackboard_complete", signal_id=signal_id, knowledge_items=["fine", BIG]
        )
        assert (text, details["exit_code"]) == (f"knowledge_items[1]: {TOO_BIG}", 2)
        assert log_size(kcli) == before
        await server.call(
            "blackboard_complete", signal_id=signal_id, knowledge_items=["fine"]
        )  # still serving
    assert [e["value"] for e in knowledge_entries(kcli, signal_id)] == ["fine"]


def worked(cli: Cli, capability: str, agent: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    signal_id = cli.post("--capability", capability)["signal_id"]
    cli("worker", "--agent", agent, "--once", env=env).expect(0)
    return cli.ok("show", signal_id)


def test_a_command_handler_s_output_with_an_item_over_1_mib_fails_the_signal_and_lands_nothing(kcli):
    done = worked(kcli, "BIGCOMMAND", "big-command")

    assert (done["status"], done["result"]["error"]) == (
        "FAILED",
        f"handler output refused: knowledge_items[1]: {TOO_BIG}",
    )
    assert knowledge_entries(kcli, done["signal_id"]) == []


def test_an_entrypoint_s_result_with_an_item_holding_nul_fails_the_signal_and_lands_nothing(kcli):
    done = worked(kcli, "NULENTRY", "nul-entry")

    assert (done["status"], done["result"]["error"]) == (
        "FAILED",
        f"handler output refused: knowledge_items[1]: {NUL}",
    )
    assert knowledge_entries(kcli, done["signal_id"]) == []


def test_a_runner_s_answer_with_an_item_over_1_mib_fails_the_signal_its_answer_kept_in_the_transcript(
    kcli, tmp_path
):
    answer = json.dumps({"knowledge_items": ["fine", BIG]})
    claude = claude_script(tmp_path, f"out({init_line()!r})\nout({result_line(answer)!r})\n")

    done = worked(kcli, "reviewer", "reviewer", hostile_env(claude))

    assert (done["status"], done["result"]["error"]) == (
        "FAILED",
        f"handler output refused: knowledge_items[1]: {TOO_BIG}",
    )
    assert knowledge_entries(kcli, done["signal_id"]) == []
    assert done["usage"]["turns"] == 2  # the run's usage is kept, its transcript linked
    transcript = kcli.ok("show", done["signal_id"], "--transcript")
    assert transcript[-1]["type"] == "result" and transcript[-1]["result"] == answer
