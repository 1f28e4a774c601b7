"""State that grows with a board, kept on disk: what an import's check replays a big board into.

A `Spill` is one temporary SQLite file (deleted when it closes); each `mapping()` is a dict-like table
of it whose values are pickled, with the most recently used `CACHE` items kept in memory (written back
when they leave it, so a value changed in place is kept). Memory stays flat in the board's size; the
events of one signal come close together, so most look-ups are served from the cache.
"""

from __future__ import annotations

import pickle
import sqlite3
import tempfile
from collections import OrderedDict
from collections.abc import Iterator, MutableMapping
from itertools import count
from typing import Any

CACHE = 4096


class Spill:
    def __init__(self) -> None:
        self._file = tempfile.NamedTemporaryFile(prefix="blackboard-spill-", suffix=".db")  # noqa: SIM115
        self._db = sqlite3.connect(self._file.name, isolation_level=None)
        self._db.execute("PRAGMA journal_mode = OFF")
        self._db.execute("PRAGMA synchronous = OFF")
        self._tables = count()
        self._mappings: list[SpilledMapping] = []

    def __call__(self) -> SpilledMapping:
        return self.mapping()

    def mapping(self) -> SpilledMapping:
        made = SpilledMapping(self._db, f"t{next(self._tables)}")
        self._mappings.append(made)
        return made

    def close(self) -> None:
        self._db.close()
        self._file.close()

    def __enter__(self) -> Spill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SpilledMapping(MutableMapping[str, Any]):
    def __init__(self, db: sqlite3.Connection, table: str) -> None:
        self._db = db
        self._table = table
        self._cache: OrderedDict[str, Any] = OrderedDict()
        db.execute(f"CREATE TABLE {table} (k TEXT PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")

    def __getitem__(self, key: str) -> Any:
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        row = self._db.execute(f"SELECT v FROM {self._table} WHERE k = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        value = pickle.loads(row[0])
        self._keep(key, value)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        self._cache[key] = value
        self._cache.move_to_end(key)
        self._evict()

    def __delitem__(self, key: str) -> None:
        found = self._cache.pop(key, None) is not None
        gone = self._db.execute(f"DELETE FROM {self._table} WHERE k = ?", (key,)).rowcount
        if not (found or gone):
            raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        if key in self._cache:
            return True
        return self._db.execute(f"SELECT 1 FROM {self._table} WHERE k = ?", (key,)).fetchone() is not None

    def __iter__(self) -> Iterator[str]:
        self._flush()
        for (key,) in self._db.execute(f"SELECT k FROM {self._table}").fetchall():
            yield key

    def __len__(self) -> int:
        self._flush()
        return self._db.execute(f"SELECT COUNT(*) FROM {self._table}").fetchone()[0]

    def _keep(self, key: str, value: Any) -> None:
        self._cache[key] = value
        self._evict()

    def _evict(self) -> None:
        while len(self._cache) > CACHE:
            key, value = self._cache.popitem(last=False)
            self._write(key, value)

    def _write(self, key: str, value: Any) -> None:
        self._db.execute(
            f"INSERT OR REPLACE INTO {self._table} (k, v) VALUES (?, ?)",
            (key, pickle.dumps(value, pickle.HIGHEST_PROTOCOL)),
        )

    def _flush(self) -> None:
        for key, value in self._cache.items():
            self._write(key, value)
