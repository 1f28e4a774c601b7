"""The command line's habits: --version, "did you mean", post -q, the shipped JSON schemas, shell completion."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from jsonschema import Draft7Validator

from tests.e2e.conftest import BLACKBOARD, FORMATS, Cli
from tests.paths import SCHEMAS

COMMANDS = (
    "post",
    "claim",
    "complete",
    "signals",
    "events",
    "status",
    "schema",
    "completion",
    "write",
    "entries",
)


def test_version_prints_the_installed_version(cli):
    from importlib.metadata import version

    assert cli("--version").expect(0).stdout == f"blackboard {version('agent-blackboard')}\n"


@pytest.mark.parametrize(
    ("args", "suggested"),
    [
        (("pots",), "did you mean post"),
        (("signals", "--limt", "3"), "did you mean --limit?"),
        (("signals", "--status=POSTD"), "did you mean POSTED?"),
        (("events", "--sinse=3"), "did you mean --since?"),
        (("db", "upgrad"), "did you mean upgrade?"),
    ],
)
def test_a_mistyped_word_gets_a_suggestion_and_exit_2(cli, args, suggested):
    result = cli(*args).expect(2)
    assert suggested in result.stderr.splitlines()[-1], result.stderr


def test_nothing_close_gets_no_suggestion(cli):
    assert "did you mean" not in cli("xyzzy").expect(2).stderr


def test_post_quiet_prints_only_the_new_id(cli):
    first = cli(
        "post", "-q", "--type", "RESEARCH", "--ps-id", "ps-1", "--entry-id", "e-1", "--topic", "t"
    ).expect(0)
    again = cli(
        "--json",
        "post",
        "--quiet",
        "--type",
        "REVIEW",
        "--ps-id",
        "ps-1",
        "--entry-id",
        "e-2",
        "--topic",
        "u",
    )
    ids = [first.stdout, again.expect(0).stdout]
    assert all(i.startswith("sig-") and i.count("\n") == 1 and len(i) == 13 for i in ids), ids
    assert [s["signal_id"] + "\n" for s in cli.ok("signals")] == ids


@pytest.mark.parametrize(
    ("document", "shipped"), [("signal", "agent-signal.schema.json"), ("entry", "entry.schema.json")]
)
def test_the_schema_command_prints_the_shipped_schema_generated_from_the_models(cli, document, shipped):
    """The file is the models' (tests/unit/test_schemas.py); the signal's refines the contract's."""
    assert cli.ok("schema", document) == json.loads((SCHEMAS / shipped).read_text(encoding="utf-8"))
    assert json.loads(cli("schema", document).expect(0).stdout) == cli.ok("schema", document)


def test_the_shipped_schemas_validate_what_the_commands_print(cli):
    """The entry schema (written from docs/knowledge.md) holds every entry document the CLI prints,
    a conflict's candidates included, and refuses one that breaks a rule of the contract."""
    entry = Draft7Validator(cli.ok("schema", "entry"), format_checker=FORMATS)
    signal = Draft7Validator(cli.ok("schema", "signal"), format_checker=FORMATS)
    Draft7Validator.check_schema(entry.schema)
    board = ("--blackboard", "ps-1")
    printed = [
        cli.ok(
            "write",
            "plan",
            *board,
            "--author",
            "a",
            "--type",
            "plan",
            "--value",
            '{"steps": 2}',
            "--topic",
            "t",
            "--confidence",
            "0.5",
            "--meta",
            '{"m": 1}',
        )
    ]
    kept = cli("--json", "write", "plan", *board, "--author", "b", "--value", "3").expect(3).json()
    printed += [kept, *cli.ok("entries", *board), cli.ok("read", "plan", *board)]
    assert kept["conflict"]["candidates"], kept
    for document in printed:
        assert not list(entry.iter_errors(document)), list(entry.iter_errors(document))
    assert not entry.is_valid({**printed[0], "entry_type": "gossip"})
    assert not entry.is_valid({**printed[0], "confidence": 2})
    posted = cli.post()
    assert signal.is_valid(posted) and not signal.is_valid({**posted, "status": "LOST"})


def _shell(name: str) -> str:
    found = shutil.which(name)
    assert found, f"{name} is needed for this test: run `make tools`, which installs it"
    return found


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_completion_script_is_valid_and_names_the_command(cli, tmp_path, shell):
    script = cli("completion", shell).expect(0).stdout
    assert "blackboard" in script and "_ARGCOMPLETE" in script
    path = tmp_path / f"blackboard.{shell}"
    path.write_text(script, encoding="utf-8")
    checked = subprocess.run([_shell(shell), "-n", str(path)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr


def _complete(cli: Cli, line: str) -> list[str]:
    """What `blackboard` answers the shell (argcomplete's protocol, as the generated script runs it with
    ARGCOMPLETE_USE_TEMPFILES) when the user pressed TAB after `line`."""
    answer = cli.cwd / "completions.txt"
    env = {
        "_ARGCOMPLETE": "1",
        "_ARGCOMPLETE_IFS": "\n",
        "COMP_LINE": line,
        "COMP_POINT": str(len(line)),
        "_ARGCOMPLETE_SHELL": "bash",
        "_ARGCOMPLETE_STDOUT_FILENAME": str(answer),
    }
    subprocess.run([BLACKBOARD], env=cli.environment(env), cwd=cli.cwd, capture_output=True, timeout=60)
    return answer.read_text(encoding="utf-8").split()


def test_completion_answers_commands_and_options(cli):
    commands = _complete(cli, "blackboard s")
    assert {"signals", "status", "schema", "show", "summary"} <= set(commands), commands
    assert "post" not in commands
    assert {"--limit", "--all", "--capability"} <= set(_complete(cli, "blackboard signals --")), (
        "options of signals"
    )
    shells = _complete(cli, "blackboard completion ")
    assert {"bash", "zsh", "fish"} <= set(shells) and not {"post", "tcsh"} & set(shells), shells


def test_help_names_the_new_commands(cli):
    listed = cli("--help").expect(0).stdout
    assert all(command in listed for command in COMMANDS)


def test_status_shows_a_board_name_as_given_not_as_rich_markup(cli):
    cli.post(ps="ps-[bold]x[/bold]")
    assert "ps-[bold]x[/bold]" in cli("status").expect(0).stdout
