"""pgqueuer, a peer of section (g): its worker's factory, and how its backlog and workers are set up.

As its README sets it up (asyncpg driver): schema by `pgq install`; the jobs enqueued in one batch
(`Queries.enqueue` with lists); each worker process calls `pgqueuer.run(FACTORY)`, the function
`pgq run` wraps, with its defaults (batch 10, no concurrency cap); the entrypoint does nothing.
Done = the job row is gone from `pgqueuer` (it is deleted once acknowledged).

The worker processes import this module: nothing heavy at the top.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.fleet import BIN, base_env
from bench.postgres.systems import DSN_ENV, System, run_cli

if TYPE_CHECKING:
    from bench.postgres.databases import Databases

ENTRYPOINT = "bench_noop"
FACTORY = "bench.postgres.pgqueuer_peer:factory"


@contextlib.asynccontextmanager
async def factory() -> Any:
    """What a pgqueuer worker runs: one asyncpg connection to $BENCH_PG_JOBS_DSN, one no-op entrypoint."""
    import asyncpg
    from pgqueuer import PgQueuer

    connection = await asyncpg.connect(os.environ[DSN_ENV])
    pgq = PgQueuer.from_asyncpg_connection(connection)

    @pgq.entrypoint(ENTRYPOINT)
    async def noop(job: Any) -> None:
        return None

    try:
        yield pgq
    finally:
        await connection.close()


class PgQueuerSystem(System):
    name = "pgqueuer"
    progress_sql = (
        "SELECT {n} - (SELECT count(*) FROM pgqueuer), "
        "(SELECT count(*) FROM pgqueuer_log WHERE status IN ('exception', 'failed', 'canceled'))"
    )

    def prepare(self, dbs: Databases, root: Path, n: int) -> str:
        import asyncio

        name = dbs.create(f"pgq_template_{n}")
        run_cli([str(BIN / "pgq"), "install"], {**base_env(), "PGDSN": dbs.libpq_url(name)})

        async def enqueue() -> None:
            import asyncpg
            from pgqueuer.db import AsyncpgDriver
            from pgqueuer.queries import Queries

            connection = await asyncpg.connect(dbs.libpq_url(name))
            try:
                await Queries(AsyncpgDriver(connection)).enqueue([ENTRYPOINT] * n, [None] * n, [0] * n)
            finally:
                await connection.close()

        asyncio.run(enqueue())
        return name

    def command(self) -> list[str]:
        # `pgq run bench.postgres.pgqueuer_peer:factory` is what the README says, but pgqueuer 1.6.0's CLI fails
        # before starting with typer 0.29 (setup_fancy_logger gets the --log-level string, not the enum):
        # this calls pgqueuer.run, the function `pgq run` wraps, with the same defaults.
        return [sys.executable, "-c", f"import asyncio, pgqueuer; asyncio.run(pgqueuer.run({FACTORY!r}))"]

    def analyse(self, dbs: Databases, db: str, n: int) -> dict[str, Any]:
        from bench.postgres.databases import query

        rows = query(dbs.libpq_url(db), "SELECT status::text, count(*) FROM pgqueuer_log GROUP BY 1")
        return {"log_by_status": dict(rows)}

    def setup_note(self) -> str:
        return "pgqueuer.run, as `pgq run` (asyncpg, defaults: batch 10, no concurrency cap), async no-op entrypoint"
