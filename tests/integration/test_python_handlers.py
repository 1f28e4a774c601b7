"""An `entrypoint`: a Python function of the agent's folder, called as a worker calls it (on a lane, in its process).

Timeouts, the grace period and claim renewals of these calls are the worker's supervisor's:
tests/unit/test_worker_lanes.py.
"""

from __future__ import annotations

import copy
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from blackboard.domain.capabilities import AgentCapability, AgentProfile
from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.agents.entrypoints import EntrypointNotLoadable, load_entrypoint
from blackboard.infrastructure.agents.handler import call_entrypoint_here
from blackboard.infrastructure.agents.lanes import start_call
from blackboard.infrastructure.agents.outcome import HandlerOutcome
from blackboard.infrastructure.agents.parsing import AgentDefinition
from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry

SHIPPED_AGENTS = Path(__file__).resolve().parents[2] / "agents"
DOCUMENT = {"signal_id": "sig-0000abcd", "payload": {"topic": "t", "context": {}}}
PROFILE = AgentProfile(agent_id="a", capabilities=(AgentCapability(type="RESEARCH", score=0.9),))


@pytest.fixture(autouse=True)
def forget_handler_modules(tmp_path):
    """Each test imports its own `handlers` package; the next test must not find this one's."""
    path_before = list(sys.path)
    yield
    sys.path[:] = path_before
    for name in [n for n in sys.modules if n == "handlers" or n.startswith("handlers.")]:
        del sys.modules[name]


def agent(
    folder: Path,
    source: str,
    entrypoint: str = "handlers.h:handle",
    timeout: float | None = None,
    module: str = "handlers/h.py",
) -> AgentDefinition:
    """An agent file in `folder` whose entrypoint is `source`, written to `module` beside it."""
    (folder / module).parent.mkdir(parents=True, exist_ok=True)
    (folder / module).write_text(textwrap.dedent(source))
    (folder / "a.md").write_text(
        f"---\nname: a\ncapabilities: {{RESEARCH: 0.9}}\nentrypoint: {entrypoint}\n"
        + (f"timeout: {timeout}\n" if timeout else "")
        + "---\nbody\n"
    )
    registry = FrontmatterAgentRegistry(folder)
    assert registry.problems() == []
    return registry.definition("a")


def run(definition: AgentDefinition, document: dict[str, Any] = DOCUMENT) -> HandlerOutcome:
    """One call as the worker makes it: call_entrypoint_here on a lane, handed a document of its own."""
    call = start_call(lambda d: call_entrypoint_here(definition, d), copy.deepcopy(document))
    assert call.wait(10), "the entrypoint did not return"
    return call.value


# -- results --------------------------------------------------------------------------------------------
def test_a_dict_result_completes_with_its_artifact_and_knowledge(tmp_path):
    a = agent(
        tmp_path,
        """\
        def handle(document):
            return {"artifact_path": "/out/" + document["signal_id"], "knowledge_items": [document["payload"]["topic"]]}
    """,
    )

    outcome = run(a)

    assert (outcome.succeeded, outcome.artifact_path, outcome.knowledge_items) == (
        True,
        "/out/sig-0000abcd",
        ("t",),
    )


def test_a_str_result_is_the_one_knowledge_item_and_a_blank_one_is_none(tmp_path):
    a = agent(
        tmp_path,
        """\
        def handle(document):
            return document["payload"]["topic"]
    """,
    )

    assert run(a, {"signal_id": "s", "payload": {"topic": "  found it\n"}}).knowledge_items == ("found it",)
    blank = run(a, {"signal_id": "s", "payload": {"topic": " \n "}})
    assert (blank.succeeded, blank.knowledge_items) == (True, ())


def test_none_completes_with_nothing(tmp_path):
    a = agent(tmp_path, "def handle(document):\n    pass\n")

    outcome = run(a)

    assert (outcome.succeeded, outcome.artifact_path, outcome.knowledge_items, outcome.error) == (
        True,
        None,
        (),
        None,
    )


def test_an_exception_fails_with_its_type_and_message(tmp_path):
    a = agent(
        tmp_path,
        """\
        def handle(document):
            raise ValueError("no sources for " + document["payload"]["topic"])
    """,
    )

    outcome = run(a)

    assert (outcome.succeeded, outcome.error) == (False, "ValueError: no sources for t")


def test_sys_exit_in_a_handler_fails_the_signal_and_the_next_call_still_runs(tmp_path):
    a = agent(
        tmp_path,
        """\
        import sys
        def handle(document):
            if document["payload"]["topic"] == "exit":
                sys.exit(3)
            raise KeyError
    """,
    )

    assert run(a, {"signal_id": "s", "payload": {"topic": "exit"}}).error == "SystemExit: 3"
    assert run(a).error == "KeyError"  # no message: the type alone


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        ("42", "handler result: must be a dict, a str or None, got int"),
        ('["a"]', "handler result: must be a dict, a str or None, got list"),
        (
            "{'knowledge': ['a']}",
            "handler result: a dict must hold artifact_path and/or knowledge_items, got keys ['knowledge']",
        ),
        ("{'knowledge_items': 'not a list'}", "handler result: knowledge_items must be a list of strings"),
        ("{'knowledge_items': ['a', 2]}", "handler result: knowledge_items must be a list of strings"),
        ("{'artifact_path': 7}", "handler result: artifact_path must be a string"),
    ],
)
def test_a_result_that_breaks_the_rules_fails_naming_the_rule(tmp_path, returned, expected):
    a = agent(tmp_path, f"def handle(document):\n    return {returned}\n")

    outcome = run(a)

    assert (outcome.succeeded, outcome.error) == (False, expected)


# -- importing --------------------------------------------------------------------------------------------
def test_the_module_is_imported_once_and_its_state_lasts_between_calls(tmp_path):
    a = agent(
        tmp_path,
        """\
        from pathlib import Path
        Path(__file__).with_name("imports.log").open("a").write("imported\\n")
        calls = 0
        def handle(document):
            global calls
            calls += 1
            return str(calls)
    """,
    )

    results = [run(a).knowledge_items for _ in range(3)]

    assert results == [("1",), ("2",), ("3",)]
    assert (tmp_path / "handlers" / "imports.log").read_text() == "imported\n"


def test_the_agent_folder_is_on_the_import_path_also_for_imports_made_later(tmp_path):
    (tmp_path / "handlers").mkdir()
    (tmp_path / "handlers" / "kit.py").write_text("PREFIX = 'kit'\n")
    (tmp_path / "late.py").write_text("SUFFIX = 'late'\n")
    a = agent(
        tmp_path,
        """\
        from handlers.kit import PREFIX
        def handle(document):
            import late  # imported on the call, not when the module loads
            return PREFIX + "+" + late.SUFFIX
    """,
    )

    outcome = run(a)

    assert outcome.knowledge_items == ("kit+late",)
    assert sys.path.index(str(tmp_path)) == len(sys.path) - 1  # last: it shadows none of the worker's modules


def test_calls_one_after_another_reuse_one_thread(tmp_path):
    a = agent(
        tmp_path,
        """\
        import threading
        threads = set()  # held, so no two threads can share an identity
        def handle(document):
            threads.add(threading.current_thread())
            return str(len(threads))
    """,
    )

    outcomes = [run(a) for _ in range(50)]

    assert outcomes[-1].knowledge_items == ("1",)


def test_the_shipped_noop_entrypoint_completes_with_nothing():
    noop = AgentDefinition(
        profile=PROFILE, path=SHIPPED_AGENTS / "noop.md", entrypoint="handlers.noop:handle"
    )

    outcome = run(noop)

    assert (outcome.succeeded, outcome.knowledge_items, outcome.error) == (True, (), None)


# -- entrypoints that cannot be loaded ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("entrypoint", "source", "expected"),
    [
        (
            "handlers.gone:handle",
            None,
            "cannot import module handlers.gone from {folder}: ModuleNotFoundError: "
            "No module named 'handlers.gone'",
        ),
        (
            "handlers.h:handle",
            "raise RuntimeError('needs API_KEY')\n",
            "cannot import module handlers.h from {folder}: RuntimeError: needs API_KEY",
        ),
        (
            "handlers.h:handle",
            "def handle(:\n",
            "cannot import module handlers.h from {folder}: SyntaxError: ",
        ),
        (
            "handlers.h:handel",
            "def handle(document): pass\n",
            "module handlers.h ({folder}/handlers/h.py) has no attribute handel",
        ),
        ("handlers.h:handle", "handle = 'a string'\n", "handlers.h:handle is a str, not a function"),
    ],
)
def test_an_entrypoint_that_cannot_be_loaded_is_refused_naming_the_module_and_why(
    tmp_path, entrypoint, source, expected
):
    a = agent(
        tmp_path,
        source or "",
        entrypoint=entrypoint,
        module="handlers/h.py" if source else "handlers/other.py",
    )
    expected = expected.format(folder=tmp_path)

    with pytest.raises(EntrypointNotLoadable) as refused:
        load_entrypoint(a)

    assert isinstance(refused.value, InvalidInput) and refused.value.field == "entrypoint"
    assert str(refused.value).startswith(f"entrypoint: {expected}")
    assert str(refused.value).endswith(f"(agent a, {tmp_path / 'a.md'})")
    outcome = run(a)  # a worker that runs it anyway fails the signal with the same reason
    assert (outcome.succeeded, outcome.error) == (False, str(refused.value))


def test_an_agent_without_an_entrypoint_has_none_to_load(tmp_path):
    a = AgentDefinition(profile=PROFILE, path=tmp_path / "a.md", command="true")

    with pytest.raises(EntrypointNotLoadable, match="names no entrypoint"):
        load_entrypoint(a)


def test_a_failed_import_is_tried_again_once_the_module_is_fixed(tmp_path):
    a = agent(tmp_path, "raise ImportError('not yet')\n")
    with pytest.raises(EntrypointNotLoadable):
        load_entrypoint(a)

    (tmp_path / "handlers" / "h.py").write_text("def handle(document):\n    return 'fixed'\n")

    assert run(a).knowledge_items == ("fixed",)
