"""What a command imports: only what it uses (issue 25). The parser imports no command; `--help`,
`--version` and a usage error import neither SQLAlchemy nor pydantic nor the container, only the domain's
signal types and statuses the grammar names (issue 35: the CLI takes them from the domain, not a copy); `show`
reads the signal as every command does (the queries, the models, the documents) and imports no other
command's module; no command imports alembic on a database already at its head, nor another command's
module, nor the optional machinery of other commands (the web view, the MCP server, text matching's numpy
and bm25s, the MCP SDK, the runners). dependency-injector loads whole (issue 35: no hiding of its optional
hooks), so starlette, which it imports for its request types, is no longer among what a command leaves
out. Each probe is a fresh interpreter running the CLI's `main`, which reports the modules loaded when the
command is done."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from blackboard.infrastructure.cli import command_modules
from blackboard.infrastructure.cli.parser import build_parser

pytestmark = pytest.mark.one_process  # its tests share a costly module fixture (tests/scheduling.py)

# opentelemetry: imported only when tracing is configured (infrastructure/tracing/switch.py); prometheus_client by `ui`
OPTIONAL = (
    "mcp",
    "bm25s",
    "numpy",
    "uvicorn",
    "anthropic",
    "openai",
    "opentelemetry",
    "prometheus_client",
    "blackboard.infrastructure.tracing.otel",
)
COMMAND_MODULES = tuple(
    f"blackboard.infrastructure.cli.{name}"
    for name in (
        "commands",
        "show",
        "paging",
        "habits",
        "controller",
        "mcp_command",
        "ui",
        "transfer",
        "knowledge.commands",
        "gates",
    )
)
GRAMMAR = (
    "pydantic",
    "blackboard.domain.signals",
)  # the grammar names the domain's signal types and statuses
MODELS = (
    *GRAMMAR,
    "blackboard.domain.events",
    "blackboard.application.commands",
    "blackboard.application.ports",
    "blackboard.application.queries",
    "blackboard.application.service",
    "blackboard.infrastructure.documents",
)
STORE = (
    "sqlalchemy",
    "alembic",
    "blackboard.infrastructure.composition.container",
    "dependency_injector",
    "yaml",
)
ELSEWHERE = (
    "alembic",  # the database is at its head: one query says so
    "blackboard.infrastructure.worker",
    "blackboard.infrastructure.runners.claude_code",  # the catalog, stdlib only, names the runners
    "blackboard.infrastructure.runners.anthropic",
    "blackboard.infrastructure.runners.openai",
    "blackboard.infrastructure.web",
    "blackboard.infrastructure.mcp",
    "blackboard.application.knowledge",
    "rich",
    *OPTIONAL,
)


def _loaded(argv: list[str], cwd) -> tuple[int, set[str]]:
    """The exit code of `blackboard ARGV` and the modules loaded by then (those of ours and the listed)."""
    probe = (
        "import json, sys\n"
        "from blackboard.infrastructure.cli import main\n"
        "try:\n"
        f"    code = main({argv!r})\n"
        "except SystemExit as exited:\n"
        "    code = exited.code\n"
        "print(json.dumps([code, sorted(sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=cwd)
    code, modules = json.loads(done.stdout.splitlines()[-1])
    return code, set(modules)


def _among(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """Which of `names` (a package counts with its modules) are loaded."""
    return sorted(n for n in names if any(m == n or m.startswith(n + ".") for m in modules))


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A board at its schema's head with one signal; the flags that reach it."""
    where = tmp_path_factory.mktemp("imports")
    flags = ["--db", f"sqlite:///{where / 'b.db'}", "--agents-dir", str(where)]
    posted = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from blackboard.infrastructure.cli import main; sys.exit(main(sys.argv[1:]))",
            *flags,
            "post",
            "--type",
            "RESEARCH",
            "--ps-id",
            "ps-1",
            "--entry-id",
            "e-1",
            "--topic",
            "t",
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=where,
    )
    assert posted.returncode == 0, posted.stderr
    return where, flags, posted.stdout.strip()


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["--version"], ["show"], ["post", "--type", "NOPE"], ["nosuchcommand"]],
    ids=["help", "version", "usage-error", "bad-choice", "unknown-command"],
)
def test_help_version_and_usage_errors_import_no_store_no_models_and_no_command(board, argv):
    where, _, _ = board
    code, modules = _loaded(argv, where)

    assert code in (0, 2)
    assert "blackboard.domain.signal_kinds" in modules  # the names of types and statuses, the domain's own
    assert _among(modules, STORE + MODELS + COMMAND_MODULES + ELSEWHERE) == []


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_show_reads_the_signal_as_every_command_does_and_imports_no_other_command(board, as_json):
    where, flags, signal_id = board
    code, modules = _loaded([*flags, "show", signal_id, *(["--json"] if as_json else [])], where)

    assert code == 0
    assert "blackboard.infrastructure.documents" in modules  # the one signal document
    assert _among(modules, ELSEWHERE) == []
    assert _among(modules, COMMAND_MODULES) == ["blackboard.infrastructure.cli.show"]


KNOWLEDGE = "blackboard.application.knowledge"  # entries: status counts them, the lists check a board's


@pytest.mark.parametrize(
    ("argv", "module", "uses"),
    [
        (
            ["post", "--type", "RESEARCH", "--ps-id", "ps-1", "--entry-id", "e-2", "--topic", "t"],
            "commands",
            (),
        ),
        (["claim", "{sig}", "--agent", "nobody"], "commands", ()),  # not found: exit 4
        (["status"], "habits", (KNOWLEDGE, "rich")),
        (["signals"], "paging", (KNOWLEDGE,)),
        (["entries", "--blackboard", "ps-1"], "knowledge.commands", (KNOWLEDGE,)),
    ],
    ids=["post", "claim", "status", "signals", "entries"],
)
def test_a_command_imports_its_own_module_and_none_of_the_other_commands_machinery(board, argv, module, uses):
    where, flags, signal_id = board
    code, modules = _loaded([*flags, *(a.replace("{sig}", signal_id) for a in argv)], where)

    assert code in (0, 4)
    assert _among(modules, COMMAND_MODULES) == [f"blackboard.infrastructure.cli.{module}"]
    assert _among(modules, tuple(n for n in ELSEWHERE if n not in uses)) == []


def test_every_command_of_the_parser_is_a_function_of_the_module_it_is_mapped_to():
    runs = set()
    pending = [build_parser()]
    while pending:
        parser = pending.pop()
        runs.add(parser.get_default("run"))
        for action in parser._actions:
            if action.choices and isinstance(action.choices, dict):
                pending.extend(action.choices.values())
    runs.discard(None)

    assert len(runs) > 25
    for run in sorted(runs):
        assert callable(getattr(importlib.import_module(command_modules(run)[0]), run, None)), run
