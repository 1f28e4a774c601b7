"""A new user's first hour (issue 22, "The new user's defects"), each through the real `blackboard` executable
and real worker processes, from a project folder as the README has one: `agents/` beside the working folder
and the default, relative, SQLite database.

- a handler's own `blackboard write` lands on the worker's board (its database handed over as an absolute
  URL), not in a second database in the agent's folder;
- artifacts land outside the agents folder by default, and no file under an artifacts folder is read as an
  agent;
- a handler's stderr reaches the worker's log when it succeeds too;
- `post -q` says on stderr when the signal ended UNCLAIMED;
- a name Claude Code accepts, dots included, loads and works wherever a name goes;
- `--agents-dir` and BLACKBOARD_AGENTS_DIR take globs;
- `mcp --print-config` prints a client configuration that starts the server from anywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.e2e.conftest import BLACKBOARD, Cli
from tests.e2e.mcp_client import served

ROOT = Path(__file__).resolve().parents[2]
RELATIVE_DB = "sqlite:///.blackboard/blackboard.db"  # the default, written out: as a new user has it


def agent_file(name: str, command: str, capabilities: str = "{RESEARCH: 0.95}", extra: str = "") -> str:
    head = f"name: {name}\ndescription: {name}\ncapabilities: {capabilities}\ncommand: {command}\n{extra}"
    return f"---\n{head}---\n{name}\n"


@pytest.fixture
def project(tmp_path) -> Path:
    folder = tmp_path / "project"
    (folder / "agents").mkdir(parents=True)
    return folder


@pytest.fixture
def pcli(make_cli, project) -> Cli:
    """The CLI run from the project folder, on the default relative database and `agents` relative to it."""
    return make_cli(RELATIVE_DB, project, Path("agents"))


def post(cli: Cli, *args: str, topic: str = "a topic") -> str:
    return cli.ok(
        "post", "--type", "RESEARCH", "--ps-id", "ps-1", "--entry-id", "e-1", "--topic", topic, *args
    )["signal_id"]


# -- a: handlers reach the worker's board ------------------------------------------------------------
def test_a_handler_s_own_blackboard_write_lands_on_the_worker_s_board(pcli, project):
    write = (
        f"{BLACKBOARD} write found/$BLACKBOARD_SIGNAL_ID --blackboard ps-1 --author writer "
        "--value '\"from the handler\"' > /dev/null && echo wrote"
    )
    (project / "agents" / "writer.md").write_text(agent_file("writer", json.dumps(write)), encoding="utf-8")
    sig = post(pcli)

    pcli("worker", "--agent", "writer", "--once").expect(0)

    assert pcli.ok("show", sig)["status"] == "COMPLETED"
    assert pcli.ok("read", f"found/{sig}", "--blackboard", "ps-1")["value"] == "from the handler"
    assert not (project / "agents" / ".blackboard").exists(), "a second database in the agent's folder"


def test_handlers_get_the_worker_s_database_agents_and_artifacts_folders_as_absolute_addresses(pcli, project):
    dump = "env | grep '^BLACKBOARD_' > env.txt"
    entry = "handlers.where:handle"
    (project / "agents" / "dumper.md").write_text(agent_file("dumper", json.dumps(dump)), encoding="utf-8")
    (project / "agents" / "inproc.md").write_text(
        f"---\nname: inproc\ncapabilities: {{REVIEW: 0.95}}\nentrypoint: {entry}\n---\nx\n", encoding="utf-8"
    )
    (project / "agents" / "handlers").mkdir()
    (project / "agents" / "handlers" / "where.py").write_text(
        "import os\n\ndef handle(document):\n"
        "    return {'knowledge_items': [os.environ[k] for k in "
        "('BLACKBOARD_DB', 'BLACKBOARD_AGENTS_DIR', 'BLACKBOARD_ARTIFACTS_DIR')]}\n",
        encoding="utf-8",
    )
    post(pcli)
    review = pcli.ok("post", "--type", "REVIEW", "--ps-id", "ps-1", "--entry-id", "e-2", "--topic", "t")

    pcli("worker", "--agent", "dumper", "--once").expect(0)
    pcli("worker", "--agent", "inproc", "--once").expect(0)

    expected = {
        "BLACKBOARD_DB": f"sqlite:///{project / '.blackboard' / 'blackboard.db'}",
        "BLACKBOARD_AGENTS_DIR": str(project / "agents"),
        "BLACKBOARD_ARTIFACTS_DIR": str(project / "artifacts"),
    }
    lines = (project / "agents" / "env.txt").read_text(encoding="utf-8").splitlines()
    given = dict(line.split("=", 1) for line in lines)
    assert {k: given.get(k) for k in expected} == expected  # the command's environment
    in_process = pcli.ok("show", review["signal_id"])["result"]["knowledge_items"]
    assert in_process == list(expected.values())  # and the entrypoint's process


# -- c: artifacts outside the agents folder, never read as agents -----------------------------------
def test_the_example_handlers_write_outside_the_agents_folder_and_no_scan_reads_their_artifacts(
    pcli, project
):
    shutil.rmtree(project / "agents")
    shutil.copytree(
        ROOT / "agents", project / "agents", ignore=shutil.ignore_patterns("__pycache__", "artifacts")
    )
    sig = post(pcli, topic="caching for the read model")

    worked = pcli("worker", "--agent", "ps-researcher", "--once").expect(0)
    listed = pcli("agents").expect(0).stdout

    artifact = Path(pcli.ok("show", sig)["result"]["artifact_path"])
    assert artifact.parent == project / "artifacts" and artifact.is_file()
    assert not list((project / "agents").rglob(f"{sig}*")), "an artifact inside the agents folder"
    assert "left out" not in listed and "left out" not in worked.stderr, listed


def test_an_artifacts_folder_inside_the_agents_folder_is_never_read_as_agents(pcli, project):
    (project / "agents" / "writer.md").write_text(
        agent_file("writer", json.dumps("echo hi")), encoding="utf-8"
    )
    out = project / "agents" / "out"
    (out / "deep").mkdir(parents=True)
    (out / "sig-0000000a-notes.md").write_text("# findings\nno frontmatter here\n", encoding="utf-8")
    (out / "deep" / "more.md").write_text("---\nname: [broken\n---\n", encoding="utf-8")

    listed = pcli.ok("agents", env={"BLACKBOARD_ARTIFACTS_DIR": "agents/out"})

    assert [a["name"] for a in listed["agents"]] == ["writer"]
    assert listed["left_out"] == [] and listed["files"] == 1


# -- d: stderr reaches the log ------------------------------------------------------------------------
def test_a_handler_s_stderr_reaches_the_worker_s_log_when_it_succeeds(pcli, project):
    command = "echo 'progress: 3 sources read' >&2; echo done"
    (project / "agents" / "chatty.md").write_text(agent_file("chatty", json.dumps(command)), encoding="utf-8")
    sig = post(pcli)

    log = pcli("worker", "--agent", "chatty", "--once").expect(0).stderr

    assert pcli.ok("show", sig)["status"] == "COMPLETED"
    assert f"{sig} stderr: progress: 3 sources read" in log, log


# -- e: post -q says when nobody will take it ---------------------------------------------------------
def test_post_quiet_warns_on_stderr_when_the_signal_ends_unclaimed(pcli):
    result = pcli(
        "post",
        "-q",
        "--type",
        "RESEARCH",
        "--ps-id",
        "ps-1",
        "--entry-id",
        "e-1",
        "--topic",
        "t",
        "--capability",
        "NOBODY-DOES-THIS",
    ).expect(0)

    sig = result.stdout.strip()
    assert result.stderr.startswith(
        f"blackboard: warning: {sig} ended UNCLAIMED at once: no registered agent"
    )
    assert pcli.ok("show", sig)["status"] == "UNCLAIMED"


def test_post_quiet_says_only_that_the_signal_waits_for_a_worker_of_an_agent_able_to_take_it(pcli, project):
    (project / "agents" / "able.md").write_text(agent_file("able", json.dumps("echo hi")), encoding="utf-8")
    result = pcli("post", "-q", "--type", "RESEARCH", "--ps-id", "ps-1", "--entry-id", "e-1", "--topic", "t")

    sig = result.expect(0).stdout.strip()
    assert sig.startswith("sig-")
    # not UNCLAIMED: it waits for a worker that fits (none runs yet), and says which one to start
    assert result.stderr.splitlines() == [
        f"blackboard: warning: {sig} is waiting for a worker that fits: RESEARCH; none is live "
        "(start one: blackboard worker --agent able)"
    ]


# -- f: names Claude Code accepts ---------------------------------------------------------------------
DOTTED = "powershell-5.1-expert"


@pytest.fixture
def dotted(pcli, project) -> Cli:
    (project / "agents" / f"{DOTTED}.md").write_text(
        # a Claude Code subagent as a collection ships it: no capabilities (the name is its capability)
        f"---\nname: {DOTTED}\ndescription: Windows PowerShell 5.1 automation.\ntools: Read, Bash\n"
        "command: echo automated\n---\nYou automate Windows.\n",
        encoding="utf-8",
    )
    return pcli


def test_a_name_with_a_dot_loads_and_its_worker_takes_what_targets_it(dotted):
    listed = dotted.ok("agents")
    sig = post(dotted, "--capability", DOTTED)

    log = dotted("worker", "--agent", DOTTED, "--once").expect(0).stderr

    assert [a["name"] for a in listed["agents"]] == [DOTTED] and listed["left_out"] == []
    done = dotted.ok("show", sig)
    assert (done["status"], done["claimed_by"], done["result"]["knowledge_items"]) == (
        "COMPLETED",
        DOTTED,
        ["automated"],
    )
    assert f"{DOTTED}[" in log  # the worker's log lines name it


def test_a_name_with_a_dot_claims_completes_and_holds_key_permissions_from_the_cli(dotted):
    sig = post(dotted, "--capability", DOTTED, "--write-key", "scripts/*")
    as_claimer = ["--blackboard", "ps-1", "--author", DOTTED, "--signal", sig, "--token", "t-1"]

    dotted.ok("claim", sig, "--agent", DOTTED, "--token", "t-1")
    wrote = dotted.ok("write", "scripts/setup", "--text", "Set-Item", *as_claimer)
    refused = dotted("write", "plan", "--text", "x", *as_claimer)
    done = dotted.ok("complete", sig, "--agent", DOTTED, "--knowledge", "done", "--token", "t-1")

    assert wrote["author"] == DOTTED and refused.returncode == 3, refused.stderr
    assert (done["status"], done["claimed_by"]) == ("COMPLETED", DOTTED)
    events = dotted.ok("events", "--blackboard", "ps-1")
    claims = [e["data"]["claimed_by"] for e in events if e["event_type"] == "AgentSignalClaimed"]
    assert claims == [DOTTED]


@pytest.mark.anyio
async def test_a_name_with_a_dot_acts_through_the_mcp_server(dotted):
    sig = post(dotted, "--capability", DOTTED)
    absolute = Cli(dotted.db_url, dotted.cwd / dotted.agents_dir, dotted.cwd)  # `served` passes the folder on

    async with served(absolute, "--agent", DOTTED, "--blackboard", "ps-1") as server:
        claimed = await server.call("blackboard_claim", signal_id=sig)
        done = await server.call("blackboard_complete", signal_id=sig, knowledge_items=["via mcp"])

    assert (claimed["claimed_by"], done["status"]) == (DOTTED, "COMPLETED")


# -- g: globs --------------------------------------------------------------------------------------------
@pytest.fixture
def plugins(project) -> Path:
    for plugin, name in (("b-tools", "beta"), ("a-core", "alpha"), ("c-empty", None)):
        folder = project / "plugins" / plugin / "agents"
        folder.mkdir(parents=True)
        if name:
            (folder / f"{name}.md").write_text(agent_file(name, json.dumps("echo hi")), encoding="utf-8")
    return project / "plugins"


def test_agents_dir_takes_a_glob_and_agents_shows_the_folders_it_gave(make_cli, project, plugins):
    cli = make_cli(RELATIVE_DB, project, Path("agents"))

    by_flag = cli.ok("--agents-dir", "plugins/*/agents", "agents")
    by_variable = cli.ok("agents", env={"BLACKBOARD_AGENTS_DIR": "plugins/*/agents"})
    text = cli("--agents-dir", "plugins/*/agents", "agents").expect(0).stdout

    for listed in (by_flag, by_variable):
        assert [a["name"] for a in listed["agents"]] == ["alpha", "beta"]
        assert listed["folders"] == [
            {"folder": f"plugins/{p}/agents", "exists": True, "glob": "plugins/*/agents"}
            for p in ("a-core", "b-tools", "c-empty")
        ]
    assert text.splitlines()[-1] == (
        "2 of 2 files loaded from plugins/a-core/agents (from plugins/*/agents), plugins/b-tools/agents "
        "(from plugins/*/agents), plugins/c-empty/agents (from plugins/*/agents)"
    )


def test_a_glob_that_matches_nothing_is_reported_like_a_missing_folder(make_cli, project, plugins):
    cli = make_cli(RELATIVE_DB, project, Path("agents"))

    listed = cli.ok("--agents-dir", "nowhere/*/agents", "--agents-dir", "plugins/a-*/agents", "agents")
    text = cli("--agents-dir", "nowhere/*/agents", "agents").expect(0).stdout

    assert [a["name"] for a in listed["agents"]] == ["alpha"]
    assert listed["folders"][0] == {"folder": "nowhere/*/agents", "exists": False, "glob": "nowhere/*/agents"}
    assert text.strip() == "0 of 0 files loaded from nowhere/*/agents (a glob that matches no folder)"


def test_a_worker_runs_an_agent_found_through_a_glob(make_cli, project, plugins):
    cli = make_cli(RELATIVE_DB, project, Path("plugins/*/agents"))
    sig = post(cli)

    cli("worker", "--agent", "beta", "--once").expect(0)

    assert cli.ok("show", sig)["status"] == "COMPLETED"


# -- h: mcp --print-config ---------------------------------------------------------------------------
def test_print_config_names_the_installed_command_and_absolute_addresses(dotted, project):
    config = dotted.ok("mcp", "--print-config", "--agent", DOTTED, "--blackboard", "ps-1")

    server = config["mcpServers"]["blackboard"]
    assert server["command"] == str(Path(BLACKBOARD).resolve()) and os.access(server["command"], os.X_OK)
    assert server["args"] == [
        "--db",
        f"sqlite:///{project / '.blackboard' / 'blackboard.db'}",
        "--agents-dir",
        str(project / "agents"),
        "mcp",
        "--agent",
        DOTTED,
        "--blackboard",
        "ps-1",
    ]
    assert not (project / ".blackboard").exists(), "printing a configuration opened the database"


@pytest.mark.anyio
async def test_the_printed_config_starts_the_server_from_another_folder_without_the_venv_on_path(
    dotted, project
):
    sig = post(dotted, "--capability", DOTTED)
    server = dotted.ok("mcp", "--print-config", "--agent", DOTTED)["mcpServers"]["blackboard"]
    elsewhere = Path(tempfile.mkdtemp())
    bare_path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if Path(p) != Path(sys.executable).parent
    )
    params = StdioServerParameters(
        command=server["command"], args=server["args"], cwd=str(elsewhere), env={"PATH": bare_path}
    )

    with tempfile.TemporaryFile("w+", encoding="utf-8") as errors:
        async with (
            stdio_client(params, errlog=errors) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool("blackboard_claim", {"signal_id": sig})

    assert not result.is_error, result.content[0].text
    assert dotted.ok("show", sig)["claimed_by"] == DOTTED
    assert not list(elsewhere.iterdir()), "the server made a database where its client started it"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
