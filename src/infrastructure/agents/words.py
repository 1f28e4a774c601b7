"""A text's words as the text index sees them (docs/matching.md): lower-cased, runs of two word characters or
more, stop-words and the boilerplate of agent files out, Snowball-stemmed."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

# Lucene's English stop-words (bm25s's STOPWORDS_EN)
STOPWORDS_EN = [
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "but",
    "by",
    "for",
    "if",
    "in",
    "into",
    "is",
    "it",
    "no",
    "not",
    "of",
    "on",
    "or",
    "such",
    "that",
    "the",
    "their",
    "then",
    "there",
    "these",
    "they",
    "this",
    "to",
    "was",
    "will",
    "with",
]
# words every agent file of the common collections uses; they say nothing about who fits
BOILERPLATE = [
    "agent",
    "agents",
    "assistant",
    "commentary",
    "context",
    "example",
    "examples",
    "proactively",
    "use",
    "used",
    "user",
    "using",
    "when",
    "will",
    "help",
    "need",
    "needs",
    "please",
    "task",
    "tasks",
]
# everyday words Lucene's short English list keeps
COMMON = [
    "i",
    "me",
    "my",
    "we",
    "our",
    "you",
    "your",
    "he",
    "she",
    "they",
    "them",
    "their",
    "its",
    "can",
    "could",
    "should",
    "would",
    "do",
    "does",
    "did",
    "have",
    "has",
    "had",
    "from",
    "how",
    "what",
    "which",
    "who",
    "why",
    "all",
    "any",
    "some",
    "more",
    "most",
    "other",
    "so",
    "than",
    "too",
    "very",
    "just",
    "about",
    "into",
    "over",
    "only",
    "up",
    "out",
    "also",
    "get",
    "make",
    "new",
    "want",
    "let",
    "like",
    "via",
    "etc",
]
_WORD = re.compile(r"\w\w+")  # runs of two word characters or more, as bm25s and scikit-learn split


class Words:
    """A text's words as the index sees them: lower-cased, two characters or more, stop-words and boilerplate
    out, Snowball-stemmed (so "reviews" finds "review"). The stems of the indexed files' words are kept, so each
    is stemmed once; a request's other words are stemmed each time, so no request makes the cache grow."""

    def __init__(self) -> None:
        import Stemmer

        self._stemmer: Any = Stemmer.Stemmer("english")
        self._stems: dict[str, str] = dict.fromkeys((*STOPWORDS_EN, *COMMON, *BOILERPLATE), "")

    def __call__(self, text: str) -> list[str]:
        """The words of a request, in order."""
        stems, stemmer = self._stems, self._stemmer
        found = []
        for word in _WORD.findall(text.lower()):
            stem = stems.get(word)
            if stem is None:
                stem = stemmer.stemWord(word)
            if stem:
                found.append(stem)
        return found

    def counts(self, text: str) -> dict[str, int]:
        """How often each word occurs in an indexed text (counted before they are stemmed: fewer to stem)."""
        found: dict[str, int] = {}
        stems = self._stems
        for word, times in Counter(_WORD.findall(text.lower())).items():
            stem = stems.get(word)
            if stem is None:
                stem = self._stem(word)
            if stem:
                found[stem] = found.get(stem, 0) + times
        return found

    def _stem(self, word: str) -> str:
        """A word neither dropped nor seen before."""
        stem: str = self._stemmer.stemWord(word)
        self._stems[word] = stem
        return stem
