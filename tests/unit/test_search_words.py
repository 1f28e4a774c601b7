"""The words rule of search (application/knowledge/search.py): one for entries and queries on every store."""

from __future__ import annotations

from datetime import UTC, datetime

from blackboard.application.knowledge.search import MAX_ENTRY_WORDS, MAX_WORD, entry_words, words
from blackboard.domain.knowledge.entries import Entry, Version


def test_words_fold_case_and_accents_and_cut_at_what_is_no_letter_or_digit():
    assert words("Café NAÏVE Straße") == ["cafe", "naive", "strasse"]
    assert words('snake_case-dash.dot/path:col "q" a*b (c) -d x&y|z!w') == [
        "snake", "case", "dash", "dot", "path", "col", "q", "a", "b", "c", "d", "x", "y", "z", "w"
    ]  # fmt: skip
    assert words("½ x²") == ["1", "2", "x2"]  # compatibility forms as their plain letters and digits
    assert words("данные 数据 Ωmega") == ["данные", "数据", "ωmega"]
    assert words("***") == [] and words("") == []
    assert words("a" * 100) == ["a" * MAX_WORD]


def test_words_fold_case_after_decomposing_so_no_capital_is_left_and_a_word_is_its_own_words():
    assert words("㎒ ℌello 𝚨 ℇ ϲ ᾳ") == ["mhz", "hello", "α", "ɛ", "σ", "αι"]
    for text in ("㎒ ℌello", "Ⅻ ﬃ İstanbul", "ᴬᴮ ℂ ℕ №5", "𝛀 ᴭ ꟸ"):
        found = words(text)
        assert all(w == w.casefold() for w in found), found
        assert words(" ".join(found)) == found  # an indexed word is found by itself


def entry(value: object, key: str = "k/1", topics: tuple[str, ...] = ()) -> Entry:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return Entry("b", key, 1, Version("b", key, 1, value, "Ann", at, 1, topics=topics))


def test_an_entry_s_words_are_its_key_value_strings_topics_and_author_and_no_more_than_the_cap():
    value = {"title": "Hello", "n": 5, "flag": True, "items": ["one", {"deep": "two"}], "Keys": None}
    assert entry_words(entry(value, topics=("t.x",))) == "k 1 hello one two t x ann"
    big = entry(" ".join(["word"] * 50_000))  # 250,000 characters of words
    assert len(entry_words(big)) <= MAX_ENTRY_WORDS and entry_words(big).startswith("k 1 word word")
