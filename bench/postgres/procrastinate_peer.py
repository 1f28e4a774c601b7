"""procrastinate, a peer of section (g): its worker's app, and how its backlog and workers are set up.

PsycopgConnector; schema by `procrastinate schema --apply`; the jobs deferred in one batch
(`batch_defer_async`); workers are `procrastinate --app bench.postgres.procrastinate_peer.app worker`
with its defaults (concurrency 1, LISTEN/NOTIFY); the task does nothing. Done = status 'succeeded'.

The worker processes import this module (`app` is built on first use, from $BENCH_PG_JOBS_DSN):
nothing heavy at the top.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.fleet import BIN, base_env
from bench.postgres.systems import DSN_ENV, System, run_cli

if TYPE_CHECKING:
    from bench.postgres.databases import Databases

APP = "bench.postgres.procrastinate_peer.app"
_app: Any = None


def make_app(conninfo: str) -> Any:
    import procrastinate

    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo))

    @app.task(name="bench_noop", queue="bench")
    async def bench_noop() -> None:
        return None

    return app


def __getattr__(name: str) -> Any:
    """`procrastinate --app bench.postgres.procrastinate_peer.app`: built on first use, from $BENCH_PG_JOBS_DSN."""
    global _app
    if name == "app":
        if _app is None:
            _app = make_app(os.environ[DSN_ENV])
        return _app
    raise AttributeError(name)


class ProcrastinateSystem(System):
    name = "procrastinate"
    progress_sql = (
        "SELECT count(*) FILTER (WHERE status = 'succeeded'), "
        "count(*) FILTER (WHERE status IN ('failed', 'aborted', 'cancelled')) FROM procrastinate_jobs"
    )

    def prepare(self, dbs: Databases, root: Path, n: int) -> str:
        import asyncio

        name = dbs.create(f"proc_template_{n}")
        run_cli(
            [str(BIN / "procrastinate"), "--app", APP, "schema", "--apply"],
            {**base_env(), DSN_ENV: dbs.libpq_url(name)},
        )

        async def defer() -> None:
            app = make_app(dbs.libpq_url(name))
            async with app.open_async():
                await app.tasks["bench_noop"].batch_defer_async(*({} for _ in range(n)))

        asyncio.run(defer())
        return name

    def command(self) -> list[str]:
        return [str(BIN / "procrastinate"), "--app", APP, "worker"]

    def analyse(self, dbs: Databases, db: str, n: int) -> dict[str, Any]:
        from bench.postgres.databases import query

        rows = query(dbs.libpq_url(db), "SELECT status::text, count(*) FROM procrastinate_jobs GROUP BY 1")
        return {"jobs_by_status": dict(rows)}

    def setup_note(self) -> str:
        return "procrastinate worker (PsycopgConnector, defaults: concurrency 1, LISTEN/NOTIFY), async no-op task"
