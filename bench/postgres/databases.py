"""Fresh databases for section (g): unique names, cloned from templates, every one dropped WITH (FORCE).

`CREATE DATABASE` runs through an AUTOCOMMIT engine on BENCH_PG_URL's database; nothing is written
there. Each system's backlog is made once, in a template, and each run clones it (`CREATE DATABASE
... TEMPLATE ...`), so every run starts from the same state.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from typing import Any


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
        return self._admin_url.set(drivername="postgresql", database=name).render_as_string(
            hide_password=False
        )

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


def server_version_or_skip(dbs: Databases, section: str, sizes: dict[str, Any]) -> str | dict[str, Any]:
    """The server's version, or, when no server answers at BENCH_PG_URL, the section's result saying it was
    skipped (`dbs` closed). Unless BENCH_SECTIONS names the section: asked for, it raises instead."""
    try:
        return dbs.server_version()
    except Exception as exc:
        dbs.close()
        if section in [x.strip() for x in os.environ.get("BENCH_SECTIONS", "").split(",")]:
            raise
        where = sizes["BENCH_PG_URL"].rsplit("@", 1)[-1]
        return {
            "skipped": f"no PostgreSQL at {where}: {type(exc).__name__}; set BENCH_PG_URL",
            "sizes": sizes,
        }


def query(url: str, sql: str) -> list[tuple[Any, ...]]:
    """One statement in autocommit on a libpq URL; its rows."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return list(conn.execute(sql).fetchall())


def analyze(dbs: Databases, db: str) -> float:
    """ANALYZE the database (what autovacuum would do; this server may have it off); seconds taken."""
    import psycopg

    started = time.perf_counter()
    with psycopg.connect(dbs.libpq_url(db), autocommit=True) as conn:
        conn.execute("ANALYZE")
    return round(time.perf_counter() - started, 3)
