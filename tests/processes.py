"""Real processes for the tests that race several at once (test_processes.py, test_first_use.py), started warm.

multiprocessing's "spawn" starts each from a cold interpreter that imports SQLAlchemy, pydantic and the package
again: about 1 s of CPU a process, 40 of them per run. Its "forkserver" starts one clean server process (not a
fork of the test process: no thread, engine or connection of the test's) that imports those modules once; each
process is then forked from it, still a process of its own with its own connections, files and exit code.
`stop` waits for the server at the end of the run, so the CPU time of the processes it forked counts as the test
process's children's (what `time make test` reports), as tests/cli_server.py does for the CLI's."""

from __future__ import annotations

import contextlib
import multiprocessing
from multiprocessing import forkserver
from multiprocessing.context import BaseContext

PRELOAD = [
    "blackboard.infrastructure.cli",
    "tests.integration.test_processes",
    "tests.integration.test_first_use",
    "tests.langgraph.test_store_contention",  # langgraph too: about 0.6 s of CPU a process otherwise
]


def warm_context() -> BaseContext:
    """The context to start the racing processes from: forkserver, its server importing PRELOAD first."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def stop() -> None:
    """Stop this test process's fork server, if one started, and wait for it."""
    server = forkserver._forkserver  # the module's one server (what get_context("forkserver") uses)
    if getattr(server, "_forkserver_pid", None) is not None:
        with contextlib.suppress(Exception):
            server._stop()
