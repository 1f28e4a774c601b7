"""Where blackboard's time goes on PostgreSQL, step by step, in the benchmark's own process.

- `open_signals_probe`: the worker's candidate query (`BlackboardQueries.open_candidates`, as the
  worker asks it), timed, and PostgreSQL's plan for the very statement it sent (EXPLAIN ANALYZE);
  run before and after ANALYZE (without statistics the plan can go quadratic).
- `claim_path`: one worker round replayed on a clone of the backlog with the objects the worker's
  container builds, the same calls in the same order, SQL statements and pool checkouts counted per step.
- `handler_cost`: a handler call as the worker makes it, on the bench agent, beside a bare fork/exec.

These reach below the service where the worker does (its handler call, the log's last position):
they replay what the worker does, so they follow the worker's code, not only the public API.
"""

from __future__ import annotations

import copy
import statistics
import subprocess
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.fleet import AGENT_NAME, POST_TIMEOUT_S, agents_dir
from bench.stats import dist_ms

if TYPE_CHECKING:
    from bench.postgres.databases import Databases


# ----------------------------------------------------------------------------------- the handler
def worker_handler_call(agent: Any, document: dict[str, Any]) -> Any:
    """One handler call as a worker makes it: an entrypoint on a lane (the worker's supervisor watches
    its time; nothing waits here but this caller), a command through run_handler. `document` is handed
    over, as the worker hands over the one it builds."""
    from blackboard.infrastructure.agents.handler import call_entrypoint_here, run_handler
    from blackboard.infrastructure.agents.lanes import start_call

    if not agent.entrypoint:
        return run_handler(agent, document)
    call = start_call(lambda d: call_entrypoint_here(agent, d), document)
    if not call.wait(60):
        raise RuntimeError("the no-op entrypoint did not return within 60 s")
    return call.value


def handler_cost(root: Path, handler: str, reps: int) -> dict[str, Any]:
    """A handler call as the worker makes it on the bench-noop agent, and a bare fork/exec of `true`."""
    from blackboard.infrastructure.agents.parsing import read_agent_file

    agent = read_agent_file(agents_dir(root, handler) / f"{AGENT_NAME}.md")
    document = {
        "signal_id": "sig-bench0001",
        "blackboard_id": "ps-pg-bench",
        "signal_type": "RESEARCH",
        "payload": {
            "ps_id": "ps-pg-bench",
            "entry_id": "e-0",
            "topic": "handler cost",
            "prompt": "nothing to do",
            "context": {},
        },
    }
    calls, bare = [], []
    for _ in range(reps):
        fresh = copy.deepcopy(document)
        t = time.perf_counter()
        outcome = worker_handler_call(agent, fresh)
        calls.append(time.perf_counter() - t)
        if not outcome.succeeded:
            raise RuntimeError(f"the no-op handler failed: {outcome.error}")
        t = time.perf_counter()
        subprocess.run(["true"], check=True)
        bare.append(time.perf_counter() - t)
    return {"reps": reps, "handler_call": dist_ms(calls), "subprocess_true": dist_ms(bare)}


# ------------------------------------------------------------------------ the candidate query
def open_signals_probe(dbs: Databases, db: str, reps: int = 3) -> dict[str, Any]:
    """The worker's candidate query, as the worker asks it: its time through the application, and
    PostgreSQL's plan for the very statement it sent."""
    from sqlalchemy import event

    from bench.common import wired
    from blackboard.application.commands import GetOpenSignals

    sent: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        sent.append((statement, parameters))

    question = GetOpenSignals(capabilities=("RESEARCH",), limit=100, catch_up=False)
    with wired(dbs.sqlalchemy_url(db)) as container:
        engine, queries = container.engine(), container.queries()
        queries.open_candidates(question)
        times = []
        for _ in range(reps):
            started = time.perf_counter()
            found = queries.open_candidates(question)
            times.append(time.perf_counter() - started)
        event.listen(engine, "before_cursor_execute", capture)
        queries.open_candidates(question)
        event.remove(engine, "before_cursor_execute", capture)
        statement, parameters = sent[-1]
        with engine.connect() as conn:
            plan = [
                row[0]
                for row in conn.exec_driver_sql("EXPLAIN (ANALYZE, COSTS OFF) " + statement, parameters)
            ]
    execution = next((line for line in plan if line.startswith("Execution Time")), "")
    removed = [int(line.split(":")[1]) for line in plan if "Rows Removed by Join Filter" in line]
    return {
        "rows_returned": len(found),
        "find": dist_ms(times),
        "execution_ms": float(execution.split(":")[1].split()[0]) if execution else None,
        "rows_removed_by_join_filter": sum(removed),
        "plan": plan,
    }


# ------------------------------------------------------------------------------ one worker round
def claim_path(
    dbs: Databases, root: Path, template: str, handler: str, reps: int, batch: int
) -> dict[str, Any]:
    """What one worker round costs, step by step, in this process on a copy of the backlog: the objects
    the worker's container builds, the same calls in the same order, for a worker with `batch` free
    slots; SQL statements and pool checkouts counted per step."""
    import psycopg
    from sqlalchemy import event

    from bench.common import wired
    from blackboard.application.commands import ClaimSignals, CompleteSignal, GetOpenSignals, RecordOutcomes
    from blackboard.infrastructure.agents.parsing import read_agent_file
    from blackboard.infrastructure.documents import jsonable, signal

    db = dbs.create("bb_steps", template=template)
    counted = {"statements": 0, "checkouts": 0}

    def statement(*_: Any) -> None:
        counted["statements"] += 1

    def checkout(*_: Any) -> None:
        counted["checkouts"] += 1

    agents = agents_dir(root, handler)
    agent = read_agent_file(agents / f"{AGENT_NAME}.md")
    token = f"{AGENT_NAME}/{uuid.uuid4()}"
    names = ("last_position", "candidates", "claim_signals", "handlers", "record_outcomes")
    times: dict[str, list[float]] = {k: [] for k in names}
    per_step: dict[str, list[tuple[int, int]]] = {k: [] for k in names}

    def timed(name: str, fn: Any, keep: bool) -> Any:
        before = dict(counted)
        started = time.perf_counter()
        out = fn()
        if keep:
            times[name].append(time.perf_counter() - started)
            per_step[name].append(
                (counted["statements"] - before["statements"], counted["checkouts"] - before["checkouts"])
            )
        return out

    with wired(dbs.sqlalchemy_url(db), agents_dir=agents, post_timeout=POST_TIMEOUT_S) as container:
        engine = container.engine()
        event.listen(engine, "before_cursor_execute", statement)
        event.listen(engine, "checkout", checkout)
        store, service, queries = container.event_store(), container.service(), container.queries()
        look = getattr(queries, "look", None)  # the worker's look (a build before it asked open_candidates)
        ask = (lambda q: list(look(q).candidates)) if look else queries.open_candidates
        for i in range(reps + 3):  # three rounds first, untimed: statement caches, the board's first load
            keep = i >= 3
            timed("last_position", store.last_position, keep)
            found = timed(
                "candidates",
                lambda: ask(  # as the worker asks
                    GetOpenSignals(capabilities=("RESEARCH",), limit=max(8, 2 * batch), catch_up=False)
                ),
                keep,
            )
            board = found[0].blackboard_id
            claims = timed(
                "claim_signals",
                lambda: service.claim_signals(
                    ClaimSignals(
                        blackboard_id=board,
                        signal_ids=tuple(f.signal_id for f in found),
                        agent_id=AGENT_NAME,
                        limit=batch,
                        **claim_tokens(ClaimSignals, tuple(f.signal_id for f in found), token),
                    )
                ),
                keep,
            )
            timed(
                "handlers",
                lambda: [worker_handler_call(agent, jsonable(signal(c))) for c in claims.claimed],
                keep,
            )
            outcomes = tuple(
                CompleteSignal(
                    signal_id=c.signal_id, agent_id=AGENT_NAME, token=c.claim_token, blackboard_id=board
                )
                for c in claims.claimed
            )
            timed(
                "record_outcomes",
                lambda: service.record_outcomes(
                    RecordOutcomes(blackboard_id=board, agent_id=AGENT_NAME, outcomes=outcomes)
                ),
                keep,
            )
    trips = []
    with psycopg.connect(dbs.libpq_url(db), autocommit=True) as conn:
        for _ in range(reps):
            started = time.perf_counter()
            conn.execute("SELECT 1").fetchone()
            trips.append(time.perf_counter() - started)
    steps = {}
    for name in names:
        steps[name] = {
            **dist_ms(times[name]),
            "statements": statistics.median(x for x, _ in per_step[name]),
            "checkouts": statistics.median(y for _, y in per_step[name]),
        }
    return {"reps": reps, "batch": batch, "steps": steps, "select_1_round_trip": dist_ms(trips)}


def claim_path_of(
    build: str, admin_url: str, template: str, handler: str, reps: int, batch: int
) -> dict[str, Any]:
    """`claim_path` run by another build of blackboard (a folder holding its `blackboard` package, put
    first on a child's PYTHONPATH), on a clone of the same backlog: the statements per step before a
    change, beside this build's."""
    import json
    import os
    import sys

    from bench.fleet import base_env

    env = base_env()
    env["PYTHONPATH"] = os.pathsep.join((build, env["PYTHONPATH"]))
    args = json.dumps([admin_url, template, handler, reps, batch])
    done = subprocess.run(
        [sys.executable, "-m", "bench.postgres.steps", args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode:
        return {"failed": done.stderr[-2000:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _child(raw: str) -> None:
    import json

    from bench.common import temp_dir
    from bench.postgres.databases import Databases

    admin_url, template, handler, reps, batch = json.loads(raw)
    dbs = Databases(admin_url)
    try:
        with temp_dir("postgres-steps") as root:
            print(json.dumps(claim_path(dbs, root, template, handler, reps, batch)))
    finally:
        dbs.close()


def claim_tokens(command: Any, signal_ids: tuple[str, ...], token: str) -> dict[str, Any]:
    """How the build under test takes a batch claim's tokens, as its worker does: a token of its own for each
    claim (`tokens`), or, in a build from before that, one token for the worker's every claim (`token`)."""
    if "tokens" in command.model_fields:
        return {"tokens": {signal_id: f"{token}/{n}" for n, signal_id in enumerate(signal_ids)}}
    return {"token": token}


if __name__ == "__main__":
    import sys

    _child(sys.argv[1])
