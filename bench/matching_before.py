"""The matcher as it was before it read agent bodies (src/infrastructure/agents/text_index.py at 411fc3f), kept
runnable for the bench's side-by-side figures: BM25 (bm25s) over the name, description and capability names,
scaled to 0..1 the same way. Not used by the application."""

from __future__ import annotations

import logging
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

K1, B = 1.5, 0.75  # BM25's usual constants (Lucene's, bm25s's defaults)
# words every agent file of the common collections uses; they say nothing about who fits
BOILERPLATE = (
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
)
# everyday words Lucene's short English list keeps
COMMON = (
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
)
_EXAMPLE_TAGS = re.compile(r"</?example>|\\n")  # descriptions embed <example> blocks and escaped newlines


def agent_text(name: str, description: str | None, capabilities: Sequence[str]) -> str:
    """What an agent is matched on: its name (its words count twice), description and capability names."""
    words = name.replace("-", " ").replace("_", " ")
    caps = " ".join(c.replace("-", " ").replace("_", " ") for c in capabilities)
    return f"{words} {words} {caps} {_EXAMPLE_TAGS.sub(' ', description or '')}"


class TextIndex:
    """BM25 over the agents' texts, built once per registry load; `scores` answers in 0..1 per agent."""

    def __init__(self, names: Sequence[str], texts: Sequence[str]) -> None:
        import bm25s

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs each index it builds at DEBUG
        self._names = list(names)
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, dict[str, float]] = OrderedDict()  # the last texts scored
        n = len(self._names)
        # the most one word can weigh (Lucene's BM25: idf x tf / (tf + k1 x length norm) stays below idf):
        # the idf of a word that only one agent's text has
        self._unit = math.log(1 + (n - 0.5) / 1.5) if n else 1.0
        self._retriever: Any = None
        if n:
            self._retriever = bm25s.BM25(k1=K1, b=B, method="lucene")
            self._retriever.index(self._tokenize(texts, with_ids=True), show_progress=False)

    def scores(self, text: str) -> dict[str, float]:
        with self._lock:
            if (known := self._recent.get(text)) is not None:
                self._recent.move_to_end(text)
                return known
        found = self._score(text)
        with self._lock:
            self._recent[text] = found
            if len(self._recent) > 256:
                self._recent.popitem(last=False)
        return found

    def _score(self, text: str) -> dict[str, float]:
        if self._retriever is None:
            return {}
        vocabulary = self._retriever.vocab_dict
        words = [w for w in dict.fromkeys(self._tokenize([text], with_ids=False)[0]) if w in vocabulary]
        if not words:
            return {}
        raw = self._retriever.get_scores(words)
        return {name: scaled(float(r), self._unit) for name, r in zip(self._names, raw, strict=True) if r > 0}

    @staticmethod
    def _tokenize(texts: Sequence[str], with_ids: bool) -> Any:
        import bm25s

        return bm25s.tokenize(
            list(texts), stopwords=_stopwords(), stemmer=_stemmer(), return_ids=with_ids, show_progress=False
        )


def scaled(raw: float, unit: float) -> float:
    """BM25's unbounded sum to 0..1: 1 - 5 ** -(raw / unit), `unit` the most one word can weigh. So 0.8
    is exactly what one word can never reach: above it takes more than one word in common. No match
    is 0, and nothing is scaled up to fit the best agent."""
    return 1.0 - 5.0 ** -(raw / unit)


_STEMMER: Any = None
_STOPWORDS: list[str] = []


def _stemmer() -> Any:
    global _STEMMER
    if _STEMMER is None:
        import Stemmer

        _STEMMER = Stemmer.Stemmer("english")
    return _STEMMER


def _stopwords() -> list[str]:
    if not _STOPWORDS:
        from bm25s.stopwords import STOPWORDS_EN

        _STOPWORDS.extend([*STOPWORDS_EN, *COMMON, *BOILERPLATE])
    return _STOPWORDS
