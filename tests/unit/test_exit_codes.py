"""Exit codes: one family per error, one code per family (the one table, errors/families.py), and docs/cli.md's
table saying the same."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from blackboard.application.commands import PostSignal
from blackboard.application.errors import ConcurrencyConflict, StoreUnavailable, WaitTimedOut
from blackboard.domain.errors import AlreadyClaimed, BlackboardError, InvalidInput, SignalNotFound
from blackboard.infrastructure.cli import _report
from blackboard.infrastructure.cli.exits import INTERRUPTED, MEANINGS, OK, UNEXPECTED, exit_code
from blackboard.infrastructure.cli.parser import build_parser
from blackboard.infrastructure.composition.container import open_database
from blackboard.infrastructure.composition.settings import BlackboardSettings, store_settings
from blackboard.infrastructure.errors.families import FAMILIES

README = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def readme_exit_codes() -> dict[int, str]:
    """code -> the 'error family' cell of docs/cli.md's "### Exit codes" table."""
    section = README.read_text().split("## Exit codes", 1)[1].split("\n#", 1)[0]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if re.match(r"\|\s*\d+\s*\|", line)]
    return {int(cells[0]): cells[1].strip() for cells in rows}


def every_blackboard_error() -> set[type[BlackboardError]]:
    for layer in ("domain", "application", "infrastructure"):
        package = importlib.import_module(f"blackboard.{layer}")
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            importlib.import_module(module.name)
    found, todo = set(), [BlackboardError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("blackboard.") and sub not in found:
                found.add(sub)
                todo.append(sub)
    return found


def test_readme_lists_exactly_the_codes_the_cli_gives():
    assert set(readme_exit_codes()) == set(MEANINGS)
    assert {family.exit_code for family in FAMILIES} | {OK, UNEXPECTED, INTERRUPTED} == set(MEANINGS)


def test_readme_names_for_each_code_exactly_the_families_the_table_gives_it():
    family_names = {family.kind.__name__ for family in FAMILIES}
    for code, cell in readme_exit_codes().items():
        named = {name for name in re.findall(r"`(\w+)`", cell) if name in family_names}
        assert named == {f.kind.__name__ for f in FAMILIES if f.exit_code == code}, f"exit {code}: {cell!r}"


def test_every_error_the_blackboard_raises_on_purpose_belongs_to_exactly_one_family():
    kinds = {family.kind for family in FAMILIES}
    errors = every_blackboard_error() - kinds

    assert {"WaitTimedOut", "StoreUnavailable", "ConcurrencyConflict"} <= {e.__name__ for e in errors}
    for error in errors:
        families = [kind.__name__ for kind in kinds if issubclass(error, kind)]
        assert len(families) == 1, f"{error.__module__}.{error.__name__} is in {families or 'no family'}"


def test_the_families_are_disjoint_and_each_has_its_own_name():
    kinds = [family.kind for family in FAMILIES]
    for kind in kinds:
        assert [k for k in kinds if issubclass(kind, k)] == [kind]
    assert len({family.name for family in FAMILIES}) == len(FAMILIES)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (StoreUnavailable("could not read the event store: connection refused"), 1),
        (ConcurrencyConflict("ps-1", 50), 1),
        (InvalidInput("--limit", "must be 1 or more"), 2),
        (AlreadyClaimed("sig-1", "CLAIMED", "ps-analyst"), 3),
        (SignalNotFound("sig-1"), 4),
        (WaitTimedOut("sig-1 to finish", 2), 5),
        (ZeroDivisionError("a bug"), UNEXPECTED),
        (KeyboardInterrupt(), INTERRUPTED),
    ],
)
def test_an_error_exits_with_the_code_of_its_family(error, code):
    assert exit_code(error) == code


def test_a_value_a_command_model_refuses_is_bad_input_naming_the_option_and_the_rule(capsys):
    with pytest.raises(ValidationError) as refused:
        PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="7", topic="t")

    assert _report(refused.value, as_json=False) == 2
    said = capsys.readouterr().err
    assert said.startswith("blackboard: --entry-id: ") and "(got '7')" in said and said.count("\n") == 1


def test_an_unavailable_store_is_exit_1_in_one_line(capsys):
    down = StoreUnavailable("could not read the event store: connection refused\n\tIs the server running?")

    assert _report(down, as_json=False) == 1
    assert capsys.readouterr().err == "blackboard: could not read the event store: connection refused\n"


def test_a_database_that_cannot_be_reached_is_an_unavailable_store_not_a_driver_error():
    with pytest.raises(StoreUnavailable, match="could not open the database: connection failed") as down:
        open_database(store_settings(BlackboardSettings(db="postgresql+psycopg://nobody@127.0.0.1:1/x")))

    assert exit_code(down.value) == 1


def test_help_lists_every_exit_code():
    listed = build_parser().format_help().split("exit codes:", 1)[1]

    assert {int(code) for code in re.findall(r"^  (\d+) ", listed, re.MULTILINE)} == set(MEANINGS)
