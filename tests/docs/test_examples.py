"""Every example of the README and the docs runs, so none goes stale (examples.py says how each kind runs).

Each page's shell blocks run one after another in one real bash, with a `blackboard` first on PATH that runs
each call as a process of its own forked from the suite's CLI server (the `warm_cli` fixture; the README's
tour, which activates the virtualenv, and two tests below run the real cold executable), in a fresh folder
holding a copy of `agents/` and a fresh SQLite database (`BLACKBOARD_DB`); python blocks run in a
subprocess; JSON blocks are parsed; agent files are loaded by the real registry. A block that is none of
these, and is not a picture (`text`), must say why it is not run."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import frontmatter
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry
from blackboard.infrastructure.cli.parser import build_parser
from tests.cli_server import SERVER
from tests.conftest import PG_ADMIN_URL
from tests.docs.examples import (
    BACKGROUND,
    NOT_RUN,
    PAGES,
    ROOT,
    SHELL,
    Block,
    blocks,
    every_block,
    run,
    shell_script,
)

HELPER = Path(__file__).with_name("helper.py")
PAGE_TIMEOUT = 300.0  # seconds a page's shell session may take before the test fails (a hang, never reached)
RUNS = SHELL | {"python", "json", "markdown"}

# The README's tour begins "after `make demo`": the demo, as `make demo` runs it once .venv is set up, in the
# page's folder, and then the tour on the database every command reads there when nothing names another (the
# default, where the demo leaves its board): not the fresh BLACKBOARD_DB the harness gives other pages.
AFTER_MAKE_DEMO = "\n".join(
    [
        "unset BLACKBOARD_DB",
        '"$DOCS_PYTHON" -m blackboard.infrastructure.demo.board > "$DOCS_TMP/demo.log" 2>&1 || '
        '{ cat "$DOCS_TMP/demo.log" >&2; false; }',
    ]
)

# What a page takes for granted, beyond a fresh folder with `agents/` in it. Keep this short: each entry is
# a precondition the page itself states.
SETUP = {
    "README.md": AFTER_MAKE_DEMO,
    # the skill's reader works beside running agents ("an agent whose capabilities fit claims it"), and
    # writes a report of its own (`--file report.md`)
    "docs/skill/SKILL.md": "\n".join(
        [
            "__docs_background '(set-up)' blackboard worker --agent ps-researcher",
            "printf '# Report\\n\\nWhat we found.\\n' > report.md",
        ]
    ),
    # "a folder of Claude Code subagents, which declare no capabilities"
    "docs/matching.md": f"export BLACKBOARD_AGENTS_DIR={ROOT / 'tests' / 'fixtures' / 'everyday-agents'}",
}


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


SHELL_PAGES = [p for p in PAGES if any(b.language in SHELL and not b.not_run for b in blocks(p))]


# -- the rule: every block runs, is a picture, or says why not ----------------------------------------------
@pytest.mark.parametrize("block", every_block(), ids=lambda b: b.where)
def test_every_block_of_the_docs_is_run_or_says_why_not(block: Block):
    if block.note is not None:
        assert block.note == BACKGROUND or (block.not_run and len(block.note) > len(NOT_RUN) + 10), (
            f"{block.where}: unknown note {block.note!r}: `not run, REASON` or `{BACKGROUND}`"
        )
        assert block.note != BACKGROUND or block.language in SHELL, (
            f"{block.where}: only shell runs in the background"
        )
        return
    assert block.language, f"{block.where}: a block names its language (`text` for a picture or an output)"
    assert block.language in RUNS | {"text"}, (
        f"{block.where}: the harness does not run `{block.language}` blocks: "
        "add `<!-- example: not run, REASON -->` before it"
    )
    if block.language == "markdown":
        assert block.text.startswith("---\n"), f"{block.where}: a markdown example is an agent or flow file"


def test_few_blocks_are_left_unrun():
    unrun = [b.where for b in every_block() if b.not_run]
    assert len(unrun) <= 8, unrun


# -- a folder to run in ---------------------------------------------------------------------------------------
@pytest.fixture
def workdir(tmp_path) -> Path:
    """A fresh folder laid out as a clone's root after `make demo`: a copy of the example agents, what
    alembic reads, and the virtualenv."""
    work = tmp_path / "work"
    shutil.copytree(
        ROOT / "agents", work / "agents", ignore=shutil.ignore_patterns("artifacts", "__pycache__")
    )
    shutil.copytree(ROOT / "flows", work / "flows")  # the example flows (docs/flows.md)
    for name in ("alembic.ini", "pyproject.toml"):
        shutil.copy(ROOT / name, work / name)
    (work / "migrations").symlink_to(ROOT / "migrations")
    (work / ".venv").symlink_to(Path(sys.prefix))  # the README's `. .venv/bin/activate`, after `make demo`
    (tmp_path / "home").mkdir()
    return work


@pytest.fixture(scope="session")
def pycache() -> Path:
    """Where the pages' processes keep compiled modules, shared by runs and by xdist's workers: a user's
    install has them, so each command of a page does not compile the package again (this machine's
    environment forbids writing them beside the sources)."""
    folder = ROOT / "build" / "pycache"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def warm_cli(tmp_path_factory) -> Path | None:
    """A folder whose `blackboard` runs each call through the suite's fork server (tests/cli_server.py): still a
    process of its own with the shell's pipes, environment, folder, signals and exit code, without paying the
    interpreter's and the package's import for each of a page's commands. None with BLACKBOARD_TEST_CLI=exec.
    The README's tour activates the virtualenv, which puts the real executable first again: that page, the
    entrypoint example and the tour's worker below run the real cold `blackboard`."""
    return None if SERVER is None else SERVER.shim(tmp_path_factory.mktemp("warm-cli"))


def environment(work: Path, pycache: Path, warm_cli: Path | None = None) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("BLACKBOARD_", "PYTHONDONTWRITEBYTECODE"))
    }
    first = [str(warm_cli)] if warm_cli else []
    env.update(
        PATH=os.pathsep.join([*first, str(Path(sys.executable).parent), env.get("PATH", "/usr/bin:/bin")]),
        HOME=str(work.parent / "home"),
        BLACKBOARD_DB=f"sqlite:///{work / 'blackboard.db'}",
        DOCS_PYTHON=sys.executable,
        DOCS_HELPER=str(HELPER),
        DOCS_TMP=str(work.parent),
        PYTHONPYCACHEPREFIX=str(pycache),
    )
    return env


@pytest.fixture
def pg_page_url() -> Iterator[str]:
    """A database of its own for a page that names PostgreSQL, dropped afterwards."""
    name = f"blackboard_docs_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    yield make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


# -- shell blocks: one session per page ----------------------------------------------------------------------
@pytest.mark.parametrize("page", SHELL_PAGES, ids=_name)
def test_the_shell_examples_of_a_page_run_as_written(
    page: Path, workdir: Path, pycache: Path, warm_cli: Path | None, request
):
    page_blocks = blocks(page)
    needs_pg = any("postgresql+psycopg://" in b.text for b in page_blocks if b.language in SHELL)
    pg_url = request.getfixturevalue("pg_page_url") if needs_pg else None
    script = shell_script(page_blocks, SETUP.get(_name(page), ""), pg_url)

    ran = run(script, workdir, environment(workdir, pycache, warm_cli), PAGE_TIMEOUT)

    assert ran.returncode == 0, f"{ran.failure(script)}\n--- output (the end) ---\n{ran.output[-6000:]}"
    assert "Traceback (most recent call last)" not in ran.output, ran.output[-6000:]
    print(f"{_name(page)}: {ran.seconds:.1f} s, {ran.cpu_seconds:.1f} s of CPU")


# -- python, JSON and agent-file blocks ----------------------------------------------------------------------
def _of(language: str) -> list[Block]:
    return [b for b in every_block() if b.language == language and not b.not_run]


@pytest.mark.parametrize("block", _of("python"), ids=lambda b: b.where)
def test_a_python_example_runs_in_a_fresh_folder(block: Block, workdir: Path, pycache: Path):
    (workdir / "example.py").write_text(block.text)
    done = subprocess.run(
        [sys.executable, "example.py"],
        cwd=workdir,
        env=environment(workdir, pycache),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{block.where}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("block", _of("json"), ids=lambda b: b.where)
def test_a_json_example_parses_and_a_client_configuration_starts_the_mcp_server(block: Block):
    document = json.loads(block.text)
    for name, server in document.get("mcpServers", {}).items():
        assert set(server) >= {"command", "args"}, f"{block.where}: {name} needs command and args"
        assert Path(server["command"]).name == "blackboard", server["command"]
        assert all(isinstance(arg, str) for arg in server["args"])
        assert build_parser().parse_args(server["args"]).command == "mcp"


def _is_flow(block: Block) -> bool:
    """A flow file (docs/flows.md) rather than an agent file: its front matter lists `steps`."""
    return "steps" in frontmatter.loads(block.text).metadata


@pytest.mark.parametrize("block", [b for b in _of("markdown") if _is_flow(b)], ids=lambda b: b.where)
def test_a_flow_file_example_is_read_by_the_real_flow_reader(block: Block):
    from blackboard.infrastructure.agents.flow_files import read_flow_text

    flow = read_flow_text(block.text, block.where)
    assert flow.name == frontmatter.loads(block.text).metadata["name"] and flow.steps


@pytest.mark.parametrize("block", [b for b in _of("markdown") if not _is_flow(b)], ids=lambda b: b.where)
def test_an_agent_file_example_loads_in_the_real_registry_without_a_warning(block: Block, tmp_path):
    (tmp_path / "example.md").write_text(block.text)
    [report] = FrontmatterAgentRegistry(tmp_path).files()
    assert report.agent is not None, f"{block.where}: left out: {report.problems}"
    assert not report.warnings, f"{block.where}: {report.warnings}"
    assert report.agent.name == frontmatter.loads(block.text).metadata["name"]


def test_the_entrypoint_example_completes_a_signal_in_a_worker_of_the_agent_file_example(
    workdir: Path, pycache: Path
):
    """docs/agents.md's agent file, with the `entrypoint` its comment offers instead of `command`, and the
    Python function it names, saved where that function's comment says: a real worker runs them."""
    page = blocks(ROOT / "docs" / "agents.md")
    agent_file = [b for b in page if b.language == "markdown"][0]  # the first; the Runners section's follow
    [handler] = [b for b in page if b.language == "python" and "def handle(" in b.text]
    saved_as = re.search(r"^# (handlers/\S+\.py)", handler.text)[1]
    entrypoint = re.search(r"entrypoint: (\S+)", handler.text)[1]
    (workdir / "agents" / saved_as).write_text(handler.text)
    agent = re.sub(r"^command: .*$", f"entrypoint: {entrypoint}", agent_file.text, flags=re.M)
    (workdir / "agents" / "ps-researcher.md").write_text(agent)
    env = environment(workdir, pycache)

    def blackboard(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["blackboard", *args], cwd=workdir, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done

    sig = blackboard(
        "post", "-q", "--type", "RESEARCH", "--ps-id", "ps-42", "--entry-id", "e-1", "--topic", "logs"
    )
    blackboard("worker", "--agent", "ps-researcher", "--once")
    shown = json.loads(blackboard("--json", "show", sig.stdout.strip()).stdout)

    assert shown["status"] == "COMPLETED", shown
    assert shown["result"]["knowledge_items"] == ["ps-researcher found nothing new on logs"]


# -- what running the examples revealed --------------------------------------------------------------------
def test_the_tour_s_worker_opening_a_fresh_database_logs_only_its_own_lines(workdir: Path, pycache: Path):
    """The README's tour starts its worker first, so the worker creates the database: the migration's
    chatter (alembic's INFO lines) must not fill its log."""
    done = subprocess.run(
        ["blackboard", "worker", "--agent", "ps-researcher", "--once"],
        cwd=workdir,
        env=environment(workdir, pycache),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "worker ps-researcher started" in done.stderr
    chatter = [
        line for line in done.stderr.splitlines() if "plugin alembic" in line or "Context impl" in line
    ]
    assert not chatter, chatter


# Waits (in the tour's session) until seed 003's post timeout of 30 s has passed since the signal named became
# claimable: the rule that used to expire the tour's REVIEW while no reviewer ran
PAST_THE_OLD_POST_TIMEOUT = """
import datetime, json, subprocess, sys, time
shown = json.loads(subprocess.run(
    ["blackboard", "--json", "show", sys.argv[1]], capture_output=True, text=True, check=True
).stdout)
past = datetime.datetime.fromisoformat(shown["claimable_since"]) + datetime.timedelta(seconds=31)
while (now := datetime.datetime.now(datetime.UTC)) < past:
    time.sleep((past - now).total_seconds())
"""


def test_the_readme_tour_loses_nothing_when_its_reviewer_starts_late(workdir: Path, pycache: Path):
    """The README's tour as written (its worker, its commands, after `make demo`), with a pause before its
    reviewer starts: over 30 s, and a sweep, as another agent's worker makes every few seconds. The REVIEW
    posted while no reviewer ran waits for one, and the reviewer started later completes it (issue 32: it
    was EXPIRED 35 s after the post, or not, depending on whether some other worker swept meanwhile). The
    tour looks at the demo's board first, in the database the demo left it in (issue 34: the demo wrote
    `.blackboard/demo.db` and the tour read `.blackboard/blackboard.db`, so `entries --blackboard ps-demo`
    exited 4)."""
    [tour] = [b for b in blocks(ROOT / "README.md") if b.language in SHELL and "REV=$(" in b.text]
    lines = tour.text.splitlines()
    late = next(i for i, line in enumerate(lines) if "--agent ps-reviewer" in line)
    (workdir.parent / "past.py").write_text(PAST_THE_OLD_POST_TIMEOUT)
    pause = '"$DOCS_PYTHON" "$DOCS_TMP/past.py" "$REV"\nblackboard expire\n'
    shown = (
        "blackboard --json show $REV > rev.json\nblackboard --json entries --blackboard ps-demo > demo.json\n"
    )
    parts = [
        Block(tour.page, tour.line, "bash", "\n".join(lines[:late]) + "\n", None),
        Block(tour.page, tour.line + late, "bash", pause, None),
        Block(tour.page, tour.line + late, "bash", "\n".join(lines[late:]) + "\n", None),
        Block(tour.page, tour.line + len(lines), "bash", shown, None),
    ]
    script = shell_script(parts, AFTER_MAKE_DEMO)

    ran = run(script, workdir, environment(workdir, pycache), PAGE_TIMEOUT)

    assert ran.returncode == 0, f"{ran.failure(script)}\n--- output (the end) ---\n{ran.output[-6000:]}"
    review = json.loads((workdir / "rev.json").read_text())
    assert (review["signal_type"], review["status"]) == ("REVIEW", "COMPLETED"), review
    assert review["claimed_by"] == "ps-reviewer"
    assert (review["payload"]["ps_id"], review["payload"]["entry_id"]) == ("ps-42", "e-2")  # the defaults
    found = json.loads(
        (workdir / "demo.json").read_text()
    )  # the demo's findings, read as the tour reads them
    assert {e["author"] for e in found} >= {"ps-researcher", "ps-analyst", "ps-reviewer"}, found
    assert (workdir / ".blackboard" / "blackboard.db").exists()
    assert not (workdir / "blackboard.db").exists()  # the tour read the default, not the harness's database


# -- the command table's examples -------------------------------------------------------------------------
def _table_examples() -> list[tuple[str, str]]:
    """(the row's command, its example) of each row of docs/cli.md's "### Commands" table."""
    section = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split("## Commands", 1)[1]
    rows = [line for line in section.strip().split("\n\n", 1)[0].splitlines() if line.startswith("| `")]
    found = []
    for row in rows:
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]]
        command = cells[0].strip("`").split()[0]
        example = re.search(r"blackboard (.*)", cells[-1].strip("`"))[1]
        found.append((command, example.removesuffix(')"')))  # `eval "$(blackboard completion bash)"`
    return found


@pytest.mark.parametrize(("command", "example"), _table_examples(), ids=lambda x: x)
def test_each_example_of_the_command_table_is_accepted_by_the_parser_as_its_row_s_command(command, example):
    words = []
    for word in shlex.split(example):
        if word.startswith(">"):
            break
        words.append(word)
    try:
        parsed = build_parser().parse_args(words)
    except SystemExit as refused:
        pytest.fail(f"`blackboard {example}` is refused by the parser (exit {refused.code})")
    assert parsed.command == command


def test_ctrl_c_while_the_command_line_is_still_starting_is_exit_130_without_a_traceback(monkeypatch):
    """Stopping deploy-postgres.md's workers right after they were started (a second, on a busy machine)
    printed a traceback from the parser's imports: main() now catches Ctrl-C from its first line."""
    from blackboard.infrastructure import cli
    from blackboard.infrastructure.cli import parser

    def pressed_ctrl_c(**_):
        raise KeyboardInterrupt

    monkeypatch.setattr(parser, "build_parser", pressed_ctrl_c)

    assert cli.main(["signals"]) == 130
