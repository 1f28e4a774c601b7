"""Search over entries on both databases: the same hits, each engine's own rank, no query text ever parsed
as the engine's syntax, and the index built for entries written before migration 0015."""

from __future__ import annotations

import random
import re
import sqlite3
import sys
import unicodedata
import uuid
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from blackboard import Blackboard, InvalidInput
from blackboard.application.knowledge.search import words
from blackboard.infrastructure.composition.settings import BlackboardSettings, store_settings
from blackboard.infrastructure.persistence.engine import make_engine
from blackboard.infrastructure.persistence.knowledge import search as search_index
from blackboard.infrastructure.persistence.schema import HEAD, ensure_schema, upgrade
from tests.conftest import PG_ADMIN_URL

VOCABULARY = ["alpha", "beta", "gamma", "delta", "café", "naïve", "Straße", "ÉCOLE", "résumé", "Ωmega", "данные",
              "数据", "x1", "2026", "v2", "long-word", "snake_case", "dotted.name", "path/to/file", "q&a"]  # fmt: skip


@pytest.fixture
def both(sqlite_url, pg_database_url) -> Iterator[dict[str, Blackboard]]:
    with Blackboard(sqlite_url) as lite, Blackboard(pg_database_url) as pg:
        yield {"sqlite": lite, "postgresql": pg}


def corpus(seed: int, size: int) -> list[tuple[str, object, tuple[str, ...], str]]:
    """(key, value, topics, author) made of the vocabulary's words, nested in JSON values."""
    pick = random.Random(seed)

    def phrase() -> str:
        return " ".join(pick.choice(VOCABULARY) for _ in range(pick.randint(1, 6)))

    made = []
    for n in range(size):
        shape = pick.randrange(4)
        value: object = (
            phrase()
            if shape == 0
            else {"text": phrase(), "n": n, "tags": [phrase(), {"deep": phrase()}]}
            if shape == 1
            else [phrase(), 3.5, None, True]
            if shape == 2
            else {"status": pick.choice(("open", "done")), "note": phrase()}
        )
        topics = tuple(pick.sample(("t.alpha", "t_beta", "gamma"), pick.randint(0, 2)))
        made.append(
            (f"k/{n}/{pick.choice(('x', 'alpha', 'beta_gamma'))}", value, topics, pick.choice(("ann", "bob")))
        )
    return made


def test_both_databases_find_the_same_entries_for_the_same_queries_each_by_its_own_rank(both):
    board = f"s-{uuid.uuid4().hex[:8]}"
    entries = corpus(7, 120)
    for bb in both.values():
        for key, value, topics, author in entries:
            bb.write(key, value, blackboard_id=board, author=author, topics=topics)
    pick = random.Random(11)
    queries = [
        "alpha",
        "CAFE",
        "naive",
        "strasse",
        "ecole resume",
        "omega",
        "данные",
        "数据",
        "x1",
        "2026 v2",
        "long word",
        "snake",
        "case snake",
        "dotted name",
        "path file",
        "q a",
        "bob",
        "ann gamma",
        "t alpha",
        "beta gamma delta",
        "nothingatall",
        "k 7",
    ]
    queries += [" ".join(pick.sample(VOCABULARY, 2)) for _ in range(10)]
    for query in queries:
        wanted = set(words(query))
        expected = {
            key
            for key, value, topics, author in entries
            if wanted <= set(words(" ".join([key, _strings(value), *topics, author])))
        }
        found = {}
        for name, bb in both.items():
            hits = bb.search(query, blackboard_id=board, limit=1000)
            found[name] = {h.key for h in hits}
            ranked = [(-h.score, h.key) for h in hits]
            assert ranked == sorted(ranked), (name, query)  # best first, ties in key order
        assert found["sqlite"] == found["postgresql"] == expected, query


def _strings(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return " ".join(_strings(v) for v in value.values())
    if isinstance(value, list):
        return " ".join(_strings(v) for v in value)
    return ""


# What a search engine's query language would read as syntax, or refuse: each is only words here.
NASTY = [
    '"alpha',
    'alpha"',
    '"alpha" "beta',
    "alpha AND beta",
    "alpha OR beta",
    "NOT alpha",
    "alpha NOT",
    "alpha*",
    "*alpha",
    "al*pha",
    "words:alpha",
    "alpha:*",
    "(alpha",
    "alpha)",
    "((alpha) beta)",
    "-alpha",
    "alpha -beta",
    "NEAR(alpha beta)",
    "NEAR/2 alpha",
    "alpha & beta",
    "alpha | beta",
    "!alpha",
    "alpha <-> beta",
    "alpha <2> beta",
    "'alpha'",
    "alpha'",
    "alpha\\",
    "\\alpha",
    "alpha;DROP TABLE blackboard_entries;--",
    "alpha%",
    "alpha_",
    "^alpha",
    "alpha + beta",
    "{alpha}",
    "[alpha]",
    "alpha\tbeta\nβeta",
    "ALPHA:A",
    "alpha:B*",
]


@pytest.fixture
def seeded(both) -> tuple[dict[str, Blackboard], str]:
    board = f"n-{uuid.uuid4().hex[:8]}"
    for bb in both.values():
        bb.write("one", "alpha beta", blackboard_id=board, author="ann")
        bb.write("two", {"x": "alpha"}, blackboard_id=board, author="ann")
        bb.write("three", ["AND", "OR", "NOT", "NEAR", "b"], blackboard_id=board, author="ann")
    return both, board


def test_a_query_with_an_engine_s_operators_is_only_its_words_on_both_databases(seeded):
    both, board = seeded
    held = {"one": "one alpha beta ann", "two": "two alpha ann", "three": "three and or not near b ann"}
    for query in NASTY:
        wanted = set(words(query))
        expected = {key for key, text_ in held.items() if wanted <= set(words(text_))}
        for name, bb in both.items():
            assert {h.key for h in bb.search(query, blackboard_id=board)} == expected, (name, query)
    for bb in both.values():  # the words are still found: not negated, not a prefix, not a column
        assert {h.key for h in bb.search("-alpha", blackboard_id=board)} == {"one", "two"}
        assert {h.key for h in bb.search('(alpha* "beta', blackboard_id=board)} == {"one"}
        assert {h.key for h in bb.search("NOT AND", blackboard_id=board)} == {"three"}
        assert {h.key for h in bb.search("words:alpha", blackboard_id=board)} == set()  # `words` is a word


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    noise=st.text(
        alphabet=st.sampled_from(list("\"'*:()-&|!^~+<>{}[]\\/%_.,;= ")) | st.characters(codec="utf-8"),
        max_size=40,
    )
)
@example(noise='"')
@example(noise="NEAR(")
@example(noise=":* & !(")
def test_no_query_reaches_either_database_as_syntax(seeded, noise):
    """Any text around the words: never a database error, the entry holding the words is still found."""
    both, board = seeded
    query = f"{noise} alpha{noise}beta {noise}"
    wanted = set(words(query))
    for name, bb in both.items():
        try:
            found = {h.key for h in bb.search(query, blackboard_id=board)}
        except InvalidInput as refused:  # too long, or a NUL: refused by the rule, naming the field
            assert refused.field == "text" and (len(query) > 1000 or "\x00" in query), refused
            continue
        if wanted <= {"alpha", "beta", "one", "ann"}:
            assert "one" in found, (name, query)
        assert found <= {"one", "two", "three"}


def test_a_query_without_a_word_or_too_long_is_refused_naming_text_on_both(seeded):
    both, board = seeded
    for bb in both.values():
        for bad in ("", "*", '" - ( ) : &|!', "a" * 1001):
            with pytest.raises(InvalidInput) as refused:
                bb.search(bad, blackboard_id=board)
            assert refused.value.field == "text"


@pytest.fixture(params=["sqlite", "postgresql"])
def url_at_0014(request, tmp_path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'at-0014.db'}"
        return
    name = f"blackboard_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    yield make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def test_migration_0015_indexes_the_entries_written_before_it(url_at_0014, monkeypatch):
    monkeypatch.setattr(search_index, "FILL_BATCH", 7)  # the fill reads the rows in several batches
    engine = make_engine(store_settings(BlackboardSettings(db=url_at_0014)))
    upgrade(engine, "head")
    with Blackboard(url_at_0014) as bb:  # entries as 0014 held them: written, then the index taken away
        for n in range(25):
            bb.write(f"k/{n}", {"text": f"item {n} café"}, blackboard_id="old", author="ann")
        bb.write("k/0", "on another board", blackboard_id="old-2", author="ann")
    downgrade_to_0014(engine)  # the revisions after it undone: 0015 drops the index, its words with it

    ensure_schema(engine)
    engine.dispose()

    with Blackboard(url_at_0014) as bb:
        assert [h.key for h in bb.search("12 cafe", blackboard_id="old")] == ["k/12"]
        assert len(bb.search("item", blackboard_id="old", limit=100)) == 25
        assert [h.key for h in bb.search("another", blackboard_id="old-2")] == ["k/0"]
    assert HEAD >= "0015"


def downgrade_to_0014(engine) -> None:
    from alembic import command
    from alembic.config import Config

    from blackboard.infrastructure.persistence.schema import migrations_folder

    config = Config()
    config.set_main_option("script_location", str(migrations_folder()))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0014")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0014"


def _index_shape(engine) -> list[tuple]:
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            query = "SELECT type, name, sql FROM sqlite_master WHERE name LIKE 'entry_search%' ORDER BY name"
        else:
            query = (
                "SELECT c.column_name, c.data_type, c.collation_name, c.is_nullable, i.indexdef"
                " FROM information_schema.columns c LEFT JOIN pg_indexes i ON i.tablename = c.table_name"
                " WHERE c.table_name = 'entry_search' ORDER BY c.column_name, i.indexdef"
            )
        return [tuple(row) for row in conn.execute(text(query))]


def test_create_all_builds_the_index_as_migration_0015_does(tmp_path, pg_private_url):
    from blackboard.infrastructure.persistence.tables import metadata

    for migrated_url, created_url in (
        (f"sqlite:///{tmp_path / 'migrated.db'}", f"sqlite:///{tmp_path / 'created.db'}"),
        (pg_private_url, None),
    ):
        migrated = make_engine(store_settings(BlackboardSettings(db=migrated_url)))
        upgrade(migrated, "head")
        shape = _index_shape(migrated)
        if created_url is None:  # the same database, its tables dropped and made by create_all
            with migrated.begin() as conn:
                metadata.drop_all(conn)
                conn.execute(text("DROP TABLE alembic_version"))
            created = migrated
        else:
            created = make_engine(store_settings(BlackboardSettings(db=created_url)))
        metadata.create_all(created)
        assert shape and _index_shape(created) == shape
        migrated.dispose()
        created.dispose()


def _words_before_fold_after(text_: str) -> list[str]:
    """The words rule before it folded case after decomposing (㎒ gave "MHz"): what older indexes hold."""
    folded = unicodedata.normalize("NFKD", text_.casefold())
    plain = "".join(c for c in folded if not unicodedata.combining(c))
    return [w[:64] for w in re.findall(r"[^\W_]+", plain)]


LUNATE_SIGMA = set("ϲϹ𝛓𝜍𝝇𝞁𝞻")  # indexed as ς before; PostgreSQL's simple configuration keeps ς and σ apart


def test_an_index_of_words_before_folding_after_decomposing_finds_the_words_of_today(pg_database_url):
    """Every character whose words changed, indexed as before and queried as now, in each engine's own
    tokenizer: found (both lower-case), but for the lunate sigma on PostgreSQL (docs/knowledge.md)."""
    decomposing = (chr(c) for c in range(sys.maxunicode + 1) if unicodedata.decomposition(chr(c)))
    changed = [c for c in decomposing if _words_before_fold_after(c) != words(c)]
    assert len(changed) == 636 and "㎒" in changed  # as many as a walk of every character finds
    lite = sqlite3.connect(":memory:")
    lite.execute("CREATE VIRTUAL TABLE t USING fts5(words)")  # unicode61, as entry_search
    lite.executemany(
        "INSERT INTO t (rowid, words) VALUES (?, ?)",
        [(n, " ".join(_words_before_fold_after(c))) for n, c in enumerate(changed)],
    )
    pg = create_engine(pg_database_url)
    with pg.connect() as conn:
        for n, c in enumerate(changed):
            terms = " ".join(f'"{w}"' for w in words(c))
            assert (n,) in lite.execute("SELECT rowid FROM t WHERE t MATCH ?", (terms,)).fetchall(), c
            found = conn.execute(
                text("SELECT to_tsvector('simple', :was) @@ plainto_tsquery('simple', :now)"),
                {"was": " ".join(_words_before_fold_after(c)), "now": " ".join(words(c))},
            ).scalar()
            assert found is (c not in LUNATE_SIGMA), c
    pg.dispose()
