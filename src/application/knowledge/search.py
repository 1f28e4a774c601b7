"""Search over entries: the words of a text, of an entry and of a query, one rule for every store.

What an entry is found by (its searched text) is the current version's key, the strings inside its
value (at any depth, not the objects' own keys), its topics and its author. Text becomes words the same
way for an entry and for a query: lower-cased (Unicode case folding), accents dropped (NFKD without the
combining marks: `café` is `cafe`), cut at every character that is not a letter or a digit (`_`, `-`,
`.`, `/` and every operator of a search engine's query language among them: `a_b` is `a b`). A word is
cut at `MAX_WORD` characters, an entry's words at `MAX_ENTRY_WORDS` characters. Each store indexes only
these words, separated by spaces, and is queried with only these words (each one quoted as a term), so
no query text reaches a search engine's parser as syntax, and SQLite and PostgreSQL find the same
entries: those holding every word of the query (whole words, any order).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from blackboard.domain.knowledge.entries import Entry

MAX_WORD = 64  # characters: a longer word is cut there, in an entry and in a query alike
MAX_ENTRY_WORDS = 100_000  # characters of an entry's words (spaces included) that are searched
MAX_QUERY = 1000  # characters of a query
_SPLIT = re.compile(r"[^\W_]+")  # letters and digits (`\w` less `_`)


def words(text: str) -> list[str]:
    """The words of `text`, in order, as they are indexed and searched: case folded, compatibility forms as
    their plain letters, accents dropped, and folded again (what a decomposition gives, too: ㎒ is "mhz", not
    "MHz", as SQLite's and PostgreSQL's engines lower-case it)."""
    plain = _plain(_plain(text.casefold()).casefold())
    return [w[:MAX_WORD] for w in _SPLIT.findall(plain)]


def _plain(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def _strings(value: Any) -> Iterator[str]:
    """The strings inside a JSON value, in document order (walked without recursion: values nest 32 deep)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def entry_words(entry: Entry) -> str:
    """The words an entry is found by, space-separated, at most MAX_ENTRY_WORDS characters."""
    current = entry.current
    parts = [entry.key, *_strings(current.value), *current.topics, current.author]
    found: list[str] = []
    size = 0
    for part in parts:
        for word in words(part):
            size += len(word) + 1
            if size > MAX_ENTRY_WORDS + 1:
                return " ".join(found)
            found.append(word)
    return " ".join(found)


def matches(entry: Entry, wanted: tuple[str, ...]) -> int:
    """How often the query's words occur in the entry (0: not every word is there); the in-memory
    store's rank, and the rule the SQL stores' indexes follow."""
    have = entry_words(entry).split()
    if not all(w in have for w in wanted):
        return 0
    return sum(have.count(w) for w in set(wanted))
