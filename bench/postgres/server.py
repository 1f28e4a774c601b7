"""What a drain costs the PostgreSQL server: its processes' CPU, and the run database's pg_stat_database.

Server CPU is read from /proc for every `postgres` process on this machine, with the backends that
ended during the run counted through the postmaster's reaped-children time; it includes the
benchmark's own polling backend (the same for every system) and is None for a server on another
machine. The transactions are the run database's commits plus rollbacks, read once every worker has
gone (backends flush their counters as they end), the benchmark's own polls taken off.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.postgres.databases import Databases


def server_cpu_seconds() -> float | None:
    """CPU used so far by the PostgreSQL server on this machine: every `postgres` process, and what the
    postmaster's reaped children (backends that have ended) used. None when none is visible."""
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


def backends_cpu_seconds(conn: Any, db: str) -> float | None:
    """CPU used so far by the backends connected to `db` but `conn`'s own (the benchmark's poll): the
    workers' (pg_stat_activity's pids, read from /proc; a backend that ended meanwhile is no longer
    counted: the workers keep theirs for the whole drain). `conn`: an autocommit psycopg connection.
    None when none is visible on this machine."""
    pids = [
        row[0]
        for row in conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (db,)
        )
    ]
    total, seen = 0, False
    for pid in pids:
        try:
            _, _, rest = (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")
        except OSError:
            continue
        seen = True
        total += sum(int(x) for x in rest.split()[11:13])  # utime stime
    return total / os.sysconf("SC_CLK_TCK") if seen else None


def database_stats(dbs: Databases, db: str, polls: int) -> dict[str, Any]:
    """pg_stat_database for the run's database, read once every worker has exited. A read through
    SQLAlchemy ends in a ROLLBACK, so it counts as a rollback."""
    import psycopg

    columns = (
        "xact_commit",
        "xact_rollback",
        "tup_returned",
        "tup_fetched",
        "tup_inserted",
        "tup_updated",
        "tup_deleted",
    )
    with psycopg.connect(dbs.libpq_url(db), autocommit=True) as conn:
        deadline = time.monotonic() + 10
        others = "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()"
        while conn.execute(others, (db,)).fetchone()[0] and time.monotonic() < deadline:  # type: ignore[index]
            time.sleep(0.05)  # every other backend gone: their counters are flushed
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            f"SELECT {', '.join(columns)} FROM pg_stat_database WHERE datname = %s", (db,)
        ).fetchone()
        # where the rows read came from: per table, sequential scans and the rows they read, index reads
        tables = conn.execute(
            "SELECT relname, seq_scan, seq_tup_read, idx_scan, idx_tup_fetch FROM pg_stat_user_tables "
            "WHERE seq_tup_read + coalesce(idx_tup_fetch, 0) > 0 ORDER BY seq_tup_read DESC"
        ).fetchall()
        indexes = conn.execute(
            "SELECT indexrelname, idx_scan, idx_tup_read FROM pg_stat_user_indexes "
            "WHERE idx_tup_read > 0 ORDER BY idx_tup_read DESC LIMIT 12"
        ).fetchall()
    stats: dict[str, Any] = dict(zip(columns, (int(x) for x in row or (0,) * len(columns)), strict=True))
    stats["tables"] = {
        t[0]: {"seq_scan": t[1], "seq_read": t[2], "idx_scan": t[3], "idx_fetch": t[4]} for t in tables
    }
    stats["indexes"] = {i[0]: {"scans": i[1], "read": i[2]} for i in indexes}
    # the benchmark's own: one autocommit statement per poll, and the few reads after the run
    stats["transactions_by_workers"] = max(0, stats["xact_commit"] + stats["xact_rollback"] - polls)
    return stats
