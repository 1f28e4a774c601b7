"""The Python API's public names: importing `blackboard` stays cheap, and each exception is the error
family of one exit code, the same class the CLI maps (docs/python-api.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import blackboard
from blackboard.infrastructure.cli.exits import exit_code
from blackboard.infrastructure.errors.families import FAMILIES


def test_importing_blackboard_loads_neither_the_api_nor_its_libraries_until_a_name_is_used():
    probe = (
        "import sys, blackboard; "
        "before = {m for m in ('sqlalchemy', 'pydantic', 'blackboard.infrastructure') if m in sys.modules}; "
        "blackboard.Blackboard; print(sorted(before), 'blackboard.infrastructure.api' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )

    assert done.stdout.split() == ["[]", "True"]


@pytest.mark.parametrize(
    ("name", "error", "code"),
    [
        ("InvalidInput", blackboard.InvalidInput("signal_type", "is required"), 2),
        ("Refused", blackboard.Refused("sig-1 is CLAIMED"), 3),
        ("NotFound", blackboard.NotFound("no signal sig-1"), 4),
        ("TimedOut", blackboard.TimedOut("timed out"), 5),
        ("Unavailable", blackboard.Unavailable("database is locked"), 1),
    ],
)
def test_each_exception_is_the_family_of_one_exit_code_under_blackboard_error(name, error, code):
    assert isinstance(error, blackboard.BlackboardError)
    assert exit_code(error) == code
    assert type(error) in {family.kind for family in FAMILIES}  # the CLI's own class, not a look-alike


def test_the_api_names_each_family_of_the_table_by_the_family_s_name():
    for family in FAMILIES:
        assert getattr(blackboard, family.api_name) is family.kind, family.name
        assert family.api_name in blackboard.__all__


def test_a_conflict_is_a_refusal_and_closed_is_unavailable():
    assert issubclass(blackboard.Conflict, blackboard.Refused)
    assert exit_code(blackboard.Closed()) == 1


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Blackbored'"):
        blackboard.Blackbored  # noqa: B018
    assert {"Blackboard", "Conflict", "__version__"} <= set(dir(blackboard))


def test_settings_given_in_code_beat_the_environment_and_bad_ones_name_the_setting_and_its_rule():
    from blackboard.infrastructure.composition.settings import configured

    env = {"BLACKBOARD_CLAIM_TIMEOUT": "30", "BLACKBOARD_SQLITE_SYNCHRONOUS": "FULL"}
    config = configured({}, {"claim_timeout": 600, "sqlite_synchronous": "normal"}, env)
    assert (config.claim_timeout, config.sqlite_synchronous) == (600.0, "NORMAL")
    with pytest.raises(
        blackboard.InvalidInput, match="^claim_timeout: must be seconds, above 0 and at most 1e\\+09, got -1$"
    ):
        configured({}, {"claim_timeout": -1}, env)
    with pytest.raises(
        blackboard.InvalidInput, match="^claim_timout: is not a setting; the settings are db, "
    ):
        configured({}, {"claim_timout": 600}, env)


def test_a_blackboard_with_a_bad_setting_is_refused_before_any_database_is_opened(tmp_path):
    with pytest.raises(blackboard.InvalidInput, match="^pool_size: must be a whole number from 1 to 10000"):
        blackboard.Blackboard(f"sqlite:///{tmp_path / 'b.db'}", pool_size=0)
    assert list(tmp_path.iterdir()) == []


def test_async_blackboard_has_every_public_method_of_blackboard_with_the_same_signature():
    """So the two cannot drift: a method added to `Blackboard` without its awaitable twin fails here."""
    import inspect

    public = sorted(
        n for n, v in vars_of(blackboard.Blackboard).items() if callable(v) and not n.startswith("_")
    )
    assert {"post", "wait", "watch", "write", "solve", "close"} <= set(public)
    for name in [*public, "__init__"]:
        mine, theirs = getattr(blackboard.AsyncBlackboard, name), getattr(blackboard.Blackboard, name)
        if name == "__init__":
            assert inspect.signature(mine) == inspect.signature(theirs)
            continue
        awaited = inspect.signature(mine)
        assert list(awaited.parameters.values()) == list(inspect.signature(theirs).parameters.values()), name
        if name == "watch":  # the one difference: every completion, as an async iterator
            assert inspect.isasyncgenfunction(mine)
            assert awaited.return_annotation == "AsyncIterator[WatchedSignal]"
        elif name == "follow":  # an iterator of a run's lines and its outcome, as an async iterator
            assert inspect.isasyncgenfunction(mine)
            assert awaited.return_annotation == "AsyncIterator[OutputLine | Signal]"
            assert inspect.signature(theirs).return_annotation == "Iterator[OutputLine | Signal]"
        else:
            assert inspect.iscoroutinefunction(mine), name
            assert awaited.return_annotation == inspect.signature(theirs).return_annotation, name
        assert inspect.getdoc(mine), name
    extra = {n for n in vars_of(blackboard.AsyncBlackboard) if not n.startswith("_")} - set(public)
    assert not extra, f"AsyncBlackboard has methods Blackboard lacks: {extra}"
    assert "AsyncBlackboard" in blackboard.__all__


def vars_of(cls: type) -> dict[str, object]:
    """The attributes of a class and its bases (not `object`'s)."""
    found: dict[str, object] = {}
    for klass in reversed(cls.__mro__[:-1]):
        found.update(vars(klass))
    return found


@pytest.mark.parametrize(
    "statement",
    [
        "from blackboard import models; print(models.Signal.__name__)",
        "from blackboard import *; print(models.Signal.__name__, Blackboard.__name__)",
        "import blackboard; print(blackboard.models.Signal.__name__)",
    ],
)
def test_the_models_module_imports_every_way_python_allows(statement):
    done = subprocess.run([sys.executable, "-c", statement], capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[0] == "Signal"


def test_solve_s_iterations_spent_is_a_public_timed_out():
    from blackboard import IterationsSpent, TimedOut

    assert issubclass(IterationsSpent, TimedOut) and "IterationsSpent" in blackboard.__all__
    assert exit_code(IterationsSpent.__new__(IterationsSpent)) == 5
