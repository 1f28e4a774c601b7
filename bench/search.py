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
"""

from __future__ import annotations

import itertools
import random
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


def measure(url: str, searches: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    container = bench_container(url)
    run = container.knowledge_queries().search
    figures: dict[str, Any] = {}
    every: list[float] = []
    for kind, asked in searches.items():
        for given in asked[:5]:  # warm up: the first statements compile, the pages come into the cache
            run(SearchEntries(blackboard_id=BOARD, **given))
        times, hits = [], []
        for given in asked:
            query = SearchEntries(blackboard_id=BOARD, **given)
            started = time.perf_counter()
            found = run(query)
            times.append((time.perf_counter() - started) * 1000)
            hits.append(len(found))
        every += times
        figures[kind] = {
            "p50_ms": round(percentile(times, 50), 2),
            "p95_ms": round(percentile(times, 95), 2),
            "mean_hits": round(sum(hits) / len(hits), 1),
        }
    figures["all"] = {"p50_ms": round(percentile(every, 50), 2), "p95_ms": round(percentile(every, 95), 2)}
    container.engine().dispose()
    return figures


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
    progress(f"(i) making {entries:,} texts")
    corpus = texts(entries)
    searches = queries(corpus, per_kind)
    result: dict[str, Any] = {"entries": entries, "queries_per_kind": per_kind, "stores": {}}
    with temp_dir("search") as d:
        postgres, drop = _postgres_database(pg_url)
        try:
            for store, url in (("sqlite", f"sqlite:///{Path(d) / 'search.db'}"), ("postgresql", postgres)):
                progress(f"(i) seeding {entries:,} entries on {store}")
                seeded = seed(url, corpus)
                progress(f"(i) searching on {store}")
                result["stores"][store] = {"seed_and_index_s": round(seeded, 1), **measure(url, searches)}
        finally:
            drop()
    result["target_p50_ms"] = TARGET_P50_MS
    return result


def print_report(result: dict[str, Any], say: Callable[[str], None], table: Callable[..., str]) -> list[dict]:
    stores = result["stores"]
    rows = [
        [
            kind,
            stores["sqlite"][kind]["p50_ms"],
            stores["postgresql"][kind]["p50_ms"],
            stores["sqlite"][kind]["p95_ms"],
            stores["postgresql"][kind]["p95_ms"],
            stores["sqlite"][kind]["mean_hits"],
        ]
        for kind in KINDS
    ]
    rows.append(
        [
            "all",
            stores["sqlite"]["all"]["p50_ms"],
            stores["postgresql"]["all"]["p50_ms"],
            stores["sqlite"]["all"]["p95_ms"],
            stores["postgresql"]["all"]["p95_ms"],
            "",
        ]
    )
    say(
        table(
            f"(i) search over {result['entries']:,} entries, {result['queries_per_kind']} queries per kind (ms); "
            f"seeded and indexed in {stores['sqlite']['seed_and_index_s']} s (SQLite), "
            f"{stores['postgresql']['seed_and_index_s']} s (PostgreSQL)",
            ["query", "SQLite p50", "PostgreSQL p50", "SQLite p95", "PostgreSQL p95", "hits (≤ 20)"],
            rows,
        )
    )
    return [
        {
            "name": f"(i) search p50 over {result['entries']:,} entries, {store}, ms",
            "measured": stores[store]["all"]["p50_ms"],
            "target": f"<= {TARGET_P50_MS:g}",
            "verdict": verdict(stores[store]["all"]["p50_ms"] <= TARGET_P50_MS),
        }
        for store in ("sqlite", "postgresql")
    ]
