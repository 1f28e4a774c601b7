"""(g) PostgreSQL: `blackboard worker` processes beside pgqueuer and procrastinate, and wake-up.

drain: for each system and each worker count k (1, 4), a fresh database is cloned from a template
that already holds the backlog, k worker processes are spawned on it, and the benchmark polls
(every 20 ms, one count query) until every item is done. All three get the same treatment:

- blackboard: the backlog is posted one signal at a time through BlackboardService on the SQL
  adapters (bench/common.py build_service), before any worker runs; the workers are real
  `blackboard worker --agent bench-noop --concurrency 128` processes, the agent file having
  capabilities {RESEARCH: 0.9} and, by default, `entrypoint:` a Python function that returns None
  (BENCH_PG_HANDLER=command: `command: "true"`, a process per signal). Done = the read model shows
  the signal COMPLETED.
- pgqueuer (asyncpg driver, as its README sets it up): schema by `pgq install`; the jobs are
  enqueued in one batch (`Queries.enqueue` with lists); each worker process calls
  `pgqueuer.run("bench.postgres:pgqueuer_factory")`, the function `pgq run` wraps, with its defaults
  (`pgq run` itself fails at start-up in 1.6.0 with typer 0.29); the entrypoint does nothing.
  Done = the job row is gone from `pgqueuer` (it is deleted once acknowledged).
- procrastinate (PsycopgConnector): schema by `procrastinate schema --apply`; the jobs are
  deferred in one batch (`batch_defer_async`); workers are `procrastinate --app
  bench.postgres.procrastinate_app worker` with its defaults (concurrency 1); the task does
  nothing. Done = status 'succeeded'.

Figures: total (spawn -> all done, start-up included), start-up (spawn -> the first completion the
poll sees), and the steady rate from that first completion to the last, which is the one compared.
The handler's own cost (a handler call as the worker makes it, on the bench agent, in this process) is reported
beside the rates.

wake-up: one idle `blackboard worker` (its defaults), signals posted one at a time through
BlackboardService 100 to 200 ms apart; the claim event's occurred_at minus the post event's, from
the event log.

Where the time goes: the worker's candidate query (read model `candidates`) is timed and EXPLAINed before and
after ANALYZE (the drains run after it: this server has autovacuum off, and without statistics the
plan can go quadratic), and one worker round is replayed step by step in this process with the
objects the worker's container builds, counting SQL statements and pool checkouts per step.

Every database is created fresh (CREATE DATABASE through an AUTOCOMMIT engine on BENCH_PG_URL's
database) and dropped WITH (FORCE) at the end, whatever happens; every worker is stopped (SIGTERM,
SIGKILL after a grace period) and asks the kernel to SIGTERM it should the benchmark die.

This module is also imported by the job-queue worker processes (`pgqueuer.run`, `procrastinate --app`),
so its top level imports nothing heavy: each import that the benchmark itself needs is local.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.common import Config

BIN = Path(sys.executable).parent
AGENT_NAME = "bench-noop"
AGENT_FILE = """---
name: {name}
description: Does nothing and succeeds at once (the PostgreSQL benchmark of `blackboard worker`).
capabilities: {{RESEARCH: 0.9}}
{handler}
timeout: 60
---
A no-op agent: its handler returns nothing, which completes the signal with no knowledge items.
"""
HANDLERS = {  # BENCH_PG_HANDLER -> the agent file's handler line
    "entrypoint": "entrypoint: bench_noop_handler:handle",  # a Python function in the worker, like the job queues' tasks
    "command": 'command: "true"',  # a process per signal (`sh -c true`)
}
HANDLER_MODULE = "def handle(document):\n    return None\n"
BOARD = "ps-pg-bench"
POST_TIMEOUT_S = 86_400  # nothing may expire during the run
POLL_S = 0.02
DSN_ENV = "BENCH_PG_JOBS_DSN"  # how the job-queue workers find their database (libpq URL)
PGQ_ENTRYPOINT = "bench_noop"
TARGET_VS_PGQUEUER = 1.0
TARGET_VS_PROCRASTINATE = 3.0
TARGET_WAKEUP_P99_MS = 5.0
SYSTEMS = ("blackboard", "pgqueuer", "procrastinate")

# name -> (full, small); each can be overridden by its own environment variable.
SIZES: dict[str, tuple[Any, Any]] = {
    "BENCH_PG_URL": ("postgresql+psycopg://postgres@127.0.0.1:5432/test",) * 2,  # where CREATE DATABASE runs
    "BENCH_PG_JOBS": (5000, 1000),  # drain: pgqueuer / procrastinate jobs in the backlog
    "BENCH_PG_SIGNALS": (5000, 1000),  # drain: blackboard signals in the backlog
    "BENCH_PG_HANDLER": ("entrypoint", "entrypoint"),  # drain: the no-op agent's handler, entrypoint or command
    "BENCH_PG_CONCURRENCY": (128, 128),  # drain: each blackboard worker's --concurrency (pgqueuer: no cap, batches of 10)
    "BENCH_PG_WORKERS": ("1,4", "1,4"),  # drain: worker processes per run
    "BENCH_PG_SYSTEMS": (",".join(SYSTEMS),) * 2,  # drain: which systems
    "BENCH_PG_WAKEUPS": (100, 30),  # wake-up: signals posted one at a time (0: skip)
    "BENCH_PG_WAKEUP_GAP_MS": ("100-200", "100-200"),  # wake-up: pause between two posts (uniform)
    "BENCH_PG_HANDLER_REPS": (200, 50),  # the handler's cost: handler calls timed in this process
    "BENCH_PG_STEP_REPS": (100, 30),  # claim path: worker rounds timed step by step in this process
    "BENCH_PG_ANALYZE": (1, 1),  # 1: ANALYZE each backlog before the workers start (what autovacuum would do); 0: not
}


def sizes(config: Config) -> dict[str, Any]:
    full = config.scale == "full"
    return {name: os.environ.get(name, str(pair[0] if full else pair[1])) for name, pair in SIZES.items()}


# ------------------------------------------------------------------ what the job-queue workers load
def _jobs_dsn() -> str:
    return os.environ[DSN_ENV]


@contextlib.asynccontextmanager
async def pgqueuer_factory() -> Any:
    """What a pgqueuer worker runs (`pgqueuer.run("bench.postgres:pgqueuer_factory")`): one asyncpg
    connection, one no-op entrypoint."""
    import asyncpg
    from pgqueuer import PgQueuer

    connection = await asyncpg.connect(_jobs_dsn())
    pgq = PgQueuer.from_asyncpg_connection(connection)

    @pgq.entrypoint(PGQ_ENTRYPOINT)
    async def noop(job: Any) -> None:
        return None

    try:
        yield pgq
    finally:
        await connection.close()


_procrastinate_app: Any = None


def _make_procrastinate_app(conninfo: str) -> Any:
    import procrastinate

    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo))

    @app.task(name="bench_noop", queue="bench")
    async def bench_noop() -> None:
        return None

    return app


def __getattr__(name: str) -> Any:
    """`procrastinate --app bench.postgres.procrastinate_app`: built on first use, from $BENCH_PG_JOBS_DSN."""
    global _procrastinate_app
    if name == "procrastinate_app":
        if _procrastinate_app is None:
            _procrastinate_app = _make_procrastinate_app(_jobs_dsn())
        return _procrastinate_app
    raise AttributeError(name)


# ----------------------------------------------------------------------------------- databases
class Databases:
    """Fresh databases with unique names; every one is dropped WITH (FORCE) on close."""

    def __init__(self, admin_url: str) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.engine import make_url

        self._admin_url = make_url(admin_url)
        self._admin = create_engine(self._admin_url, isolation_level="AUTOCOMMIT", pool_pre_ping=True)
        self._prefix = f"bench_pg_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        self.created: list[str] = []
        self.dropped: list[str] = []

    def create(self, label: str, template: str | None = None) -> str:
        from sqlalchemy import text

        name = f"{self._prefix}_{label}"
        clause = f' TEMPLATE "{template}"' if template else ""
        with self._admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"{clause}'))
        self.created.append(name)
        return name

    def sqlalchemy_url(self, name: str) -> str:
        return self._admin_url.set(database=name).render_as_string(hide_password=False)

    def libpq_url(self, name: str) -> str:
        return self._admin_url.set(drivername="postgresql", database=name).render_as_string(hide_password=False)

    def server_version(self) -> str:
        from sqlalchemy import text

        with self._admin.connect() as conn:
            return str(conn.execute(text("SHOW server_version")).scalar())

    def server_settings(self) -> dict[str, str]:
        from sqlalchemy import text

        names = ("autovacuum", "synchronous_commit", "fsync", "shared_buffers", "max_connections")
        with self._admin.connect() as conn:
            return {name: str(conn.execute(text(f"SHOW {name}")).scalar()) for name in names}

    def close(self) -> None:
        from sqlalchemy import text

        for name in reversed(self.created):
            if name in self.dropped:
                continue
            try:
                with self._admin.connect() as conn:
                    conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
                self.dropped.append(name)
            except Exception as exc:  # noqa: BLE001 - keep dropping the others, and say which one is left
                print(f"   !! could not drop database {name}: {exc}", file=sys.stderr, flush=True)
        self._admin.dispose()


# ----------------------------------------------------------------------------------- processes
@dataclass
class Proc:
    process: subprocess.Popen[bytes]
    log_path: Path
    log: IO[bytes]
    killed: bool = False

    def text(self) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")


@dataclass
class Fleet:
    """Worker processes of one run; `stop` always ends and reaps every one of them."""

    root: Path
    label: str
    env: dict[str, str]
    procs: list[Proc] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)  # what each process left, once stopped

    def spawn(self, command: Sequence[str], i: int) -> None:
        from bench.common import die_with_parent

        log_path = self.root / f"{self.label}-{i}.log"
        log = log_path.open("wb")
        process = subprocess.Popen(list(command), env=self.env, cwd=_REPO, stdin=subprocess.DEVNULL,
                                   stdout=log, stderr=log, preexec_fn=die_with_parent)
        self.procs.append(Proc(process, log_path, log))

    def check_alive(self) -> None:
        for p in self.procs:
            if p.process.poll() is not None:
                raise RuntimeError(f"{self.label}: worker {p.process.pid} exited ({p.process.returncode}) during the "
                                   f"run:\n{p.text()[-3000:]}")

    def cpu_seconds(self) -> float:
        """CPU used so far by the workers and the children they reaped (/proc/PID/stat)."""
        total = 0
        for p in self.procs:
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{p.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        return total / os.sysconf("SC_CLK_TCK")

    def stop(self) -> list[dict[str, Any]]:
        from bench.common import stop_processes

        stop_processes(self.procs)
        out = []
        for p in self.procs:
            text = p.text()
            p.log.close()
            out.append({"pid": p.process.pid, "exit_code": p.process.returncode, "killed": p.killed,
                        "tracebacks": text.count("Traceback")})
        return out


_REPO = Path(__file__).resolve().parent.parent  # the job-queue CLIs import bench.postgres from here


@contextlib.contextmanager
def fleet(root: Path, label: str, env: dict[str, str]) -> Iterator[Fleet]:
    running = Fleet(root, label, env)
    try:
        yield running
    finally:
        running.results = running.stop()


def _base_env() -> dict[str, str]:
    """The benchmark's environment without anything that would point a worker elsewhere."""
    drop = ("BLACKBOARD_", "PGQUEUER_", "PROCRASTINATE_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop) and not k.startswith("PG")}
    env["PYTHONPATH"] = os.pathsep.join(x for x in (str(_REPO), os.environ.get("PYTHONPATH", "")) if x)
    return env


# --------------------------------------------------------------------------------- the systems
class System:
    """How one system is set up, started, and asked how far it got."""

    name = ""
    unit = "jobs"

    def prepare(self, dbs: Databases, root: Path, n: int) -> str:
        """A template database holding the schema and a backlog of n items; its name."""
        raise NotImplementedError

    def command(self) -> list[str]:
        raise NotImplementedError

    def env(self, dbs: Databases, db: str, root: Path) -> dict[str, str]:
        return {**_base_env(), DSN_ENV: dbs.libpq_url(db)}

    progress_sql = ""  # one row: (done, went wrong)

    def analyse(self, dbs: Databases, db: str, n: int) -> dict[str, Any]:
        return {}

    def setup_note(self) -> str:
        return ""


def _run_cli(args: Sequence[str], env: dict[str, str]) -> None:
    done = subprocess.run(list(args), env=env, cwd=_REPO, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


class BlackboardSystem(System):
    name = "blackboard"
    unit = "signals"
    progress_sql = ("SELECT count(*) FILTER (WHERE status = 'COMPLETED'), "
                    "count(*) FILTER (WHERE status IN ('FAILED', 'EXPIRED', 'UNCLAIMED')) FROM blackboard_signals")

    def __init__(self, worker_args: Sequence[str] = ()) -> None:
        self.worker_args = list(worker_args)
        self.post_seconds = 0.0

    def prepare(self, dbs: Databases, root: Path, n: int) -> str:
        from bench.common import build_service
        from blackboard.infrastructure.persistence.engine import StoreSettings, make_engine
        from blackboard.infrastructure.persistence.schema import ensure_schema

        name = dbs.create(f"bb_template_{n}")
        engine = make_engine(StoreSettings(url=dbs.sqlalchemy_url(name)))
        try:
            ensure_schema(engine)
            service = build_service(engine)
            started = time.perf_counter()
            for i in range(n):
                service.post_signal(_post(i, "backlog"))
            self.post_seconds = time.perf_counter() - started
        finally:
            engine.dispose()
        return name

    def command(self) -> list[str]:
        return [str(BIN / "blackboard"), "worker", "--agent", AGENT_NAME, "--grace", "5", *self.worker_args]

    def env(self, dbs: Databases, db: str, root: Path) -> dict[str, str]:
        return {**_base_env(), "BLACKBOARD_DB": dbs.sqlalchemy_url(db), "BLACKBOARD_AGENTS_DIR": str(_agents_dir(root)),
                "BLACKBOARD_POST_TIMEOUT": str(POST_TIMEOUT_S), "BLACKBOARD_JSON": ""}

    def analyse(self, dbs: Databases, db: str, n: int) -> dict[str, Any]:
        """From the event log: claims per worker, and where a worker's time goes between two signals."""
        from bench.workers import step_times
        from blackboard.infrastructure.persistence.engine import StoreSettings, make_engine
        from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore

        engine = make_engine(StoreSettings(url=dbs.sqlalchemy_url(db)))
        try:
            records = SqlAlchemyEventStore(engine).read_all()
        finally:
            engine.dispose()
        claims = [r for r in records if r.event.event_type == "AgentSignalClaimed"]
        per_token: dict[str, int] = {}
        for r in claims:
            per_token[r.event.token] = per_token.get(r.event.token, 0) + 1
        claimed = {r.event.signal_id for r in claims}
        handle, between = step_times(records)
        return {
            "claims": len(claims),
            "claimed_twice": len(claims) - len(claimed),
            "completed_to_next_claim_mean_ms": _ms(statistics.fmean(between)) if between else None,
            # a worker that has just completed, and then sat idle past the notifier's 0.25 s wait
            "completed_to_next_claim_over_200ms": sum(1 for x in between if x > 0.2),
            "completions": sum(1 for r in records if r.event.event_type == "AgentSignalCompleted"),
            "claims_per_worker": sorted(per_token.values(), reverse=True),
            "claim_to_completed": _dist_ms(handle),
            "completed_to_next_claim": _dist_ms(between),
        }

    def setup_note(self) -> str:
        handler = HANDLERS[os.environ.get("BENCH_PG_HANDLER", "entrypoint")]
        return (f"`blackboard worker --agent bench-noop {' '.join(self.worker_args)}` ({handler}); "
                f"the backlog posted through BlackboardService ({self.post_seconds:.1f} s)")


class PgQueuerSystem(System):
    name = "pgqueuer"
    progress_sql = ("SELECT {n} - (SELECT count(*) FROM pgqueuer), "
                    "(SELECT count(*) FROM pgqueuer_log WHERE status IN ('exception', 'failed', 'canceled'))")

    def prepare(self, dbs: Databases, root: Path, n: int) -> str:
        import asyncio

        name = dbs.create(f"pgq_template_{n}")
        _run_cli([str(BIN / "pgq"), "install"], {**_base_env(), "PGDSN": dbs.libpq_url(name)})

        async def enqueue() -> None:
            import asyncpg
            from pgqueuer.db import AsyncpgDriver
            from pgqueuer.queries import Queries

            connection = await asyncpg.connect(dbs.libpq_url(name))
            try:
                await Queries(AsyncpgDriver(connection)).enqueue([PGQ_ENTRYPOINT] * n, [None] * n, [0] * n)
            finally:
                await connection.close()

        asyncio.run(enqueue())
        return name

    def command(self) -> list[str]:
        # `pgq run bench.postgres:pgqueuer_factory` is what the README says, but pgqueuer 1.6.0's CLI fails
        # before starting with typer 0.29 (setup_fancy_logger gets the --log-level string, not the enum):
        # this calls pgqueuer.run, the function `pgq run` wraps, with the same defaults.
        return [sys.executable, "-c",
                "import asyncio, pgqueuer; asyncio.run(pgqueuer.run('bench.postgres:pgqueuer_factory'))"]

    def analyse(self, dbs: Databases, db: str, n: int) -> dict[str, Any]:
        rows = _query(dbs.libpq_url(db), "SELECT status::text, count(*) FROM pgqueuer_log GROUP BY 1")
        return {"log_by_status": dict(rows)}

    def setup_note(self) -> str:
        return "pgqueuer.run, as `pgq run` (asyncpg, defaults: batch 10, no concurrency cap), async no-op entrypoint"


class ProcrastinateSystem(System):
    name = "procrastinate"
    progress_sql = ("SELECT count(*) FILTER (WHERE status = 'succeeded'), "
                    "count(*) FILTER (WHERE status IN ('failed', 'aborted', 'cancelled')) FROM procrastinate_jobs")

    def prepare(self, dbs: Databases, root: Path, n: int) -> str:
        import asyncio

        name = dbs.create(f"proc_template_{n}")
        env = {**_base_env(), DSN_ENV: dbs.libpq_url(name)}
        _run_cli([str(BIN / "procrastinate"), "--app", "bench.postgres.procrastinate_app", "schema", "--apply"], env)

        async def defer() -> None:
            app = _make_procrastinate_app(dbs.libpq_url(name))
            async with app.open_async():
                await app.tasks["bench_noop"].batch_defer_async(*({} for _ in range(n)))

        asyncio.run(defer())
        return name

    def command(self) -> list[str]:
        return [str(BIN / "procrastinate"), "--app", "bench.postgres.procrastinate_app", "worker"]

    def analyse(self, dbs: Databases, db: str, n: int) -> dict[str, Any]:
        rows = _query(dbs.libpq_url(db), "SELECT status::text, count(*) FROM procrastinate_jobs GROUP BY 1")
        return {"jobs_by_status": dict(rows)}

    def setup_note(self) -> str:
        return "procrastinate worker (PsycopgConnector, defaults: concurrency 1, LISTEN/NOTIFY), async no-op task"


def _query(url: str, sql: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return list(conn.execute(sql).fetchall())


def _post(i: int, what: str) -> Any:
    from blackboard.application.commands import PostSignal

    return PostSignal(signal_type="RESEARCH", ps_id=BOARD, entry_id=f"e-{i}", topic=f"{what} {i}",
                      prompt="nothing to do")


def _agents_dir(root: Path) -> Path:
    agents = root / "agents"
    if not agents.exists():
        agents.mkdir()
        kind = os.environ.get("BENCH_PG_HANDLER", "entrypoint")
        if kind not in HANDLERS:
            raise SystemExit(f"BENCH_PG_HANDLER must be one of {', '.join(HANDLERS)}, not {kind!r}")
        (agents / f"{AGENT_NAME}.md").write_text(AGENT_FILE.format(name=AGENT_NAME, handler=HANDLERS[kind]))
        (agents / "bench_noop_handler.py").write_text(HANDLER_MODULE)
    return agents


# ---------------------------------------------------------------------------------------- drain
def drain(system: System, dbs: Databases, root: Path, template: str, k: int, n: int) -> dict[str, Any]:
    import psycopg

    db = dbs.create(f"{system.name[:4]}_{k}w", template=template)
    sql = system.progress_sql.format(n=n)
    load = os.getloadavg()[0]
    samples: list[tuple[float, int]] = []
    with psycopg.connect(dbs.libpq_url(db), autocommit=True) as poll, \
            fleet(root, f"{system.name}-{k}w", system.env(dbs, db, root)) as running:
        spawned = time.monotonic()
        for i in range(k):
            running.spawn(system.command(), i)
        first: tuple[float, int, float, float | None] | None = None  # (time, done, cpu, server cpu) at the poll's first sight of work done
        deadline = spawned + 900
        while True:
            done, wrong = poll.execute(sql).fetchone()  # type: ignore[misc]
            now = time.monotonic()
            samples.append((now - spawned, done))
            if wrong:
                raise RuntimeError(f"{system.name}: {wrong} item(s) failed")
            if done and first is None:
                first = (now, done, running.cpu_seconds(), server_cpu_seconds())
            if done >= n:
                cpu_end, server_end = running.cpu_seconds(), server_cpu_seconds()
                break
            running.check_alive()
            if now > deadline:
                raise TimeoutError(f"{system.name} with {k} worker(s): {done}/{n} done after {now - spawned:.0f} s")
            time.sleep(POLL_S)
    assert first is not None
    db_stats = _database_stats(dbs, db, polls=len(samples))
    total = now - spawned
    steady_s = now - first[0]
    steady_n = n - first[1]
    result = {
        "system": system.name,
        "workers": k,
        "items": n,
        "total_s": round(total, 3),
        "overall_per_s": round(n / total, 1),
        "startup_s": round(first[0] - spawned, 3),
        "done_at_first_sight": first[1],
        "steady_s": round(steady_s, 3),
        "steady_per_s": round(steady_n / steady_s, 1) if steady_s > 0 else None,
        "cpu_s_workers": round(cpu_end, 2),
        "cpu_ms_per_item_steady": round((cpu_end - first[2]) * 1000 / steady_n, 3) if steady_n else None,
        "server_cpu_ms_per_item_steady": (round((server_end - first[3]) * 1000 / steady_n, 3)
                                          if steady_n and server_end is not None and first[3] is not None else None),
        "load_average_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
        "processes": running.results,
        "progress_every_second": _per_second(samples),
        "database_stats": db_stats,
        "transactions_per_item": round(db_stats["transactions_by_workers"] / n, 2),
    }
    result.update(system.analyse(dbs, db, n))
    return result


def server_cpu_seconds() -> float | None:
    """CPU used so far by the PostgreSQL server on this machine: every `postgres` process, and what the
    postmaster's reaped children (backends that have ended) used. None when none is visible (a remote
    server). It includes the benchmark's own polling backend, the same for every system."""
    total, seen = 0, False
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            head, _, rest = (entry / "stat").read_text().rpartition(")")
        except OSError:  # ended meanwhile
            continue
        if not head.endswith("(postgres"):
            continue
        seen = True
        total += sum(int(x) for x in rest.split()[11:15])  # utime stime cutime cstime
    return total / os.sysconf("SC_CLK_TCK") if seen else None


def _database_stats(dbs: Databases, db: str, polls: int) -> dict[str, Any]:
    """pg_stat_database for the run's database, read once every worker has exited (backends flush their
    counters as they end). A read through SQLAlchemy ends in a ROLLBACK, so it counts as a rollback."""
    import psycopg

    columns = ("xact_commit", "xact_rollback", "tup_returned", "tup_fetched", "tup_inserted", "tup_updated",
               "tup_deleted")
    with psycopg.connect(dbs.libpq_url(db), autocommit=True) as conn:
        deadline = time.monotonic() + 10
        others = "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()"
        while conn.execute(others, (db,)).fetchone()[0] and time.monotonic() < deadline:  # type: ignore[index]
            time.sleep(0.05)  # every other backend gone: their counters are flushed
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(f"SELECT {', '.join(columns)} FROM pg_stat_database WHERE datname = %s", (db,)).fetchone()
    stats = dict(zip(columns, (int(x) for x in row or (0,) * len(columns))))
    # the benchmark's own: one autocommit statement per poll, and the few reads after the run
    stats["transactions_by_workers"] = max(0, stats["xact_commit"] + stats["xact_rollback"] - polls)
    return stats


def _per_second(samples: Sequence[tuple[float, int]]) -> list[int]:
    """Items done at each whole second after spawning (a coarse timeline for the JSON)."""
    out, second = [], 1.0
    for t, done in samples:
        while t >= second:
            out.append(done)
            second += 1
    return out


# -------------------------------------------------------------------------------- handler cost
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


def handler_cost(root: Path, reps: int) -> dict[str, Any]:
    """A handler call as the worker makes it on the bench-noop agent, and a bare fork/exec of `true`."""
    import copy

    from blackboard.infrastructure.agents.parsing import read_agent_file

    agent = read_agent_file(_agents_dir(root) / f"{AGENT_NAME}.md")
    document = {"signal_id": "sig-bench0001", "blackboard_id": BOARD, "signal_type": "RESEARCH",
                "payload": {"ps_id": BOARD, "entry_id": "e-0", "topic": "handler cost", "prompt": "nothing to do",
                            "context": {}}}
    handler, bare = [], []
    for _ in range(reps):
        fresh = copy.deepcopy(document)
        t = time.perf_counter()
        outcome = worker_handler_call(agent, fresh)
        handler.append(time.perf_counter() - t)
        if not outcome.succeeded:
            raise RuntimeError(f"the no-op handler failed: {outcome.error}")
        t = time.perf_counter()
        subprocess.run(["true"], check=True)
        bare.append(time.perf_counter() - t)
    return {"reps": reps, "handler_call": _dist_ms(handler), "subprocess_true": _dist_ms(bare)}


# ------------------------------------------------------------------------------ the open-signals query
def open_signals_probe(dbs: Databases, db: str, reps: int = 3) -> dict[str, Any]:
    """The worker's candidate query (SqlSignalReadModel.candidates, as the worker asks it): its time
    through the adapter, and PostgreSQL's plan for the very statement it sent."""
    from sqlalchemy import event

    from blackboard.infrastructure.persistence.engine import StoreSettings, make_engine
    from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel

    engine = make_engine(StoreSettings(url=dbs.sqlalchemy_url(db)))
    sent: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        sent.append((statement, parameters))

    try:
        read_model = SqlSignalReadModel(engine)
        read_model.candidates(("RESEARCH",), 100)
        times = []
        for _ in range(reps):
            started = time.perf_counter()
            found = read_model.candidates(("RESEARCH",), 100)
            times.append(time.perf_counter() - started)
        event.listen(engine, "before_cursor_execute", capture)
        read_model.candidates(("RESEARCH",), 100)
        event.remove(engine, "before_cursor_execute", capture)
        statement, parameters = sent[-1]
        with engine.connect() as conn:
            plan = [row[0] for row in conn.exec_driver_sql("EXPLAIN (ANALYZE, COSTS OFF) " + statement, parameters)]
    finally:
        engine.dispose()
    execution = next((line for line in plan if line.startswith("Execution Time")), "")
    removed = [int(line.split(":")[1]) for line in plan if "Rows Removed by Join Filter" in line]
    return {
        "rows_returned": len(found),
        "find": _dist_ms(times),
        "execution_ms": float(execution.split(":")[1].split()[0]) if execution else None,
        "rows_removed_by_join_filter": sum(removed),
        "plan": plan,
    }


def _analyze(dbs: Databases, db: str) -> float:
    started = time.perf_counter()
    import psycopg

    with psycopg.connect(dbs.libpq_url(db), autocommit=True) as conn:
        conn.execute("ANALYZE")
    return round(time.perf_counter() - started, 3)


# ------------------------------------------------------------------------------------ claim path
def claim_path(dbs: Databases, root: Path, template: str, reps: int, batch: int) -> dict[str, Any]:
    """What one worker round costs, step by step, in this process on a copy of the backlog: the same
    objects the worker's container builds (make_engine with its defaults), the same calls in the same
    order, for a worker with `batch` free slots; SQL statements and pool checkouts counted per step."""
    from datetime import timedelta

    import psycopg
    from sqlalchemy import event

    from blackboard.application.commands import ClaimSignals, CompleteSignal, GetOpenSignals, RecordOutcomes
    from blackboard.application.dispatcher import EventDispatcher
    from blackboard.application.queries import BlackboardQueries
    from blackboard.application.service import BlackboardService, Settings
    from blackboard.infrastructure.agents.parsing import read_agent_file
    from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry
    from blackboard.infrastructure.clock import RandomSignalIds, SystemClock
    from blackboard.infrastructure.persistence.engine import StoreSettings, make_engine
    from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
    from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel
    from blackboard.infrastructure.persistence.snapshots import SqlSnapshotStore

    db = dbs.create("bb_steps", template=template)
    engine = make_engine(StoreSettings(url=dbs.sqlalchemy_url(db)))
    counted = {"statements": 0, "checkouts": 0}

    def statement(*_: Any) -> None:
        counted["statements"] += 1

    def checkout(*_: Any) -> None:
        counted["checkouts"] += 1

    event.listen(engine, "before_cursor_execute", statement)
    event.listen(engine, "checkout", checkout)
    agents = _agents_dir(root)
    agent = read_agent_file(agents / f"{AGENT_NAME}.md")
    registry = FrontmatterAgentRegistry(agents)
    store, read_model = SqlAlchemyEventStore(engine), SqlSignalReadModel(engine)
    settings = Settings(post_timeout=timedelta(seconds=POST_TIMEOUT_S))
    service = BlackboardService(store, read_model, registry, EventDispatcher(), SystemClock(), RandomSignalIds(),
                                settings, SqlSnapshotStore(engine))
    queries = BlackboardQueries(store, read_model, registry, settings.claim_threshold)
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
            per_step[name].append((counted["statements"] - before["statements"], counted["checkouts"] - before["checkouts"]))
        return out

    try:
        for i in range(reps + 3):  # three rounds first, untimed: statement caches, the board's first load
            keep = i >= 3
            timed("last_position", store.last_position, keep)
            found = timed("candidates", lambda: queries.open_candidates(  # as the worker asks
                GetOpenSignals(capabilities=("RESEARCH",), limit=max(8, 2 * batch), catch_up=False)), keep)
            board = found[0].blackboard_id
            claims = timed("claim_signals", lambda: service.claim_signals(ClaimSignals(
                blackboard_id=board, signal_ids=tuple(f.signal_id for f in found), agent_id=AGENT_NAME,
                token=token, limit=batch)), keep)
            timed("handlers", lambda: [worker_handler_call(agent, c.to_document()) for c in claims.claimed], keep)
            outcomes = tuple(CompleteSignal(signal_id=c.signal_id, agent_id=AGENT_NAME, token=token, blackboard_id=board)
                             for c in claims.claimed)
            timed("record_outcomes", lambda: service.record_outcomes(
                RecordOutcomes(blackboard_id=board, agent_id=AGENT_NAME, outcomes=outcomes)), keep)
    finally:
        engine.dispose()
    trips = []
    with psycopg.connect(dbs.libpq_url(db), autocommit=True) as conn:
        for _ in range(reps):
            started = time.perf_counter()
            conn.execute("SELECT 1").fetchone()
            trips.append(time.perf_counter() - started)
    steps = {}
    for name in names:
        steps[name] = {**_dist_ms(times[name]), "statements": statistics.median(x for x, _ in per_step[name]),
                       "checkouts": statistics.median(y for _, y in per_step[name])}
    return {"reps": reps, "batch": batch, "steps": steps, "select_1_round_trip": _dist_ms(trips)}


# --------------------------------------------------------------------------------------- wake-up
def wakeup(dbs: Databases, root: Path, template: str, label: str, worker_args: Sequence[str], n: int,
           gap: tuple[float, float]) -> dict[str, Any]:
    from bench.common import build_service
    from blackboard.infrastructure.persistence.engine import StoreSettings, make_engine
    from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore

    system = BlackboardSystem(worker_args)
    db = dbs.create(f"wake_{label}", template=template)
    engine = make_engine(StoreSettings(url=dbs.sqlalchemy_url(db)))
    rng = random.Random(n)
    posted: list[str] = []
    post_calls: list[float] = []
    load = os.getloadavg()[0]
    try:
        service = build_service(engine)
        with fleet(root, f"wakeup-{label}", system.env(dbs, db, root)) as running:
            running.spawn(system.command(), 0)
            deadline = time.monotonic() + 60
            while " started (token " not in running.procs[0].text():
                running.check_alive()
                if time.monotonic() > deadline:
                    raise TimeoutError("the wake-up worker did not start within 60 s")
                time.sleep(0.02)
            time.sleep(0.5)  # past its first round: idle, listening
            for i in range(n):
                started = time.perf_counter()
                posted.append(service.post_signal(_post(i, "wake-up")).signal_id)
                post_calls.append(time.perf_counter() - started)
                time.sleep(rng.uniform(*gap))
                if i % 20 == 0:
                    running.check_alive()
            import psycopg

            with psycopg.connect(dbs.libpq_url(db), autocommit=True) as poll:
                deadline = time.monotonic() + 60
                while True:
                    done, wrong = poll.execute(system.progress_sql).fetchone()  # type: ignore[misc]
                    if done >= n or wrong:
                        break
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"wake-up {label}: {done}/{n} completed after 60 s")
                    time.sleep(POLL_S)
        records = SqlAlchemyEventStore(engine).read_all()
    finally:
        engine.dispose()
    posts = {r.event.signal_id: r for r in records if r.event.event_type == "AgentSignalPosted"}
    claims = {r.event.signal_id: r for r in records if r.event.event_type == "AgentSignalClaimed"}
    latency, to_append, after_append = [], [], []
    for sid in posted:
        p, c = posts[sid], claims[sid]
        latency.append((c.event.occurred_at - p.event.occurred_at).total_seconds())
        to_append.append((p.recorded_at - p.event.occurred_at).total_seconds())
        after_append.append((c.event.occurred_at - p.recorded_at).total_seconds())
    return {
        "variant": label,
        "worker_args": list(worker_args),
        "signals": n,
        "claims": len(claims),
        "post_to_claim": _dist_ms(latency),
        "post_decided_to_append_start": _dist_ms(to_append),
        "post_append_start_to_claim": _dist_ms(after_append),
        "post_signal_call": _dist_ms(post_calls),  # the poster's whole call: decide, append and commit, catch up
        "load_average_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
        "processes": running.results,
    }


def _empty_template(dbs: Databases) -> str:
    from blackboard.infrastructure.persistence.engine import StoreSettings, make_engine
    from blackboard.infrastructure.persistence.schema import ensure_schema

    name = dbs.create("bb_template_empty")
    engine = make_engine(StoreSettings(url=dbs.sqlalchemy_url(name)))
    try:
        ensure_schema(engine)
    finally:
        engine.dispose()
    return name


# ----------------------------------------------------------------------------------------- helpers
def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def _dist_ms(samples: Sequence[float]) -> dict[str, float]:
    from bench.common import percentile

    if not samples:
        return {"n": 0}
    return {"n": len(samples), "p50_ms": _ms(statistics.median(samples)), "mean_ms": _ms(statistics.fmean(samples)),
            "p90_ms": _ms(percentile(samples, 90)), "p99_ms": _ms(percentile(samples, 99)), "max_ms": _ms(max(samples)),
            "min_ms": _ms(min(samples))}


def _versions() -> dict[str, str | None]:
    from importlib.metadata import version

    out: dict[str, str | None] = {}
    for dist in ("pgqueuer", "procrastinate", "asyncpg", "psycopg", "psycopg-pool"):
        try:
            out[dist] = version(dist)
        except Exception:  # noqa: BLE001
            out[dist] = None
    return out


# --------------------------------------------------------------------------------------------- run
class Terminated(Exception):
    """SIGTERM (or SIGHUP) while the section runs: raised so that workers are stopped and databases dropped."""


def run(config: Config) -> dict[str, Any]:
    """Section (g); SIGTERM and SIGHUP become an exception meanwhile, so the clean-up runs whatever happens
    (a background job started by a non-interactive shell ignores SIGINT, so SIGTERM is how it gets stopped)."""

    def terminate(signum: int, _frame: Any) -> None:
        raise Terminated(f"signal {signum}")

    previous = {sig: signal.signal(sig, terminate) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return _run(config)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run(config: Config) -> dict[str, Any]:
    from bench.common import progress, temp_dir

    s = sizes(config)
    jobs, signals = int(s["BENCH_PG_JOBS"]), int(s["BENCH_PG_SIGNALS"])
    counts = [int(x) for x in s["BENCH_PG_WORKERS"].split(",") if x.strip()]
    wanted = [x.strip() for x in s["BENCH_PG_SYSTEMS"].split(",") if x.strip()]
    wakeups = int(s["BENCH_PG_WAKEUPS"])
    low, _, high = s["BENCH_PG_WAKEUP_GAP_MS"].partition("-")
    gap = (float(low) / 1000, float(high or low) / 1000)
    os.environ["BENCH_PG_HANDLER"] = s["BENCH_PG_HANDLER"]  # _agents_dir reads it
    concurrency = ["--concurrency", str(s["BENCH_PG_CONCURRENCY"])]
    systems: dict[str, System] = {"blackboard": BlackboardSystem(concurrency), "pgqueuer": PgQueuerSystem(),
                                  "procrastinate": ProcrastinateSystem()}
    unknown = set(wanted) - set(systems)
    if unknown:
        raise SystemExit(f"BENCH_PG_SYSTEMS: unknown {', '.join(sorted(unknown))}; pick from {', '.join(SYSTEMS)}")
    result: dict[str, Any] = {"sizes": s, "versions": _versions(), "drain": {}, "wakeup": {},
                              "load_average_at_start": os.getloadavg()}
    dbs = Databases(s["BENCH_PG_URL"])
    try:
        result["postgresql"] = dbs.server_version()
    except Exception as exc:  # noqa: BLE001 - no server: skip, unless this section was asked for by name
        dbs.close()
        if "g" in [x.strip() for x in os.environ.get("BENCH_SECTIONS", "").split(",")]:
            raise
        where = s["BENCH_PG_URL"].rsplit("@", 1)[-1]
        return {"skipped": f"no PostgreSQL at {where}: {type(exc).__name__}; set BENCH_PG_URL", "sizes": s}
    try:
        result["server_settings"] = dbs.server_settings()
        with temp_dir("postgres") as root:
            _agents_dir(root)
            result["handler_cost"] = handler_cost(root, int(s["BENCH_PG_HANDLER_REPS"]))
            for name in wanted:
                system = systems[name]
                n = signals if name == "blackboard" else jobs
                progress(f"(g) {name}: preparing a backlog of {n:,} {system.unit}")
                started = time.perf_counter()
                template = system.prepare(dbs, root, n)
                result.setdefault("prepare_s", {})[name] = round(time.perf_counter() - started, 2)
                if name == "blackboard":
                    result.setdefault("open_signals_query", {})["no_statistics"] = open_signals_probe(dbs, template)
                if int(s["BENCH_PG_ANALYZE"]):
                    result.setdefault("analyze_s", {})[name] = _analyze(dbs, template)
                    if name == "blackboard":
                        result["open_signals_query"]["analyzed"] = open_signals_probe(dbs, template)
                result.setdefault("setup", {})[name] = system.setup_note()
                if name == "blackboard" and int(s["BENCH_PG_STEP_REPS"]):
                    progress("(g) blackboard: one worker round, step by step, in this process")
                    batch = int(s["BENCH_PG_CONCURRENCY"])
                    result["claim_path"] = claim_path(dbs, root, template, min(int(s["BENCH_PG_STEP_REPS"]), n // batch - 3), batch)
                for k in counts:
                    progress(f"(g) {name}: draining {n:,} {system.unit} with {k} worker process(es)")
                    r = drain(system, dbs, root, template, k, n)
                    result["drain"][f"{name}/{k}"] = r
                    progress(f"(g)   {r['steady_per_s']} {system.unit}/s steady, {r['total_s']} s in all")
            if isinstance(systems["blackboard"], BlackboardSystem) and "blackboard" in wanted:
                result["blackboard_post_s"] = round(systems["blackboard"].post_seconds, 2)
            if wakeups:
                empty = _empty_template(dbs)
                progress(f"(g) wake-up: {wakeups} signals posted one at a time, one idle worker")
                result["wakeup"]["defaults"] = wakeup(dbs, root, empty, "defaults", [], wakeups, gap)
    finally:
        dbs.close()
        result["databases_created"] = len(dbs.created)
        result["databases_dropped"] = len(dbs.dropped)
    result["ratios"] = _ratios(result["drain"], counts)
    result["load_average_at_end"] = os.getloadavg()
    return result


def _ratios(drain_results: dict[str, Any], counts: Sequence[int]) -> dict[str, float]:
    """blackboard's steady rate over each job queue's, per worker count."""
    out = {}
    for k in counts:
        ours = drain_results.get(f"blackboard/{k}")
        for other in ("pgqueuer", "procrastinate"):
            theirs = drain_results.get(f"{other}/{k}")
            if ours and theirs and ours["steady_per_s"] and theirs["steady_per_s"]:
                out[f"blackboard/{other}@{k}"] = round(ours["steady_per_s"] / theirs["steady_per_s"], 4)
    return out


# -------------------------------------------------------------------------------------- printing
def print_report(pg: dict[str, Any]) -> list[dict[str, Any]]:
    """The tables of section (g), and its targets for the summary."""
    from bench.common import say, table, verdict

    if "skipped" in pg:
        say(f"\n== (g) PostgreSQL: skipped ({pg['skipped']})")
        return []
    v = pg["versions"]
    handler = pg["handler_cost"].get("handler_call") or pg["handler_cost"].get("run_handler", {})
    handler_mean_s = handler.get("mean_ms", 0.0) / 1000  # BENCH_PG_HANDLER_REPS=0: not measured
    rows = []
    for key, d in pg["drain"].items():
        system, k = d["system"], d["workers"]
        excluded = ""
        if system == "blackboard" and d["steady_per_s"] and handler_mean_s:
            per_signal = k / d["steady_per_s"]  # seconds of one worker per signal
            excluded = round(k / max(per_signal - handler_mean_s, 1e-6), 1)
        spread = "/".join(str(c) for c in d.get("claims_per_worker", [])) or "-"
        rows.append([system, k, d["items"], d["total_s"], d["startup_s"], d["steady_per_s"], d["overall_per_s"],
                     excluded or "-", d["cpu_ms_per_item_steady"], d.get("server_cpu_ms_per_item_steady") or "-",
                     d.get("transactions_per_item", "-"), spread,
                     d["load_average_1min"][1]])
    if rows:
        say(table(f"(g) drain on PostgreSQL {pg['postgresql']}: k worker processes, backlog in place before they start",
                  ["system", "workers", "items", "total s", "start-up s", "steady/s", "overall/s", "bb excl. handler/s",
                   "cpu ms/item", "server cpu ms/item", "xacts/item", "claims per worker", "load"], rows,
                  "    total: spawning the workers until the poll (every 20 ms) sees everything done.  start-up: until it\n"
                  "    first sees one item done.  steady: items/s from then on; the compared figure.  cpu: the workers'\n"
                  "    own, and their children's (blackboard's handlers), per item in the steady part.  server cpu: the\n"
                  "    PostgreSQL server's processes (on this machine), per item in the steady part.  xacts: the\n"
                  "    database's commits and rollbacks (pg_stat_database) per item, the benchmark's own polls taken off.\n"
                  + "".join(f"    {name}{' ' + v[name] if v.get(name) else ''}: {note}.\n" for name, note in pg.get("setup", {}).items())
                  + f"    blackboard's handler: {HANDLERS[pg['sizes'].get('BENCH_PG_HANDLER', 'entrypoint')]}; "
                  + (f"a handler call as the worker makes it, measured in this process: p50 {handler['p50_ms']} ms, mean "
                     f"{handler['mean_ms']} ms, p90 {handler['p90_ms']} ms (a bare subprocess.run(['true']): "
                     f"p50 {pg['handler_cost']['subprocess_true'].get('p50_ms')} ms).\n" if handler.get("n")
                     else "the handler call not measured (BENCH_PG_HANDLER_REPS=0).\n")
                  + "    bb excl. handler: the steady rate with that mean taken off each signal's worker time; an estimate, "
                  "not compared."))
    for key, d in pg["drain"].items():
        if d["system"] == "blackboard":
            say(f"    blackboard, {d['workers']} worker(s), from the event log: claim -> completed p50 "
                f"{d['claim_to_completed'].get('p50_ms')} ms; completed -> the same worker's next claim p50 "
                f"{d['completed_to_next_claim'].get('p50_ms')} ms, mean {d.get('completed_to_next_claim_mean_ms')} ms, "
                f"{d.get('completed_to_next_claim_over_200ms')} of {d['completed_to_next_claim'].get('n')} over 200 ms; "
                f"claimed twice: {d.get('claimed_twice')}")
    targets = []
    ratios = pg["ratios"]
    for other, goal in (("pgqueuer", TARGET_VS_PGQUEUER), ("procrastinate", TARGET_VS_PROCRASTINATE)):
        ratio = ratios.get(f"blackboard/{other}@4")
        if ratio is None:
            continue
        ok = ratio >= goal
        say(f"    blackboard / {other}, steady rate, 4 workers: {ratio}x (target >= {goal:g}x): {verdict(ok)}")
        targets.append({"name": f"(g) PostgreSQL drain, 4 workers: blackboard / {other}", "measured": f"{ratio:.4f}",
                        "target": f">= {goal:g}", "verdict": verdict(ok)})
    for key, ratio in ratios.items():
        if not key.endswith("@4"):
            say(f"    (info) {key.replace('@', ', workers: ')}: {ratio}x")
    if "open_signals_query" in pg:
        rows = []
        for state, q in pg["open_signals_query"].items():
            join = next((line.strip().lstrip("-> ").split(" (")[0] for line in q["plan"]
                         if "Join" in line or "Nested Loop" in line), "-")
            rows.append([state.replace("_", " "), q["rows_returned"], q["find"]["p50_ms"], q["execution_ms"],
                         q["rows_removed_by_join_filter"], join])
        say(table(f"(g) the worker's candidate query (candidates, limit 100) on the {pg['sizes']['BENCH_PG_SIGNALS']}-signal "
                  f"backlog, before and after ANALYZE (this server: autovacuum={pg['server_settings']['autovacuum']})",
                  ["statistics", "rows", "find p50 ms", "PG execution ms", "rows removed by join filter", "join"], rows,
                  "    find: SqlSignalReadModel.candidates through the adapter (SQL, then a Candidate per row);\n"
                  "    PG execution: EXPLAIN ANALYZE of the statement it sent.  The drains run after ANALYZE unless "
                  "BENCH_PG_ANALYZE=0."))
    if "claim_path" in pg:
        cp = pg["claim_path"]
        rows = [[name, st["p50_ms"], st["mean_ms"], st["p90_ms"], st["statements"], st["checkouts"]]
                for name, st in cp["steps"].items()]
        say(table(f"(g) one worker round on the blackboard backlog, step by step in this process ({cp['reps']} rounds "
                  f"of {cp.get('batch', 1)} signals)",
                  ["step", "p50 ms", "mean ms", "p90 ms", "SQL statements", "pool checkouts"], rows,
                  "    the worker's calls in its order, for a worker with that many free slots: last_position,\n"
                  "    candidates (2 per slot, as the worker reads them), claim_signals (one command, the board held), a handler call\n"
                  "    for each, record_outcomes (one command); no head start to pay (no other agent fits better).\n"
                  f"    A bare SELECT 1 round trip: p50 {cp['select_1_round_trip']['p50_ms']} ms."))
    rows = []
    for label, w in pg["wakeup"].items():
        lat = w["post_to_claim"]
        judged = label == "defaults"
        ok = lat["p99_ms"] <= TARGET_WAKEUP_P99_MS
        rows.append([label, w["signals"], lat["p50_ms"], lat["p90_ms"], lat["p99_ms"], lat["max_ms"],
                     w["post_decided_to_append_start"]["p50_ms"], w["post_signal_call"]["p50_ms"],
                     w["post_append_start_to_claim"]["p50_ms"], verdict(ok) if judged else "(info)"])
        if judged:
            targets.append({"name": "(g) PostgreSQL wake-up post -> claim p99 ms, 1 idle worker",
                            "measured": lat["p99_ms"], "target": f"<= {TARGET_WAKEUP_P99_MS:g}", "verdict": verdict(ok)})
    if rows:
        say(table(f"(g) wake-up on PostgreSQL: one idle worker, signals posted one at a time "
                  f"({pg['sizes']['BENCH_PG_WAKEUP_GAP_MS']} ms apart) through BlackboardService; ms from the post "
                  "event's occurred_at to the claim event's",
                  ["worker", "signals", "p50", "p90", "p99", "max", "post>append", "post call", "append>claim",
                   f"p99<={TARGET_WAKEUP_P99_MS:g}"], rows,
                  "    defaults: `blackboard worker --agent bench-noop`, the only agent, so no head start to wait.\n"
                  "    post>append: the poster's decide-to-append step;\n"
                  "    post call: the poster's whole post_signal (decide, append, commit, catch up); append>claim: from the\n"
                  "    post's append starting to the worker's claim decision (all three medians)."))
    return targets
