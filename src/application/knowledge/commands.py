"""Requests of the knowledge side (write, resolve, read, list, summarise), validated at the boundary.

Every field names its rule, so a refusal says which option broke which rule and nothing is written.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, WithJsonSchema, field_validator, model_validator

from blackboard.application.commands import Command, Message
from blackboard.application.entry_values import check_value, json_size
from blackboard.application.fields import Count, Fraction, Position, Seconds, Token
from blackboard.application.fields import Printable as Name
from blackboard.application.json_values import check_json
from blackboard.application.knowledge.search import MAX_QUERY
from blackboard.application.knowledge.search import words as search_words
from blackboard.domain.knowledge.entries import CONTENT, KEY_PATTERN
from blackboard.domain.signals import NonEmpty, SignalIdText

MAX_META_BYTES = 16 * 1024  # `meta` is small free metadata; content goes in the value


Key = Annotated[str, Field(pattern=f"^{KEY_PATTERN.pattern}$")]  # topic names follow the same rule
EntryType = Literal[
    "query", "finding", "plan", "analysis", "recommendation", "decision", "artifact", "final", "note"
]


def _needs_signal(given: str | None, info: ValidationInfo, why: str) -> str | None:
    """A field that only means something with a signal (`signal_id`, declared before it) refuses to come
    without one: a rule of the field, so every interface names the field (`--token`, `token`)."""
    if given is not None and info.data.get("signal_id") is None:
        raise ValueError(f"needs a signal (signal_id, --signal SIG): {why}")
    return given


class WriteEntry(Command):
    """Write a new version of a key (or a candidate, if it disagrees with the key's holder)."""

    blackboard_id: Name
    key: Key
    value: Any
    author: Name
    entry_type: EntryType = "note"
    section: Name = "default"
    role: Name = "assistant"
    label: Name = "unlabelled"
    confidence: Fraction | None = None
    depends_on: tuple[Key, ...] = ()
    topics: tuple[Key, ...] = ()
    meta: dict[str, Any] = Field(default_factory=dict)
    replaces: Position | None = None  # compare-and-set: 0 writes only if the key was never written
    signal_id: SignalIdText | None = None  # the signal whose work produced it
    token: Token | None = None  # the claim's token, when the signal's key permissions need it

    @field_validator("token")
    @classmethod
    def _token_with_signal(cls, token: str | None, info: ValidationInfo) -> str | None:
        return _needs_signal(token, info, "it is that signal's claim token")

    @field_validator("value")
    @classmethod
    def _fits(cls, value: Any) -> Any:
        check_value(value)
        return value

    @field_validator("meta")
    @classmethod
    def _small(cls, meta: dict[str, Any]) -> dict[str, Any]:
        check_json(meta, "meta")
        if (size := json_size(meta)) > MAX_META_BYTES:
            raise ValueError(f"must be at most {MAX_META_BYTES} bytes of JSON, got {size}")
        return meta

    def content(self) -> dict[str, Any]:
        """What the written version holds: the fields the domain names its content (entries.CONTENT)."""
        return self.model_dump(include=set(CONTENT))


class ResolveEntry(Command):
    """End a key's conflict with one candidate (`pick`) or a merged `value`, saying why."""

    blackboard_id: Name
    key: Key
    author: Name
    rationale: NonEmpty
    pick: Count | None = None
    value: Any = None
    topics: tuple[Key, ...] | None = None  # the resolution's topics; None: those the key had (and the pick's)

    @field_validator("value")
    @classmethod
    def _fits(cls, value: Any) -> Any:
        return WriteEntry._fits(value)

    @model_validator(mode="after")
    def _one_choice(self) -> ResolveEntry:
        if (self.pick is None) == ("value" not in self.model_fields_set):
            raise ValueError("give exactly one of --pick VERSION and --value JSON")
        return self


class ReadEntry(Message):
    blackboard_id: Name
    key: Key
    history: bool = False
    at: Position | None = None  # as the key was right after this log position
    signal_id: SignalIdText | None = None  # read under this signal's key permissions
    token: Token | None = None  # its claim's token
    reader: Name | None = None  # who reads: the claimer, when the signal has key permissions

    @field_validator("token", "reader")
    @classmethod
    def _under_a_signal(cls, given: str | None, info: ValidationInfo) -> str | None:
        return _needs_signal(given, info, "it says who reads under that signal")

    @model_validator(mode="after")
    def _reader_with_signal(self) -> ReadEntry:
        if self.signal_id is not None and self.reader is None:
            raise ValueError("--signal needs --author NAME: the reader, who must be the signal's claimer")
        return self


# a JSON scalar (a filter's value): one type list, so a tool's schema says null is a value, not "left out"
Scalar = Annotated[
    str | int | float | bool | None, WithJsonSchema({"type": ["string", "number", "boolean", "null"]})
]
SEARCH_LIMIT = 20  # hits a search returns unless told otherwise
MAX_FILTER_FIELDS = 16


class EntryCriteria(Message):
    """What `entries` and `search` filter a board's current entries by: every criterion set must hold;
    `filter`'s value fields are each an equality on a top-level field of an object value."""

    blackboard_id: Name
    section: Name | None = None
    role: Name | None = None
    author: Name | None = None
    label: Name | None = None
    entry_type: EntryType | None = None
    topic: Key | None = None
    prefix: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.:/-]{1,200}$")] | None = None
    conflicts: bool = False
    filter: dict[Name, Scalar] | None = None

    @field_validator("filter", mode="before")
    @classmethod
    def _storable_filter(cls, given: Any) -> Any:
        check_json(given, "filter")  # first, as for a value: depth, NUL, 64-bit integers (what both compare)
        return given

    @field_validator("filter")
    @classmethod
    def _small_filter(cls, given: dict[str, Any] | None) -> dict[str, Any] | None:
        if given is not None and len(given) > MAX_FILTER_FIELDS:
            raise ValueError(f"must name at most {MAX_FILTER_FIELDS} value fields, got {len(given)}")
        return given


class ListEntries(EntryCriteria):
    at: Position | None = None
    limit: Count | None = None


class SearchEntries(EntryCriteria):
    """`search`: the board's current entries holding every word of `text` (application/knowledge/search.py),
    best first by the store's rank, filtered as `entries` filters; `offset` hits skipped, at most `limit`
    returned."""

    text: Annotated[str, Field(min_length=1, max_length=MAX_QUERY)]
    limit: Count = SEARCH_LIMIT
    offset: Position = 0

    @field_validator("text")
    @classmethod
    def _has_words(cls, text: str) -> str:
        if not search_words(text):
            raise ValueError("must hold a word to search for (letters or digits)")
        return text

    def words(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(search_words(self.text)))


class SummarizeBoard(Message):
    blackboard_id: Name


class WatchTopic(Message):
    """`watch --topic`: entry versions published to a topic of a board after `since` (None: from now),
    waiting up to `timeout` seconds for one."""

    blackboard_id: Name
    topic: Key
    since: Position | None = None
    timeout: Seconds | None = None  # None: as long as it takes
