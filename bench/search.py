"""(i) Search over entries: `search` on a board of BENCH_SEARCH_ENTRIES entries (100,000), on SQLite (FTS5,
bm25) and on PostgreSQL (tsvector under GIN, ts_rank), measured warm in process through the application's
query (what the CLI, the MCP tool and the Python API call).

Each entry's value is a text of 8 to 30 words drawn from a vocabulary of 20,000 made-up words by a Zipf
law (as words are in real text: a few very common, most rare), with four authors and 50 topics. The same
entries go to both databases, appended as events in bulk and folded by one catch-up (the projection fills
the index as it fills the rows; on PostgreSQL a VACUUM ANALYZE follows, as autovacuum would run it after such
a load: without statistics the planner reads the board's rows by its primary key instead of the GIN index).
The queries, the same on both, are of five kinds, drawn from the words
the entries hold: a rare word, a word of middling frequency, two words (both must be there), a common word
(thousands of hits, ranked, the first 20 given) and a word with the author and a key prefix as filters.

Beside each search through the application, the bare engine query that gives the same answer (issue 37): the
same MATCH ... ORDER BY bm25 LIMIT (SQLite) or tsvector @@ query ORDER BY ts_rank LIMIT (PostgreSQL) on the
same tables and indexes, then the page's entry rows whole, as SQL text on one connection of the driver's own
(sqlite3, psycopg). Both are checked to give the same keys in the same order for every search first; then
they take turns in BENCH_SEARCH_ROUNDS rounds (ours first in the first round, the order swapped each round),
each kind's searches in a block, and the ratio of the two p50s is taken per round.
"""

from __future__ import annotations

import itertools
import os
import random
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import Config, bench_container, percentile, progress, temp_dir, verdict
from blackboard.application.knowledge.commands import SearchEntries
from blackboard.domain.events import EntryWritten
from blackboard.infrastructure.persistence.codec import event_row
from blackboard.infrastructure.persistence.engine import write_transaction
from blackboard.infrastructure.persistence.tables import EVENTS

BOARD = "ps-search"
AUTHORS = ("ps-researcher", "ps-analyst", "ps-reviewer", "ps-writer")
VOCABULARY = 20_000
TARGET_P50_MS = 20.0
TARGET_RATIO = 1.5  # issue 37: the application's search p50 at most this many times the bare engine query's
KINDS = ("rare word", "middling word", "two words", "common word", "word + author + prefix")


def vocabulary(rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    made: dict[str, None] = {}
    while len(made) < VOCABULARY:
        made["".join(rng.choice(letters) for _ in range(rng.randint(3, 10)))] = None
    return list(made)


def texts(count: int, seed: int = 26) -> list[str]:
    """`count` texts of Zipf-distributed words (rank r drawn with weight 1/r)."""
    rng = random.Random(seed)
    words = vocabulary(rng)
    cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(VOCABULARY)))  # summed once
    return [" ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(8, 30))) for _ in range(count)]


def seed(url: str, corpus: list[str]) -> float:
    container = bench_container(url)
    engine, now = container.engine(), datetime.now(UTC)
    rows = []
    for i, text in enumerate(corpus):
        event = EntryWritten(
            blackboard_id=BOARD,
            version=1,
            occurred_at=now - timedelta(days=1),
            key=f"{('finding', 'note', 'plan')[i % 3]}/{i:06d}",
            value={"n": i, "text": text, "status": ("open", "done")[i % 3 == 0]},
            author=AUTHORS[i % 4],
            entry_type="finding",
            topics=(f"topic-{i % 50}",),
        )
        rows.append(event_row(event, {"actor": event.author}, now))
    started = time.perf_counter()
    for start in range(0, len(rows), 20_000):
        with write_transaction(engine) as conn:
            conn.execute(EVENTS.insert(), rows[start : start + 20_000])
    container.projector().catch_up()  # rows, topics and the search index
    took = time.perf_counter() - started
    if engine.dialect.name == "postgresql":  # as autovacuum leaves a table after a bulk load: its
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:  # statistics
            conn.exec_driver_sql("VACUUM ANALYZE")  # taken, the GIN index's pending list merged
    engine.dispose()
    return took


def queries(corpus: list[str], per_kind: int, seed: int = 27) -> dict[str, list[dict[str, Any]]]:
    """Per kind, `per_kind` searches (SearchEntries' fields), drawn from the words the entries hold."""
    rng = random.Random(seed)
    held = Counter(w for text in corpus for w in set(text.split()))
    by_count = sorted(held, key=lambda w: (held[w], w))
    total = len(corpus)
    rare = [w for w in by_count if held[w] <= 20]
    middling = [w for w in by_count if total * 0.001 <= held[w] <= total * 0.01]
    common = [w for w in by_count if held[w] >= total * 0.05]
    made: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
    for _ in range(per_kind):
        made["rare word"].append({"text": rng.choice(rare)})
        made["middling word"].append({"text": rng.choice(middling)})
        text = rng.choice(corpus).split()
        made["two words"].append({"text": " ".join(rng.sample(text, 2))})
        made["common word"].append({"text": rng.choice(common)})
        made["word + author + prefix"].append(
            {"text": rng.choice(middling), "author": rng.choice(AUTHORS), "prefix": "finding/"}
        )
    return made


BARE_PAGE = {  # the page's keys and scores, as the engine ranks them (higher is better), best first
    "sqlite": (
        "SELECT t.key AS key, -bm25(entry_search) AS score FROM entry_search"
        " JOIN entry_search_text AS t ON t.id = entry_search.rowid{join}"
        " WHERE entry_search MATCH ? AND t.blackboard_id = ?{where}"
        " ORDER BY bm25(entry_search), t.key LIMIT ?"
    ),
    "postgresql": (
        "SELECT s.key AS key, ts_rank(s.vector, plainto_tsquery('simple', %s)) AS score FROM entry_search AS s{join}"
        " WHERE s.vector @@ plainto_tsquery('simple', %s) AND s.blackboard_id = %s{where}"
        " ORDER BY score DESC, s.key LIMIT %s"
    ),
}
BARE_JOIN = {  # the filters' columns (SQLite: in EXISTS, or the filters' rows drive the plan: see search.py)
    "sqlite": "",
    "postgresql": " JOIN blackboard_entries AS f ON f.blackboard_id = s.blackboard_id AND f.key = s.key",
}
BARE_FILTER = {  # --author and --prefix: the author's column, the key's range in code-point order
    "sqlite": " AND EXISTS (SELECT 1 FROM blackboard_entries AS f WHERE f.blackboard_id = t.blackboard_id"
    " AND f.key = t.key AND f.author = ? AND f.key >= ? AND f.key < ?)",
    "postgresql": ' AND f.author = %s AND f.key COLLATE "C" >= %s AND f.key COLLATE "C" < %s',
}
BARE_ROWS = {  # then the page's entry rows whole, as the application reads them
    "sqlite": "SELECT e.*, p.score FROM ({page}) AS p JOIN blackboard_entries AS e"
    " ON e.blackboard_id = ? AND e.key = p.key ORDER BY p.score DESC, e.key",
    "postgresql": "SELECT e.*, p.score FROM ({page}) AS p JOIN blackboard_entries AS e"
    " ON e.blackboard_id = %s AND e.key = p.key ORDER BY p.score DESC, e.key",
}
LIMIT = 20  # SearchEntries' default: the page both give


def bare_search(url: str) -> tuple[Callable[[dict[str, Any]], list[str]], Callable[[], None]]:
    """The same search as the engine's own query on the same tables and indexes, through the driver's cursor
    on one connection kept open (sqlite3, psycopg): the words each quoted (FTS5) or AND-ed by plainto_tsquery,
    ranked, the first LIMIT, then their entry rows whole with the score. What it returns: the keys in order
    (the rows are fetched, as ours fetches them); and how to close it."""
    from sqlalchemy.engine import make_url

    from blackboard.application.knowledge.search import words

    given_url = make_url(url)
    store = given_url.get_backend_name()
    if store == "sqlite":
        import sqlite3

        conn: Any = sqlite3.connect(given_url.database or "", check_same_thread=False)
    else:
        import psycopg

        conn = psycopg.connect(given_url.set(drivername="postgresql").render_as_string(hide_password=False))
        conn.autocommit = True
    plain = BARE_ROWS[store].format(page=BARE_PAGE[store].format(join="{join}", where="{where}"))
    filtered = plain.format(join=BARE_JOIN[store], where=BARE_FILTER[store])
    plain = plain.format(join="", where="")

    def search(given: dict[str, Any]) -> list[str]:
        found = list(dict.fromkeys(words(given["text"])))
        if store == "sqlite":
            params: list[Any] = [" ".join(f'"{w}"' for w in found), BOARD]
        else:
            params = [" ".join(found), " ".join(found), BOARD]
        sql = plain
        if "author" in given:  # the one filtered kind: an author and a prefix ("finding/" up to "finding0")
            prefix = given["prefix"]
            params += [given["author"], prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)]
            sql = filtered
        params += [LIMIT, BOARD]
        cursor = conn.cursor()
        cursor.execute(sql, params)
        rows = cursor.fetchall()
        cursor.close()
        return [row[1] for row in rows]  # blackboard_entries' second column: the key

    return search, conn.close


def our_search(url: str) -> tuple[Callable[[dict[str, Any]], list[str]], Callable[[], None]]:
    """The application's query (what the CLI, the MCP tool and the Python API call): the keys of its hits."""
    container = bench_container(url)
    run = container.knowledge_queries().search

    def search(given: dict[str, Any]) -> list[str]:
        return [hit.entry.key for hit in run(SearchEntries(blackboard_id=BOARD, **given))]

    return search, container.engine().dispose


def check_same(
    ours: Callable[..., list[str]], bare: Callable[..., list[str]], searches: dict[str, Any]
) -> int:
    """Both give the same keys in the same order for every search (the comparison is of the same work)."""
    checked = 0
    for kind, asked in searches.items():
        for given in asked:
            mine, theirs = ours(given), bare(given)
            if mine != theirs:
                raise AssertionError(f"(i) {kind} {given}: ours {mine} against the bare query's {theirs}")
            checked += 1
    return checked


def time_kind(search: Callable[..., list[str]], asked: list[dict[str, Any]]) -> tuple[list[float], list[int]]:
    times, hits = [], []
    for given in asked:
        started = time.perf_counter()
        found = search(given)
        times.append((time.perf_counter() - started) * 1000)
        hits.append(len(found))
    return times, hits


def measure(url: str, searches: dict[str, list[dict[str, Any]]], rounds: int, store: str) -> dict[str, Any]:
    """Ours and the bare query in alternating rounds (ours first in the first round, then the order swapped
    each round), each kind's searches timed in a block; per round each kind's p50 and the ratio ours/bare."""
    sides = {"ours": our_search(url), "bare": bare_search(url)}
    try:
        ours, bare = sides["ours"][0], sides["bare"][0]
        checked = check_same(ours, bare, searches)  # warms both up too: the pages come into the cache
        every: dict[str, list[list[float]]] = {side: [[] for _ in range(rounds)] for side in sides}
        per_kind: dict[str, dict[str, list[float]]] = {side: {k: [] for k in searches} for side in sides}
        hits: list[int] = []
        names = list(sides)
        for r in range(rounds):
            progress(f"(i) {store}: round {r + 1} of {rounds}")
            for kind, asked in searches.items():
                for side in names if r % 2 == 0 else names[::-1]:
                    times, found = time_kind(sides[side][0], asked)
                    per_kind[side][kind].append(percentile(times, 50))
                    every[side][r] += times
                    if side == "ours" and r == 0:
                        hits += found
        figures: dict[str, Any] = {"rounds": rounds, "checked_same_keys": checked}
        for kind in [*searches, "all"]:
            if kind == "all":
                p50s = {side: [percentile(t, 50) for t in every[side]] for side in sides}
            else:
                p50s = per_kind["ours"][kind], per_kind["bare"][kind]
                p50s = {"ours": p50s[0], "bare": p50s[1]}
            ratios = [o / b for o, b in zip(p50s["ours"], p50s["bare"], strict=True)]
            figures[kind] = {
                "ours_p50_ms": _spread(p50s["ours"], 2),
                "bare_p50_ms": _spread(p50s["bare"], 2),
                "ratio": _spread(ratios, 2),
                "per_round": {
                    "ours": [round(x, 3) for x in p50s["ours"]],
                    "bare": [round(x, 3) for x in p50s["bare"]],
                },
            }
        per = len(next(iter(searches.values())))
        for i, kind in enumerate(searches):
            figures[kind]["mean_hits"] = round(sum(hits[i * per : (i + 1) * per]) / per, 1)
        return figures
    finally:
        for _, close in sides.values():
            close()


def _spread(values: list[float], digits: int) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


def _postgres_database(admin_url: str) -> tuple[str, Callable[[], None]]:
    """A database of this run's own next to BENCH_PG_URL's, and how to drop it."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"blackboard_bench_search_{uuid.uuid4().hex[:8]}"
    admin = create_engine(make_url(admin_url).set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return make_url(admin_url).set(database=name).render_as_string(hide_password=False), drop


def run(config: Config, pg_url: str) -> dict[str, Any]:
    entries, per_kind = config["BENCH_SEARCH_ENTRIES"], config["BENCH_SEARCH_QUERIES"]
    rounds = config["BENCH_SEARCH_ROUNDS"]
    progress(f"(i) making {entries:,} texts")
    corpus = texts(entries)
    searches = queries(corpus, per_kind)
    result: dict[str, Any] = {
        "entries": entries,
        "queries_per_kind": per_kind,
        "rounds": rounds,
        "load_before": os.getloadavg(),
        "stores": {},
    }
    with temp_dir("search") as d:
        postgres, drop = _postgres_database(pg_url)
        try:
            for store, url in (("sqlite", f"sqlite:///{Path(d) / 'search.db'}"), ("postgresql", postgres)):
                progress(f"(i) seeding {entries:,} entries on {store}")
                seeded = seed(url, corpus)
                progress(f"(i) searching on {store}")
                measured = measure(url, searches, rounds, store)
                result["stores"][store] = {"seed_and_index_s": round(seeded, 1), **measured}
        finally:
            drop()
    result["load_after"] = os.getloadavg()
    result["target_p50_ms"] = TARGET_P50_MS
    result["target_ratio"] = TARGET_RATIO
    return result


def print_report(result: dict[str, Any], say: Callable[[str], None], table: Callable[..., str]) -> list[dict]:
    stores = result["stores"]

    def spread(figure: dict[str, float], unit: str = "") -> str:
        return f"{figure['median']:g}{unit} ({figure['min']:g}-{figure['max']:g})"

    rows = []
    for kind in (*KINDS, "all"):
        row: list[Any] = [kind]
        for store in ("sqlite", "postgresql"):
            f = stores[store][kind]
            row += [f["ours_p50_ms"]["median"], f["bare_p50_ms"]["median"], spread(f["ratio"], "x")]
        row.append(stores["sqlite"][kind].get("mean_hits", ""))
        rows.append(row)
    say(
        table(
            f"(i) search over {result['entries']:,} entries, {result['queries_per_kind']} queries per kind, "
            f"p50 ms, median of {result['rounds']} alternating rounds (ratio ours/bare: median, min-max); "
            f"seeded and indexed in {stores['sqlite']['seed_and_index_s']} s (SQLite), "
            f"{stores['postgresql']['seed_and_index_s']} s (PostgreSQL); load "
            f"{result['load_before'][0]:.1f} before, {result['load_after'][0]:.1f} after",
            [
                "query",
                "SQLite ours",
                "SQLite bare",
                "SQLite ratio",
                "PostgreSQL ours",
                "PostgreSQL bare",
                "PostgreSQL ratio",
                "hits (≤ 20)",
            ],
            rows,
        )
    )
    targets = []
    for store in ("sqlite", "postgresql"):
        p50 = stores[store]["all"]["ours_p50_ms"]["median"]
        ratio = stores[store]["all"]["ratio"]["median"]
        targets += [
            {
                "name": f"(i) search p50 over {result['entries']:,} entries, {store}, ms",
                "measured": p50,
                "target": f"<= {TARGET_P50_MS:g}",
                "verdict": verdict(p50 <= TARGET_P50_MS),
            },
            {
                "name": f"(i) search p50 / the bare engine query's, {store}",
                "measured": ratio,
                "target": f"<= {TARGET_RATIO:g}",
                "verdict": verdict(ratio <= TARGET_RATIO),
            },
        ]
    return targets
