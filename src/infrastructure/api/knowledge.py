"""The Python API's calls on entries: write, read, history, entries, resolve, summary and topics."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

from blackboard.application.knowledge.commands import (
    ListEntries,
    ReadEntry,
    ResolveEntry,
    SearchEntries,
    SummarizeBoard,
    WatchTopic,
    WriteEntry,
)
from blackboard.domain.knowledge.entries import KeyInConflict
from blackboard.infrastructure import documents
from blackboard.infrastructure.api.base import Base, as_json, names, request
from blackboard.infrastructure.documents import Entries, Entry, History, SearchHits, Summary

UNSET: Any = object()  # `resolve` without a merged value (None is a value: JSON null)


class KnowledgeCalls(Base):
    def write(
        self,
        key: str,
        value: Any,
        *,
        blackboard_id: str,
        author: str,
        entry_type: str | None = None,
        section: str | None = None,
        role: str | None = None,
        label: str | None = None,
        confidence: float | None = None,
        depends_on: Iterable[str] = (),
        topics: Iterable[str] = (),
        meta: Mapping[str, Any] | None = None,
        replaces: int | None = None,
        signal_id: str | None = None,
        token: str | None = None,
        correlation_id: str | None = None,
    ) -> Entry:
        """`blackboard write`: a new version of the key. A different author's different value is kept
        as a candidate and raises Conflict (a Refused; its `document` is the key now, with its
        candidates); a stale `replaces` raises Refused."""
        command = request(
            WriteEntry,
            {"value": as_json(value, "value")},
            blackboard_id=blackboard_id,
            key=key,
            author=author,
            entry_type=entry_type,
            section=section,
            role=role,
            label=label,
            confidence=confidence,
            depends_on=names(depends_on, "depends_on"),
            topics=names(topics, "topics"),
            meta=None if meta is None else as_json(meta, "meta"),
            replaces=replaces,
            signal_id=signal_id,
            token=token,
            correlation_id=correlation_id,
        )
        try:
            return _entry(self._parts.knowledge.write(command))
        except KeyInConflict as conflict:
            conflict.document = documents.entry(conflict.entry)  # type: ignore[attr-defined]
            raise

    def read(
        self,
        key: str,
        *,
        blackboard_id: str,
        at: int | None = None,
        signal_id: str | None = None,
        author: str | None = None,
        token: str | None = None,
    ) -> Entry:
        """`blackboard read`: the key now (or right after log position `at`), with its candidates; with
        `signal_id`, read by `author` under that signal's key permissions."""
        return _entry(
            self._parts.knowledge_queries.read(_read(key, blackboard_id, at, signal_id, author, token))
        )

    def history(
        self,
        key: str,
        *,
        blackboard_id: str,
        at: int | None = None,
        signal_id: str | None = None,
        author: str | None = None,
        token: str | None = None,
    ) -> History:
        """`blackboard read --history`: every recorded version, oldest first, with its `status`."""
        query = _read(key, blackboard_id, at, signal_id, author, token, history=True)
        return History([documents.history_version(r) for r in self._parts.knowledge_queries.history(query)])

    def entries(
        self,
        *,
        blackboard_id: str,
        section: str | None = None,
        role: str | None = None,
        author: str | None = None,
        label: str | None = None,
        entry_type: str | None = None,
        topic: str | None = None,
        prefix: str | None = None,
        conflicts: bool = False,
        at: int | None = None,
        limit: int | None = None,
        filter: Mapping[str, Any] | None = None,  # the name LangGraph's stores give it
    ) -> Entries:
        """`blackboard entries`: the board's current entries in key order, filtered (`filter`: top-level
        fields of an object value, each equal to the scalar given, as `search` takes it)."""
        query = request(
            ListEntries,
            {} if filter is None else {"filter": as_json(filter, "filter")},
            blackboard_id=blackboard_id,
            section=section,
            role=role,
            author=author,
            label=label,
            entry_type=entry_type,
            topic=topic,
            prefix=prefix,
            conflicts=conflicts,
            at=at,
            limit=limit,
        )
        return Entries(documents.entries(self._parts.knowledge_queries.entries(query)))

    def search(
        self,
        text: str,
        *,
        blackboard_id: str,
        prefix: str | None = None,
        author: str | None = None,
        entry_type: str | None = None,
        topic: str | None = None,
        section: str | None = None,
        role: str | None = None,
        label: str | None = None,
        conflicts: bool = False,
        limit: int | None = None,
        offset: int = 0,
        filter: Mapping[str, Any] | None = None,  # the name LangGraph's stores give it
    ) -> SearchHits:
        """`blackboard search`: the board's current entries holding every word of `text` (in their key,
        the strings of their value, their topics or their author; case and accents aside), best first by
        the database's rank (`score`, higher is better; ties in key order), filtered as `entries`
        filters them and by `filter`: top-level fields of an object value, each equal to the scalar
        given. `offset` hits are skipped, at most `limit` (default 20) returned."""
        query = request(
            SearchEntries,
            {} if filter is None else {"filter": as_json(filter, "filter")},
            blackboard_id=blackboard_id,
            text=text,
            prefix=prefix,
            author=author,
            entry_type=entry_type,
            topic=topic,
            section=section,
            role=role,
            label=label,
            conflicts=conflicts,
            limit=limit,
            offset=offset,
        )
        return SearchHits(documents.search_hits(self._parts.knowledge_queries.search(query)))

    def resolve(
        self,
        key: str,
        *,
        blackboard_id: str,
        author: str,
        rationale: str,
        pick: int | None = None,
        value: Any = UNSET,
        correlation_id: str | None = None,
        topics: Iterable[str] | None = None,
    ) -> Entry:
        """`blackboard resolve`: end the key's conflict with candidate `pick` or a merged `value`, published
        to `topics` (default: the key's own, and the pick's)."""
        merged = {} if value is UNSET else {"value": as_json(value, "value")}
        if topics is not None:
            merged["topics"] = names(topics, "topics")
        command = request(
            ResolveEntry,
            merged,
            blackboard_id=blackboard_id,
            key=key,
            author=author,
            rationale=rationale,
            pick=pick,
            correlation_id=correlation_id,
        )
        return _entry(self._parts.knowledge.resolve(command))

    def summary(self, *, blackboard_id: str) -> Summary:
        """`blackboard summary`: entries by type and author, signals by status, open conflicts, the latest entry."""
        query = request(SummarizeBoard, blackboard_id=blackboard_id)
        return documents.summary(self._parts.knowledge_queries.summary(query))

    def watch_topic(
        self, topic: str, *, blackboard_id: str, since: int | None = None, timeout: float | None = None
    ) -> Entry:
        """`blackboard watch --topic`: the first entry version published to the topic after `since`
        (default: now); its `position` is the next `since`. TimedOut after `timeout` seconds."""
        return self.poll_topic(topic, blackboard_id=blackboard_id, since=since, timeout=timeout)[0]

    def poll_topic(
        self, topic: str, *, blackboard_id: str, since: int | None = None, timeout: float | None = None
    ) -> Entries:
        """Every entry version published to the topic after `since` (default: now), in log order, as
        soon as there is one (each as `watch --topic --follow` prints it; the last one's `position`
        is the next `since`). TimedOut after `timeout` seconds with none."""
        query = request(WatchTopic, blackboard_id=blackboard_id, topic=topic, since=since, timeout=timeout)
        start = query.since if query.since is not None else self._parts.store.last_position()
        found = self._parts.watcher.watch_topic(query.blackboard_id, query.topic, start, query.timeout)
        return Entries([documents.published(r) for r in found])


def _read(
    key: str,
    blackboard_id: str,
    at: int | None,
    signal_id: str | None,
    author: str | None,
    token: str | None,
    history: bool = False,
) -> ReadEntry:
    if (
        signal_id is None
        and author is None
        and token is None
        and type(key) is str
        and type(blackboard_id) is str
        and (at is None or type(at) is int)
    ):
        return _plain_read(key, blackboard_id, at, history)
    return _checked_read(key, blackboard_id, at, signal_id, author, token, history)


@functools.lru_cache(maxsize=1024)
def _plain_read(key: str, blackboard_id: str, at: int | None, history: bool) -> ReadEntry:
    """The request of a read under no signal, remembered (it is frozen): its model's checks cost a few µs of a
    LangGraph store's get, which reads the same keys again and again (issue 37). A refused one raises each time."""
    return _checked_read(key, blackboard_id, at, None, None, None, history)


def _checked_read(
    key: str,
    blackboard_id: str,
    at: int | None,
    signal_id: str | None,
    author: str | None,
    token: str | None,
    history: bool,
) -> ReadEntry:
    return request(
        ReadEntry,
        blackboard_id=blackboard_id,
        key=key,
        history=history,
        at=at,
        signal_id=signal_id,
        token=token,
        reader=author,
    )


def _entry(item: Any) -> Entry:
    return documents.entry(item)
