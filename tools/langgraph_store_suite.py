"""LangGraph's own store tests, run against `BlackboardStore` (docs/langgraph.md, "Store").

No langgraph package ships a conformance suite for stores (langgraph-checkpoint-conformance covers
checkpointers only). The nearest thing is `tests/test_store.py` in the source distribution of
langgraph-checkpoint, whose tests build `InMemoryStore()`: this downloads that sdist (the installed
version, with pip), puts `BlackboardStore` on a fresh SQLite file in the place of `InMemoryStore` in that
module, and runs the tests that need no embeddings (semantic search is not the board's). It needs
pytest-mock (`pip install pytest-mock`), which those tests import.

    .venv/bin/python tools/langgraph_store_suite.py [-- PYTEST ARGS]
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
from importlib.metadata import version
from pathlib import Path

# every test of tests/test_store.py that builds InMemoryStore without an `index` (no embeddings)
TESTS = (
    "test_async_batch_store_resilience",
    "test_async_batch_store_deduplication",
    "test_list_namespaces_basic",
    "test_list_namespaces_with_wildcards",
    "test_list_namespaces_pagination",
    "test_list_namespaces_max_depth",
    "test_list_namespaces_no_conditions",
    "test_list_namespaces_empty_store",
    "test_search_pages_match_full_listing",
    "test_cannot_put_empty_namespace",
    "test_rejects_invalid_namespace_labels",
    "test_async_rejects_invalid_namespace_labels",
    "test_search_and_listing_keep_empty_prefixes_and_wildcards",
    "test_async_search_and_listing_keep_empty_prefixes_and_wildcards",
)

CONFTEST = '''
import asyncio, inspect, tempfile, uuid
import pytest
from blackboard.langgraph import BlackboardStore


class FreshBoardStore(BlackboardStore):
    """`InMemoryStore(**kwargs)` as these tests call it: a store on a SQLite file of its own."""

    def __init__(self, **kwargs):
        assert not kwargs, f"needs embeddings, not run here: {kwargs}"
        folder = tempfile.mkdtemp(prefix="lg-suite-")
        super().__init__(f"sqlite:///{folder}/board.db", blackboard_id=f"lg-{uuid.uuid4().hex[:8]}")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """The suite's async tests, without pytest-asyncio: each on an event loop of its own."""
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        names = pyfuncitem._fixtureinfo.argnames
        asyncio.run(pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in names}))
        return True
    return None


def pytest_collection_modifyitems(items):
    import tests.test_store as suite

    suite.InMemoryStore = FreshBoardStore
'''


def main(extra: list[str]) -> int:
    wanted = version("langgraph-checkpoint")
    with tempfile.TemporaryDirectory(prefix="lg-store-suite-") as folder:
        where = Path(folder)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
            + ["-d", str(where), f"langgraph-checkpoint=={wanted}"],
            check=True,
        )
        with tarfile.open(next(where.glob("langgraph_checkpoint-*.tar.gz"))) as sdist:
            sdist.extractall(where, filter="data")
        root = next(p for p in where.iterdir() if p.is_dir())
        (root / "tests" / "conftest.py").write_text(CONFTEST)
        print(f"langgraph-checkpoint {wanted}: tests/test_store.py against BlackboardStore", flush=True)
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
            + ["--rootdir", str(root), "-c", "/dev/null", "tests/test_store.py"]
            + ["-k", " or ".join(TESTS), *extra],
            cwd=root,
        ).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[2:] if sys.argv[1:2] == ["--"] else sys.argv[1:]))
