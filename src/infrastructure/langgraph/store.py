"""`BlackboardStore`: LangGraph's long-term memory (`langgraph.store.base.BaseStore`) kept as a board's
entries, so what a graph remembers is on the board with everything else: every version with its author,
compare-and-set, and reads as of a log position (docs/langgraph.md, "Store").

An item `(namespace, key)` is the entry key of its labels and key, each escaped, joined by `/`:
`("users", "alice")` + `"prefs"` is `users/alice/prefs`. A board key holds only `A-Z a-z 0-9 _ . : / -`,
so a character outside `A-Z a-z 0-9 _ . -` is written as `:XX` per UTF-8 byte (upper-case hex): `/` is
`:2F`, `:` is `:3A`, a space `:20`, `é` `:C3:A9`. A label never holds `.` (LangGraph's rule), an escaped
label never holds `/`, and the escape is the only spelling of a character, so two different items never
share an entry key, and a key reads back as exactly one item. A board key that is not such a spelling
(no `/`, an empty label, `.` in a label, a bad or needless escape) is not an item: the store skips it.

The value is the entry's value (a JSON object). Deleting writes a version whose value is JSON null (the
board deletes nothing: the history keeps every version); an item whose entry holds null is absent. An
entry that another interface wrote with a value that is not an object reads as `{"value": <it>}`.
`created_at` is the time of the first version since the item was last absent (kept in the meta of later
versions, `{"langgraph": {"created_at": ...}}`), `updated_at` the current version's.
"""

from __future__ import annotations

import asyncio
import functools
import random
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from blackboard.application.fields import MAX_NAME
from blackboard.application.json_values import check_json, check_unicode
from blackboard.application.knowledge.commands import MAX_FILTER_FIELDS, check_value
from blackboard.application.knowledge.search import MAX_QUERY, words
from blackboard.domain.errors import InvalidInput, NotFound, RuleViolation
from blackboard.domain.knowledge.entries import ENTRY_TYPES, KEY_PATTERN, StaleVersion
from blackboard.infrastructure.api import Blackboard
from blackboard.infrastructure.api.base import as_json
from blackboard.infrastructure.documents import Entry

MAX_KEY = 200  # the board's entry keys (docs/knowledge.md)
LITERAL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
LITERAL_TEXT = re.compile(r"[A-Za-z0-9_.\-]*")  # text of LITERAL characters only
ESCAPE = re.compile(r":([0-9A-F]{2})")
META = "langgraph"  # the entry meta's field the store keeps created_at in
OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
MAX_COUNT = 2**63 - 1  # what SQLite and PostgreSQL store, as the Python API's counts
# a plain put that lost the race for its entry (another writer's version came first) reads again after a pause
# drawn from 0 to BACKOFF seconds, doubled at each loss up to BACKOFF_MAX: as often as it takes
BACKOFF = 0.002
BACKOFF_MAX = 0.05
SEARCH_PAGE = 100  # hits read per call of the board's text search


class VersionConflict(RuleViolation):
    """A compare-and-set put (`expected_version=`) found the item at another version; nothing was written.
    A `blackboard.Refused` (exit code 3), like the board's own `--replaces` refusal."""

    def __init__(self, namespace: tuple[str, ...], key: str, expected: int, version: int) -> None:
        super().__init__(
            f"expected_version: item {key!r} of namespace {namespace} is at version {version}, not {expected} "
            "(0: never written); a compare-and-set writes only over the current version (nothing was written)"
        )
        self.namespace, self.key, self.expected, self.version = namespace, key, expected, version


class ItemInConflict(RuleViolation):
    """The item's entry key is in conflict on the board (two authors wrote different values through another
    interface): a put would only add a candidate. Resolve it first (`blackboard resolve`)."""

    def __init__(self, entry_key: str, holder: str) -> None:
        super().__init__(
            f"{entry_key} is in conflict on the board (held by {holder}); nothing was written: run "
            f"`blackboard resolve {entry_key} --pick VERSION | --value JSON --rationale TEXT` first"
        )
        self.entry_key = entry_key


@dataclass(frozen=True, slots=True)
class ItemVersion:
    """One recorded version of an item, oldest first in `history`: `value` None is a deletion."""

    version: int
    value: dict[str, Any] | None
    author: str
    written_at: datetime
    position: int  # the board's log position: `get(..., at=position)` sees the item as this left it
    status: Literal["accepted", "candidate", "resolution"]


# ---------------------------------------------------------------- keys


def escape(text: str, field: str = "key") -> str:
    """`text` in the characters a board key holds (`:XX` per UTF-8 byte of any other character)."""
    if not isinstance(text, str):
        raise InvalidInput(field, f"must be a string, got {type(text).__name__}")
    return _escaped(text, field)


@functools.lru_cache(maxsize=4096)
def _escaped(text: str, field: str) -> str:
    """`escape` of a string, remembered: a get escapes its namespace's labels and its key each time (a few µs of
    a store get's 50, issue 37); a string it refuses raises again each time (an error is not remembered)."""
    check_unicode(text, field)
    if LITERAL_TEXT.fullmatch(text):  # the usual label or key: itself (every read spells its item's key)
        return text
    return "".join(c if c in LITERAL else "".join(f":{b:02X}" for b in c.encode()) for c in text)


def unescape(text: str) -> str | None:
    """The text `escape` spelled as `text`, or None when `escape` would never write `text`."""
    raw = bytearray()
    at = 0
    for found in ESCAPE.finditer(text):
        raw += text[at : found.start()].encode()
        raw.append(int(found.group(1), 16))
        at = found.end()
    raw += text[at:].encode()
    try:
        plain = raw.decode()
    except UnicodeDecodeError:
        return None
    # the one spelling only: `:41` is not `A`, and a `:` that starts no escape is no item's
    return plain if escape(plain) == text else None


def entry_key(namespace: tuple[str, ...], key: str) -> str:
    """The board key of an item (checked against the board's rules by the caller)."""
    return "/".join([*(escape(label, "namespace") for label in namespace), escape(key)])


def namespace_prefix(labels: tuple[str, ...]) -> str:
    return "".join(escape(label, "namespace") + "/" for label in labels)


def item_of(board_key: str) -> tuple[tuple[str, ...], str] | None:
    """The item a board key spells, or None when it spells none."""
    *labels, last = board_key.split("/")
    if not labels:
        return None
    namespace = tuple(unescape(label) for label in labels)
    key = unescape(last)
    if key is None or any(label is None or not label or "." in label for label in namespace):
        return None
    return namespace, key  # type: ignore[return-value] - None ruled out above


def fits(board_key: str) -> bool:
    return KEY_PATTERN.fullmatch(board_key) is not None


# ---------------------------------------------------------------- the store


class BlackboardStore(BaseStore):
    """A LangGraph store whose items are the entries of one board (`blackboard_id`), written by `author`.

    `board` is a `blackboard.Blackboard` (shared; the store does not close it) or a database URL (or None:
    the CLI's default store), which the store opens and closes with `close()` or `with`. Every call is the
    Python API's, so the board's rules, errors and threads hold; the async methods run the same calls on a
    worker thread (`asyncio.to_thread`). Beyond `BaseStore`: `put(..., expected_version=)` (compare-and-set),
    `get(..., at=)` and `search(..., at=)` (as of a log position), `history()` and `version()`.
    """

    supports_ttl = False  # put(..., ttl=minutes) raises NotImplementedError, as BaseStore does

    def __init__(
        self,
        board: Blackboard | str | None = None,
        *,
        blackboard_id: str,
        author: str = "langgraph",
        entry_type: str = "note",
    ) -> None:
        if entry_type not in ENTRY_TYPES:
            raise InvalidInput("entry_type", f"must be one of {', '.join(ENTRY_TYPES)}, got {entry_type!r}")
        self._owned = not isinstance(board, Blackboard)
        self.board: Blackboard = board if isinstance(board, Blackboard) else Blackboard(board)
        self.blackboard_id = blackboard_id
        self.author = author
        self.entry_type = entry_type

    # ------------------------------------------------------------ opening and closing

    def close(self) -> None:
        """Close the board if the store opened it (from a URL); a shared `Blackboard` stays open."""
        if self._owned:
            self.board.close()

    def __enter__(self) -> BlackboardStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ BaseStore

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Each op in order of the list, as InMemoryStore does it: every get, search and listing sees the
        items as they were before the batch, then the puts are written (the last one of an item wins), each
        its own board write (a batch is not one transaction)."""
        ops = list(ops)
        for op in ops:
            if not isinstance(op, GetOp | SearchOp | ListNamespacesOp | PutOp):
                raise InvalidInput("ops", f"unknown operation {type(op).__name__}")
            validate_op_namespace(op)  # labels: strings, not empty, no "."
            if isinstance(op, PutOp):  # every put checked before anything is written
                _check_put(op)
                _writable(op.namespace, op.key, op.value)
                if op.value is not None:
                    _check_value(op.value)
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._namespaces(op))
            else:
                puts[(op.namespace, op.key)] = op
                results.append(None)
        for op in puts.values():
            self._put(op.namespace, op.key, op.value)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` on a worker thread: the board's calls are synchronous (and thread-safe)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # ------------------------------------------------------------ the board's own

    def get(  # type: ignore[override] - `at` added
        self,
        namespace: tuple[str, ...],
        key: str,
        *,
        refresh_ttl: bool | None = None,
        at: int | None = None,
    ) -> Item | None:
        """The item, or None; with `at` (a log position, `blackboard events`), as it was right after it. The
        op `batch` runs for a get, without the batch around it (`BaseStore.get` makes a batch of one)."""
        return self._get(namespace, str(key), at)

    async def aget(  # type: ignore[override]
        self,
        namespace: tuple[str, ...],
        key: str,
        *,
        refresh_ttl: bool | None = None,
        at: int | None = None,
    ) -> Item | None:
        return await asyncio.to_thread(self.get, namespace, key, refresh_ttl=refresh_ttl, at=at)

    def search(  # type: ignore[override] - `at` added
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
        at: int | None = None,
    ) -> list[SearchItem]:
        """Items under the prefix that match `filter`: in entry key order, or with `query`, those holding
        every word of it, best first (the board's text search, `blackboard search`: words of the key, of
        the value's strings, of the author; `score` is its rank). With `at` (no query), as the board was
        right after that log position."""
        op = SearchOp(namespace_prefix, filter, limit, offset, query)
        if at is None:
            return super().search(
                namespace_prefix,
                query=query,
                filter=filter,
                limit=limit,
                offset=offset,
                refresh_ttl=refresh_ttl,
            )
        validate_op_namespace(op)
        return self._search(op, at)

    async def asearch(  # type: ignore[override]
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
        at: int | None = None,
    ) -> list[SearchItem]:
        return await asyncio.to_thread(
            lambda: self.search(
                namespace_prefix, query=query, filter=filter, limit=limit, offset=offset, at=at
            )
        )

    def put(  # type: ignore[override] - `expected_version` and `author` added
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | None | NotProvided = NOT_PROVIDED,
        expected_version: int | None = None,
        author: str | None = None,
    ) -> None:
        """Write the item (a new version of its entry). `expected_version=N`: only if the item's entry is at
        version N (0: never written), else `VersionConflict` and nothing is written; `author`: who writes
        this version (default: the store's)."""
        if expected_version is None and author is None:
            return super().put(namespace, key, value, index, ttl=ttl)
        if expected_version is not None:
            _count(expected_version, "expected_version")
        op = PutOp(namespace, str(key), value, index, None if ttl is NOT_PROVIDED else ttl)  # type: ignore[arg-type]
        validate_op_namespace(op)
        if not namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        if namespace[0] == "langgraph":
            raise InvalidNamespaceError(f'Root label for namespace cannot be "langgraph". Got: {namespace}')
        _check_put(op)
        if value is None:
            raise InvalidInput("value", "must be a mapping (a JSON object); delete() deletes")
        self._put(op.namespace, op.key, value, expected_version, author)
        return None

    async def aput(  # type: ignore[override]
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | None | NotProvided = NOT_PROVIDED,
        expected_version: int | None = None,
        author: str | None = None,
    ) -> None:
        await asyncio.to_thread(
            lambda: self.put(
                namespace, key, value, index, ttl=ttl, expected_version=expected_version, author=author
            )
        )

    def history(self, namespace: tuple[str, ...], key: str, *, at: int | None = None) -> list[ItemVersion]:
        """Every recorded version of the item, oldest first, with its author, time and log position (a
        deletion's `value` is None); [] for an item never written."""
        validate_op_namespace(GetOp(namespace, key))
        board_key = entry_key(namespace, str(key))
        if not namespace or not fits(board_key):
            return []
        try:
            found = self.board.history(board_key, blackboard_id=self.blackboard_id, at=at)
        except NotFound:
            return []
        return [
            ItemVersion(v.version, _value(v.value), v.author, v.written_at, v.position, v.status)
            for v in found
        ]

    async def ahistory(
        self, namespace: tuple[str, ...], key: str, *, at: int | None = None
    ) -> list[ItemVersion]:
        return await asyncio.to_thread(self.history, namespace, key, at=at)

    def version(self, namespace: tuple[str, ...], key: str) -> int:
        """The item's entry version now: the `expected_version` a compare-and-set put names (0: never
        written; a deletion is a version too)."""
        entry = self._entry(namespace, str(key))
        return 0 if entry is None else entry.version

    async def aversion(self, namespace: tuple[str, ...], key: str) -> int:
        return await asyncio.to_thread(self.version, namespace, key)

    def position(self) -> int:
        """The board's log position now: a later `get(..., at=it)` sees the items as they are now."""
        return self.board.position()

    # ------------------------------------------------------------ the ops

    def _entry(self, namespace: tuple[str, ...], key: str, at: int | None = None) -> Entry | None:
        validate_op_namespace(GetOp(namespace, key))
        board_key = entry_key(namespace, key)
        if not namespace or not fits(board_key):
            return None  # no item can be there
        try:
            return self.board.read(board_key, blackboard_id=self.blackboard_id, at=at)
        except NotFound:
            return None

    def _get(self, namespace: tuple[str, ...], key: str, at: int | None = None) -> Item | None:
        entry = self._entry(namespace, key, at)
        if entry is None or entry.value is None:
            return None
        return _item(Item, entry, namespace, key)

    def _put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any] | None,
        expected: int | None = None,
        author: str | None = None,
    ) -> None:
        board_key = _writable(namespace, key, value)
        pause = BACKOFF
        while True:  # ends: each round lost is another writer's version written
            entry = self._entry(namespace, key)
            version = 0 if entry is None else entry.version
            if expected is not None and expected != version:
                raise VersionConflict(namespace, key, expected, version)
            if entry is not None and entry.conflict is not None:
                raise ItemInConflict(board_key, entry.author)
            if value is None and (entry is None or entry.value is None):
                return  # deleting what is absent writes nothing
            meta: dict[str, Any] = {}
            if value is not None and entry is not None and entry.value is not None:
                meta = {META: {"created_at": _created(entry).isoformat()}}
            try:
                self.board.write(
                    board_key,
                    None if value is None else dict(value),
                    blackboard_id=self.blackboard_id,
                    author=self.author if author is None else author,
                    entry_type=self.entry_type,
                    meta=meta,
                    replaces=version,
                )
                return
            except StaleVersion:
                if expected is not None:  # another writer came first: the compare-and-set fails
                    raise VersionConflict(namespace, key, expected, self.version(namespace, key)) from None
            time.sleep(random.uniform(0, pause))  # apart from the writers it lost to, before reading again
            pause = min(BACKOFF_MAX, pause * 2)

    def _search(self, op: SearchOp, at: int | None = None) -> list[SearchItem]:
        limit, offset = _count(op.limit, "limit"), _count(op.offset, "offset")
        if op.filter is not None and not isinstance(op.filter, Mapping):
            raise InvalidInput("filter", f"must be a mapping of value fields, got {type(op.filter).__name__}")
        _check_filter(op.filter or {})
        text = op.query if op.query else None  # "" or None: no text, every item (entry key order)
        if text is not None and not isinstance(text, str):
            raise InvalidInput("query", f"must be a string, got {type(text).__name__}")
        if text is not None:
            text = _query_words(text)
        if text is not None and at is not None:
            raise InvalidInput(
                "at", "text search reads the board as it is now; search with at= takes no query"
            )
        if limit == 0:
            return []
        prefix = namespace_prefix(op.namespace_prefix)
        if prefix and not fits(prefix):
            return []
        found: list[SearchItem] = []
        narrowed = _narrowing(op.filter or {})
        for entry, score in self._candidates(prefix or None, text, at, narrowed, offset + limit):
            item = item_of(entry.key)
            if item is None or entry.value is None:
                continue
            value = _value(entry.value)
            if op.filter and not all(_matches(value.get(k), v) for k, v in op.filter.items()):  # type: ignore[union-attr]
                continue
            found.append(_item(SearchItem, entry, *item, score=score))
            if len(found) == offset + limit:
                break
        return found[offset:]

    def _candidates(
        self,
        prefix: str | None,
        text: str | None,
        at: int | None,
        narrowed: dict[str, str],
        wanted: int,
    ) -> Iterator[tuple[Entry, float | None]]:
        """The entries under `prefix` whose values hold `narrowed`'s fields (in the database: see
        `_narrowing`): all of them in key order, or (`text`) those holding every word of it, best first (the
        board's text search, `Blackboard.search`), read a page at a time."""
        given = {"filter": narrowed} if narrowed else {}
        if text is None:  # growing reads: most searches stop after the first (`wanted`: limit + offset)
            size, seen = max(1, min(wanted, MAX_COUNT)), 0
            while True:
                entries = self.board.entries(
                    blackboard_id=self.blackboard_id, prefix=prefix, at=at, limit=size, **given
                )
                for entry in list(entries)[seen:]:
                    yield entry, None
                if len(entries) < size:
                    return
                seen, size = len(entries), size * 4
        page, start = SEARCH_PAGE, 0
        while True:
            try:
                hits = self.board.search(
                    text, blackboard_id=self.blackboard_id, prefix=prefix, limit=page, offset=start, **given
                )
            except InvalidInput as refused:
                raise InvalidInput(
                    "query" if refused.field == "text" else refused.field, refused.rule
                ) from None
            for hit in hits:
                yield hit, hit.score
            if len(hits) < page:
                return
            start += page

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        limit, offset = _count(op.limit, "limit"), _count(op.offset, "offset")
        if op.max_depth is not None and _count(op.max_depth, "max_depth") < 1:
            raise InvalidInput("max_depth", "must be at least 1")
        conditions: tuple[MatchCondition, ...] = op.match_conditions or ()
        prefix = ""
        for condition in conditions:
            if condition.match_type not in ("prefix", "suffix"):
                raise InvalidInput("match_type", f"must be prefix or suffix, got {condition.match_type!r}")
            if condition.match_type == "prefix":  # the labels before the first wildcard narrow the read
                fixed = []
                for label in condition.path:
                    if label == "*":
                        break
                    fixed.append(label)
                prefix = max(prefix, namespace_prefix(tuple(fixed)), key=len)
        if prefix and not fits(prefix):
            return []
        namespaces = set()
        for entry in self.board.entries(blackboard_id=self.blackboard_id, prefix=prefix or None):
            item = item_of(entry.key)
            if item is None or entry.value is None:
                continue
            namespace = item[0]
            if all(_path_matches(c, namespace) for c in conditions):
                namespaces.add(namespace if op.max_depth is None else namespace[: op.max_depth])
        return sorted(namespaces)[offset : offset + limit]


# ---------------------------------------------------------------- helpers


def _value(value: Any) -> dict[str, Any] | None:
    """An entry's value as an item's: null is no item, an object itself, anything else `{"value": it}`."""
    if value is None or isinstance(value, dict):
        return value
    return {"value": value}


def _created(entry: Entry) -> datetime:
    kept = (entry.meta or {}).get(META)
    if isinstance(kept, dict) and isinstance(kept.get("created_at"), str):
        try:
            return datetime.fromisoformat(kept["created_at"])
        except ValueError:
            pass
    return entry.written_at


def _item(kind: type[Any], entry: Entry, namespace: tuple[str, ...], key: str, **score: Any) -> Any:
    return kind(
        value=_value(entry.value),
        key=key,
        namespace=namespace,
        created_at=_created(entry),
        updated_at=entry.written_at,
        **score,
    )


def _check_put(op: PutOp) -> None:
    if op.ttl is not None:
        raise NotImplementedError(
            "TTL is not supported by BlackboardStore: the board keeps every version; put with ttl=None"
        )
    if op.value is None:
        return  # a delete: of nothing, when there is no such item
    if not op.namespace:  # a root label "langgraph" is refused by put(), not by a PutOp (as LangGraph has it)
        raise InvalidNamespaceError("Namespace cannot be empty.")


def _writable(namespace: tuple[str, ...], key: str, value: Any) -> str:
    """The entry key a put writes, once its key fits the board's and its value is a mapping (or None)."""
    board_key = entry_key(namespace, key)
    if not fits(board_key):
        raise InvalidInput(
            "key",
            f"namespace {namespace} and key {key!r} make the entry key {board_key[:60]}... of "
            f"{len(board_key)} characters once escaped; the board's keys hold at most {MAX_KEY}",
        )
    if value is not None and not isinstance(value, Mapping):
        raise InvalidInput("value", f"must be a mapping (a JSON object), got {type(value).__name__}")
    return board_key


def _check_value(value: Mapping[str, Any]) -> None:
    """The value as the board's write checks it (`as_json`, then WriteEntry's rules and size), so that a batch
    refuses a bad put before writing any."""
    try:
        check_value(as_json(dict(value), "value"))
    except ValueError as exc:
        raise InvalidInput("value", str(exc)) from None


def _query_words(text: str) -> str | None:
    """A query as the board's search takes it, any text accepted as InMemoryStore does: its words (the
    search's rule), the first ones up to MAX_QUERY characters; none (`"*"`, `"?!"`) is no query."""
    kept: list[str] = []
    size = -1
    for word in words(text):
        size += len(word) + 1
        if size > MAX_QUERY:
            break
        kept.append(word)
    return " ".join(kept) or None


def _count(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise InvalidInput(field, f"must be a whole number from 0 to {MAX_COUNT}, got {value!r}")
    return value


def _check_filter(given: Mapping[str, Any]) -> None:
    for value in given.values():
        if isinstance(value, Mapping):
            for name, inner in value.items():
                if isinstance(name, str) and name.startswith("$"):
                    if name not in OPERATORS:
                        raise InvalidInput(
                            "filter", f"unsupported operator {name}; the operators are {', '.join(OPERATORS)}"
                        )
                    if name in ("$gt", "$gte", "$lt", "$lte") and not _number(inner):
                        raise InvalidInput("filter", f"{name} compares numbers, got {inner!r}")
            _check_filter({k: v for k, v in value.items() if not str(k).startswith("$")})


def _narrowing(given: Mapping[str, Any]) -> dict[str, str]:
    """The fields of a store filter the board's `filter` can test in the database, as they are: a string
    wanted in a top-level field (a string equals only that string, under `_matches` as under the board's
    `_same`), but "value" (an entry whose value is no object reads as `{"value": it}`, which the board's
    filter does not see). Every item it passes is still tested by `_matches`; what it drops could not match."""
    narrowed = {
        name: wanted
        for name, wanted in given.items()
        if isinstance(name, str) and 0 < len(name) <= MAX_NAME and name != "value" and isinstance(wanted, str)
    }
    narrowed = dict(list(narrowed.items())[:MAX_FILTER_FIELDS])
    try:
        check_json(narrowed, "filter")  # text the board takes (a NUL, a lone surrogate: left to `_matches`)
    except InvalidInput:
        return {}
    return narrowed


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _matches(value: Any, wanted: Any) -> bool:
    """InMemoryStore's filter rules: equal values, a nested mapping field by field, a list item by item,
    and the operators $eq, $ne, $gt, $gte, $lt, $lte (a comparison with a value that is not a number is
    false, where InMemoryStore raises)."""
    if isinstance(wanted, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in wanted):
            return all(_operator(value, name, operand) for name, operand in wanted.items())
        return isinstance(value, Mapping) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_matches(v, w) for v, w in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


def _operator(value: Any, name: str, operand: Any) -> bool:
    if name == "$eq":
        return bool(value == operand)
    if name == "$ne":
        return bool(value != operand)
    if not _number(value):
        return False
    if name == "$gt":
        return bool(value > operand)
    if name == "$gte":
        return bool(value >= operand)
    if name == "$lt":
        return bool(value < operand)
    return bool(value <= operand)


def _path_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    mine = (
        namespace[: len(path)]
        if condition.match_type == "prefix"
        else namespace[len(namespace) - len(path) :]
    )
    return all(p == "*" or p == n for p, n in zip(path, mine, strict=True))


__all__ = ["BlackboardStore", "ItemInConflict", "ItemVersion", "VersionConflict", "entry_key", "item_of"]
