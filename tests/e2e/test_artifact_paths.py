"""One artifact rule on every completion path (docs/agents.md, "The handler command, and putting an LLM behind
it"): the path a completion names leads, symbolic links followed, inside the caller's working folder or the
artifacts folder (BLACKBOARD_ARTIFACTS_DIR), else the completion is refused naming the argument and the rule
(exit 2) and nothing is written. A handler returning such a path fails its signal
(tests/e2e/test_cli_handler_safety.py); here `complete --artifact` by hand, `Blackboard.complete` and MCP
`blackboard_complete`, each on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from blackboard import Blackboard, InvalidInput
from tests.e2e.conftest import Cli, database_url
from tests.e2e.mcp_client import served

AGENT = "ps-researcher"
TOKEN = "tok-artifact-1"
OUTSIDE = ["../../../etc/passwd", "/etc/passwd", "out/../../secret.md", "escape/passwd"]
INSIDE = ["notes.md", "out/../notes.md", "artifacts/report.md"]


@pytest.fixture(params=["sqlite", "postgresql"])
def acli(request, make_cli, tmp_path_factory, tmp_path) -> Iterator[Cli]:
    """The CLI in a working folder of its own holding `escape`, a link that leads out of it."""
    (tmp_path / "escape").symlink_to("/etc")
    made = make_cli(database_url(request, tmp_path_factory, "artifacts"), tmp_path)
    yield made


def claimed(cli: Cli) -> str:
    signal_id = cli.post("--blackboard", f"art-{uuid.uuid4().hex[:8]}")["signal_id"]
    cli.ok("claim", signal_id, "--agent", AGENT, "--token", TOKEN)
    return signal_id


@pytest.mark.parametrize("path", OUTSIDE)
def test_complete_by_hand_with_an_artifact_outside_the_working_folder_is_exit_2_and_writes_nothing(
    acli, path
):
    signal_id = claimed(acli)
    before = acli.ok("events", "--since", "0")

    refused = acli("complete", signal_id, "--agent", AGENT, "--token", TOKEN, "--artifact", path).expect(2)

    assert refused.stderr.startswith(f"blackboard: --artifact: {path!r} leads outside the working folder "), (
        refused.stderr
    )
    assert "symbolic links followed" in refused.stderr and "BLACKBOARD_ARTIFACTS_DIR" in refused.stderr
    assert acli.ok("events", "--since", "0") == before
    assert acli.ok("show", signal_id)["status"] == "CLAIMED"


def test_complete_by_hand_with_an_artifact_inside_either_folder_completes(acli, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("artifacts-elsewhere")
    for path in [*INSIDE, str(acli.cwd / "notes.md")]:
        signal_id = claimed(acli)
        done = acli.ok("complete", signal_id, "--agent", AGENT, "--token", TOKEN, "--artifact", path)
        assert (done["status"], done["result"]["artifact_path"]) == ("COMPLETED", path)
    signal_id = claimed(acli)  # the artifacts folder, wherever it is
    path = str(elsewhere / "report.md")
    done = acli.ok(
        "complete",
        signal_id,
        "--agent",
        AGENT,
        "--token",
        TOKEN,
        "--artifact",
        path,
        env={"BLACKBOARD_ARTIFACTS_DIR": str(elsewhere)},
    )
    assert done["result"]["artifact_path"] == path


def test_the_python_api_refuses_an_artifact_outside_the_working_folder(acli, monkeypatch):
    monkeypatch.chdir(acli.cwd)
    signal_id = claimed(acli)
    before = acli.ok("events", "--since", "0")
    with Blackboard(acli.db_url, agents_dir=acli.agents_dir) as board:
        for path in OUTSIDE:
            with pytest.raises(InvalidInput) as refused:
                board.complete(signal_id, agent=AGENT, token=TOKEN, artifact_path=path)
            assert str(refused.value).startswith(f"artifact_path: {path!r} leads outside the working folder")
        assert acli.ok("events", "--since", "0") == before
        done = board.complete(signal_id, agent=AGENT, token=TOKEN, artifact_path="notes.md")
    assert done.status == "COMPLETED"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_an_mcp_server_refuses_an_artifact_outside_its_working_folder(acli):
    signal_id = acli.post("--blackboard", f"art-{uuid.uuid4().hex[:8]}")["signal_id"]
    async with served(acli, "--agent", AGENT) as server:
        await server.call("blackboard_claim", signal_id=signal_id)
        before = acli.ok("events", "--since", "0")
        for path in OUTSIDE:
            said, details = await server.refused(
                "blackboard_complete", signal_id=signal_id, artifact_path=path
            )
            assert said.startswith(f"artifact_path: {path!r} leads outside the working folder"), said
            assert (details["family"], details["exit_code"]) == ("invalid_input", 2)
        assert acli.ok("events", "--since", "0") == before
        done = await server.call("blackboard_complete", signal_id=signal_id, artifact_path="notes.md")
    assert done["status"] == "COMPLETED" and Path(acli.cwd / "escape").is_symlink()


LONE = "notes-\udc80.md"  # a lone surrogate: what Python makes of bytes that are not UTF-8
UNICODE_RULE = "must be valid Unicode text (a lone surrogate cannot be stored)"


def test_an_artifact_path_that_is_not_valid_unicode_is_refused_naming_the_field_on_every_path(
    acli, monkeypatch
):
    """Before: `artifact_path: Input should be a valid string, unable to parse raw data as a unicode string
    (got 'notes-\\udc80.md')`, pydantic's words, from the Python API (as from a worker's handler:
    tests/e2e/test_cli_handler_safety.py). The command line refuses the bytes themselves; an MCP server refuses
    the JSON-RPC line that holds one (a parse error)."""
    signal_id = claimed(acli)
    before = acli.ok("events", "--since", "0")

    refused = acli("complete", signal_id, "--agent", AGENT, "--token", TOKEN, "--artifact", LONE).expect(2)
    assert (
        refused.stderr == "blackboard: --artifact: must be valid UTF-8 text (it holds bytes that are not)\n"
    )
    monkeypatch.chdir(acli.cwd)
    with Blackboard(acli.db_url, agents_dir=acli.agents_dir) as board:
        with pytest.raises(InvalidInput) as raised:
            board.complete(signal_id, agent=AGENT, token=TOKEN, artifact_path=LONE)
    assert str(raised.value) == f"artifact_path: {UNICODE_RULE}"
    assert acli.ok("events", "--since", "0") == before
    assert acli.ok("show", signal_id)["status"] == "CLAIMED"
