"""Which tests run together under pytest-xdist (`make test`): the tests of a file marked `one_process` go to one
process, one after the other, every other test to whichever process is free. A pytest plugin, which
tests/conftest.py loads (`pytest_plugins`).

A file marks itself with a module-level `pytestmark = pytest.mark.one_process` (alone or in a list) when its tests
share a costly module fixture (dozens of CLI calls, a demo run, a wheel and a venv): split over processes, each
process would build the fixture again.

Why the file is read, not the mark: under xdist the controller, which schedules, collects nothing; it sees node
ids only (`tests/e2e/test_x.py::test_y[case]`), and the marks live in the workers' items. So the scheduler reads
the file a node id names, once, and finds the assignment there (`marks_one_process`); on the workers, where the
items are, `check_one_process_marks` holds every `one_process` mark to that reading, so a mark put where the
scheduler would not see it (on a function, a class, through a variable) stops the run instead of being ignored.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

MARK = "one_process"


@functools.cache
def marks_one_process(path: Path) -> bool:
    """Whether the test file at `path` assigns `pytest.mark.one_process` to its module-level `pytestmark`."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return False  # no such file, or one pytest itself will report
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets):
            marks = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
            if any(_is_the_mark(mark) for mark in marks):
                return True
    return False


def _is_the_mark(node: ast.expr) -> bool:
    """`pytest.mark.one_process` (or `mark.one_process` after `from pytest import mark`)."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == MARK
        and (
            (isinstance(node.value, ast.Attribute) and node.value.attr == "mark")
            or (isinstance(node.value, ast.Name) and node.value.id == "mark")
        )
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that carries the mark comes from a file whose `pytestmark` carries it: the scheduler reads only
    that, so a mark anywhere else would be silently ignored under xdist."""
    stray = sorted(
        {
            item.nodeid.split("::", 1)[0]
            for item in items
            if item.get_closest_marker(MARK) is not None and not marks_one_process(Path(item.path))
        }
    )
    if stray:
        raise pytest.UsageError(
            f"`{MARK}` marks a whole file: put `pytestmark = pytest.mark.{MARK}` at the top level of "
            f"{', '.join(stray)} instead of marking some of its tests (tests/scheduling.py)"
        )


@pytest.hookimpl(optionalhook=True)  # a run without xdist (-p no:xdist) knows no such hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Under pytest-xdist: the tests of a file marked `one_process` go to one process together, every other
    test to whichever process is free. (xdist's own `--dist loadgroup` reads an `xdist_group` mark into the
    test's id, which pytest 9's structured ids no longer let it change: the marks were silently ignored.)"""
    from xdist.scheduler import LoadScopeScheduling

    root = config.rootpath

    class OneProcessPerMarkedFile(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if marks_one_process(root / path) else nodeid

    return OneProcessPerMarkedFile(config, log)
