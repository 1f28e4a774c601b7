"""Text relevance of agents to a signal's topic and prompt: BM25F over each agent's name, description and body,
scaled to 0..1 (docs/matching.md).

Plain Python; the stemmer (PyStemmer, words.py) is imported when the first index is built, so only a command
that scores a signal targeting `auto` pays for it.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from blackboard.infrastructure.agents.words import Words

# k1 and, per field, (weight, b): how much one occurrence counts, and how much the field's length tempers it
# (BM25F, Zaragoza et al. 2004, "simple BM25F"). Chosen on the tuning part of tests/fixtures/matching.
K1 = 1.2
FIELDS = {
    "name": (3.0, 0.0),  # the name's words and capability names: a handful of words, no length to temper
    "description": (2.0, 0.75),
    "body": (0.5, 0.75),  # long, and mostly words every agent of its kind uses
}
# The evidence a score of 0.8 stands for, in units of the most one word can weigh. Above 1, one word in common can
# never pass 0.8; 1.3 rather than 1 because a body shares many weak words with any request (docs/matching.md:
# on the tuning part, at 1.0 another agent than the intended one passed 0.8 for a third of the requests).
STRONG = 1.3
_EXAMPLE_TAGS = re.compile(r"</?example>|\\n")  # descriptions embed <example> blocks and escaped newlines


@dataclass(frozen=True, slots=True)
class AgentText:
    """What an agent is matched on, field by field."""

    name: str
    description: str = ""
    capabilities: tuple[str, ...] = ()
    body: str = ""  # the instructions: the Markdown after the frontmatter

    def fields(self) -> dict[str, str]:
        words = " ".join(w.replace("-", " ").replace("_", " ") for w in (self.name, *self.capabilities))
        return {"name": words, "description": _EXAMPLE_TAGS.sub(" ", self.description), "body": self.body}


class TextIndex:
    """BM25F over the agents' fields, built once per registry load; `scores` answers in 0..1 per agent."""

    def __init__(self, agents: Sequence[AgentText]) -> None:
        self._names = [a.name for a in agents]
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, dict[str, float]] = OrderedDict()  # the last texts scored
        self._words = Words()
        n = len(agents)
        # the most one word can weigh: BM25F's saturation tf / (k1 + tf) stays below 1, so a word adds less than its
        # idf, and the largest idf is that of a word only one agent has; 0.8 stands for STRONG times that
        self._unit = STRONG * _idf(1, n) if n else 1.0
        self._postings = self._index([a.fields() for a in agents])

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
        totals: dict[int, float] = {}
        for word in dict.fromkeys(self._words(text)):  # each distinct word of the request counts once
            for agent, weight in self._postings.get(word, ()):
                totals[agent] = totals.get(agent, 0.0) + weight
        return {self._names[a]: scaled(raw, self._unit) for a, raw in sorted(totals.items())}

    def _index(self, agents: list[dict[str, str]]) -> dict[str, list[tuple[int, float]]]:
        """word -> [(agent, its weight)]: idf x tf / (k1 + tf), tf summed over the fields, each weighted and
        tempered by its length against the field's average."""
        counted = [{f: self._words.counts(text) for f, text in fields.items()} for fields in agents]
        lengths = [{f: sum(words.values()) for f, words in fields.items()} for fields in counted]
        average = {f: (sum(ls[f] for ls in lengths) / len(lengths) or 1.0) for f in FIELDS} if lengths else {}
        tf: dict[str, dict[int, float]] = {}
        for agent, fields in enumerate(counted):
            for field, words in fields.items():
                weight, b = FIELDS[field]
                scale = weight / (1 - b + b * lengths[agent][field] / average[field])
                for word, times in words.items():
                    per_agent = tf.get(word)
                    if per_agent is None:
                        tf[word] = {agent: times * scale}
                    else:
                        per_agent[agent] = per_agent.get(agent, 0.0) + times * scale
        postings = {}
        for word, per_agent in tf.items():
            idf = _idf(len(per_agent), len(agents))
            postings[word] = [(a, idf * t / (K1 + t)) for a, t in per_agent.items()]
        return postings


def _idf(df: int, n: int) -> float:
    """Lucene's idf, always positive."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def scaled(raw: float, unit: float) -> float:
    """BM25F's unbounded sum to 0..1: 1 - 5 ** -(raw / unit), `unit` STRONG times the most one word can
    weigh. So 0.8 is more than one word can ever reach: above it takes several words in common. No match
    is 0, and nothing is scaled up to fit the best agent."""
    return 1.0 - 5.0 ** -(raw / unit)
