"""The labelled set for matching by text (tests/fixtures/matching): 109 public agent files, requests with the
agent that is the only reasonable pick for each, and the fixed rule that keeps a third of them aside."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "matching"
AGENTS = FOLDER / "agents"


@dataclass(frozen=True, slots=True)
class Task:
    text: str
    agent: str  # the intended agent
    reworded: bool  # worded without the agent's name and description words (in the terms of its body)

    @property
    def held_out(self) -> bool:
        """The set's split rule (tasks.yaml): kept aside for the final figure, never used to tune."""
        return int(hashlib.sha256(self.text.encode("utf-8")).hexdigest(), 16) % 3 == 0


@dataclass(frozen=True, slots=True)
class LabelledSet:
    tasks: tuple[Task, ...]
    unrelated: tuple[str, ...]  # requests no agent of the folder is about
    reworded_ignores: frozenset[str]

    def part(self, held_out: bool) -> list[Task]:
        return [t for t in self.tasks if t.held_out is held_out]


@cache
def load() -> LabelledSet:
    import yaml

    data: dict[str, Any] = yaml.safe_load((FOLDER / "tasks.yaml").read_text(encoding="utf-8"))
    return LabelledSet(
        tasks=tuple(Task(t["task"], t["agent"], bool(t["reworded"])) for t in data["tasks"]),
        unrelated=tuple(data["unrelated"]),
        reworded_ignores=frozenset(data["reworded_ignores"]),
    )


def words(text: str, ignored: frozenset[str]) -> set[str]:
    """The set's own notion of a word (tasks.yaml): two letters or more, lower-cased, stop-words and
    `ignored` aside, Snowball-stemmed. Fixed with the set, whatever the matcher does."""
    import Stemmer
    from bm25s.stopwords import STOPWORDS_EN

    stemmer = Stemmer.Stemmer("english")
    dropped = {*STOPWORDS_EN, *ignored}
    return {stemmer.stemWord(w) for w in re.findall(r"(?u)\b\w\w+\b", text.lower()) if w not in dropped}
