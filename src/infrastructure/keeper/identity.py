"""Where a caller comes from: a run's identity as its processes carry it, so the board can tell a run from a person.

The worker starts every run's root process (a command handler, Claude Code) with the run's agent, signal,
claim token and board in its environment (RUN_VARIABLES); whatever that process starts inherits them. A
process of the board's (the CLI, `blackboard mcp`, `blackboard ui`, the Python API) is that run's when its own
environment holds them, or, on Linux, when an ancestor's does: the parent chain is walked through
/proc/PID/stat and each ancestor's environment read from /proc/PID/environ, which is the environment it was
started with, whatever it unset since; so `env -u BLACKBOARD_AGENT -u BLACKBOARD_CLAIM_TOKEN blackboard approve`
in a handler is still the handler's run. A worker names its process WORKER_NAME (`hosting`), so a process
below a worker whose variables are gone all the way up (a shell that exec'd `env -u ...` in place of itself)
is still a run: one that presents no claim, so it writes nothing. An entrypoint runs in the worker's own
process: the worker says so with `running` (a context variable, set while the function runs), which
`Blackboard()` inside it reads, and code of the worker's process outside any run (a thread an entrypoint
started) is its agent's, holding no claim (`hosting`). Anything else is a person.

What this proves is up to application/callers.py: a run's claim is checked against the board's, so these
variables only ever make a process *less* able. It keeps runs to their role through every interface the board
offers; it does not stop a process that has the database's credentials from writing to the database itself,
nor one that both drops these variables and leaves the run's process tree (a double fork re-parented to init).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path

from blackboard.application.callers import PERSON, Caller, Kind
from blackboard.infrastructure.keeper.marks import AGENT, BOARD, SIGNAL, TOKEN

RUN_VARIABLES = (AGENT, SIGNAL, TOKEN, BOARD)
WORKER_NAME = "bb-worker"  # a worker's process name (/proc/PID/comm): what is below it is a run
MAX_ANCESTORS = 64  # a deeper chain is a loop (a pid reused meanwhile), not a process tree

_running: ContextVar[Caller | None] = ContextVar("blackboard_run", default=None)
_ancestors: dict[int, Caller | None] = {}  # pid -> the run its ancestors carry: they never change
_hosted: dict[int, str] = {}  # pid -> the agent a worker process runs


def run_in(environment: Mapping[str, str]) -> Caller | None:
    """The run an environment says it is (any of RUN_VARIABLES set, even empty: a run, whatever it lacks)."""
    if not any(name in environment for name in RUN_VARIABLES):
        return None
    return Caller(
        Kind.RUN,
        environment.get(AGENT) or None,
        environment.get(SIGNAL) or None,
        environment.get(TOKEN) or None,
        environment.get(BOARD) or None,
    )


def process_caller() -> Caller:
    """Who this process is: the run its environment or its ancestors' carry, else, in a worker's process,
    its agent with no claim, else a person."""
    pid = os.getpid()
    return run_in(_run_variables()) or _ancestors_run(pid) or _hosted_agent(pid) or PERSON


# each RUN_VARIABLE as os.environ keeps it in its own table (POSIX: bytes), read directly (`_run_variables`)
_KEYS = tuple((name, os.environ.encodekey(name)) for name in RUN_VARIABLES)  # type: ignore[attr-defined]


def _run_variables() -> Mapping[str, str]:
    """The RUN_VARIABLES the environment holds now. Read at every call (a program or a test may set or unset
    them as it goes), but from os.environ's own table: its lookups raise and catch KeyError for each variable
    it lacks, about 5 µs for a person's process at every call of the board's (issue 37: a store's get is
    not much more); where it keeps no such table, os.environ itself."""
    environ = os.environ
    kept = getattr(environ, "_data", None)
    if type(kept) is not dict:
        return environ
    return {name: environ.decodevalue(kept[key]) for name, key in _KEYS if key in kept}  # type: ignore[attr-defined]


def current_caller() -> Caller:
    """Who calls now: the run whose entrypoint is running in this context, else the process."""
    return _running.get() or process_caller()


def web_caller() -> Caller:
    """Who the web view decides as, with its token: a person, unless it runs inside an agent's run."""
    process = process_caller()
    return Caller(Kind.WEB) if process.kind is Kind.PERSON else process


@contextlib.contextmanager
def running(caller: Caller) -> Iterator[None]:
    """While an entrypoint's function runs: the board's calls made in it are its run's."""
    reset = _running.set(caller)
    try:
        yield
    finally:
        _running.reset(reset)


@contextlib.contextmanager
def hosting(agent: str) -> Iterator[None]:
    """While a worker of `agent` runs in this process: code in it outside a run (a thread an entrypoint started)
    is the agent's, holding no claim, so it writes nothing; and the process is named WORKER_NAME (Linux), so
    every process below it is a run. The worker's own calls are bound to whom it ran as before (`acting`).
    Both end with the worker (a program, or a test, may run a worker and go on)."""
    pid, named = os.getpid(), sys.platform.startswith("linux")
    before = _name(Path(f"/proc/{pid}")) if named else ""
    _hosted[pid] = agent
    if named:
        _name_this_process(WORKER_NAME)
    try:
        yield
    finally:
        _hosted.pop(pid, None)
        if named and before:
            _name_this_process(before)


def _name_this_process(name: str) -> None:
    """prctl(PR_SET_NAME) on this thread (call it on the main one): /proc/PID/comm says `name`."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(15, name.encode()[:15], 0, 0, 0)  # 15: PR_SET_NAME
    except (OSError, AttributeError):  # no prctl here: only the variables tell a run then
        pass


def _hosted_agent(pid: int) -> Caller | None:
    agent = _hosted.get(pid)
    return None if agent is None else Caller(Kind.RUN, agent)


def _ancestors_run(pid: int) -> Caller | None:
    """The run the nearest ancestor carrying RUN_VARIABLES was started as (Linux; None elsewhere). Read once a
    process: an ancestor's starting environment never changes, and a parent that exits meanwhile must not turn
    its run's process into a person's."""
    if pid not in _ancestors:
        _ancestors[pid] = _walk(pid) if sys.platform.startswith("linux") else None
    return _ancestors[pid]


def _walk(pid: int) -> Caller | None:
    proc = Path("/proc")
    for _ in range(MAX_ANCESTORS):
        parent = _parent(proc / str(pid))
        if parent is None or parent <= 0:
            return None
        try:
            raw = (proc / str(parent) / "environ").read_bytes()
        except OSError:  # another user's process (or gone): its parent may still be ours
            raw = b""
        found = run_in(_environ(raw))
        if found is not None:
            return found
        if _name(proc / str(parent)) == WORKER_NAME:  # a worker's child with its variables dropped
            return Caller(Kind.RUN)
        if parent == 1:
            return None
        pid = parent
    return None


def _parent(folder: Path) -> int | None:
    try:
        stat = (folder / "stat").read_text(encoding="utf-8", errors="replace")
        return int(stat[stat.rindex(")") + 2 :].split()[1])  # after the name, which may hold spaces
    except (OSError, ValueError, IndexError):
        return None


def _name(folder: Path) -> str:
    try:
        return (folder / "comm").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _environ(raw: bytes) -> dict[str, str]:
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}
