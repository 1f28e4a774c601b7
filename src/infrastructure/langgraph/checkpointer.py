"""`BlackboardSaver`: LangGraph's checkpointer (`langgraph.checkpoint.base.BaseCheckpointSaver`) on a board.

Every checkpoint and pending write is an event in the log, in the thread's own stream (`<board>\\x1d<thread>`:
CheckpointSaved, CheckpointWritesSaved, CheckpointThreadDeleted, CheckpointsPruned), so a board's export,
import and rebuild carry them; reads go to rows folded from those events (persistence/checkpoints.py), the
newest checkpoint of a thread found through the primary key however long its history. `prune`,
`delete_for_runs` and `delete_thread` are events too: reads stop seeing what they removed, the log keeps it.
When the read model is behind the log (a rebuild under way or interrupted, an import), reads and the writes
that decide on the rows catch it up first (SqlCheckpoints), so a put is read back at once.
`at(position)` is the board's checkpoints as they were at a log position (time travel), replayed from the log.
Values go through LangGraph's serializer (`self.serde.dumps_typed`): the event holds its type tag and its
bytes in base64, the metadata as JSON. The serializer is strict unless another is given (serde.py): stored bytes
come back as LangGraph's safe types, the `allowed_types` and plain data, never as a call, on every read (the rows,
time travel, a copy), whoever wrote them. docs/langgraph.md, "Checkpointer".
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from pydantic import TypeAdapter, ValidationError
from sqlalchemy import Engine

from blackboard.application.bounds import MAX_NAME
from blackboard.application.fields import BoardName
from blackboard.application.json_values import check_unicode
from blackboard.domain import checkpoints as rules
from blackboard.domain.errors import InvalidInput, RuleViolation
from blackboard.domain.events import (
    CheckpointEvent,
    CheckpointRef,
    CheckpointSaved,
    CheckpointsPruned,
    CheckpointThreadDeleted,
    CheckpointWrite,
    CheckpointWritesSaved,
    TypedBlob,
)
from blackboard.infrastructure.langgraph.serde import strict_serializer
from blackboard.infrastructure.persistence.checkpoints import Row, SqlCheckpoints, Write

MAX_ID = 1000  # a namespace, checkpoint id, task id, path or run id: characters at most
MAX_THREAD = MAX_NAME  # a thread id: it follows the board in the stream id (200, separator, 200)
STRATEGIES = ("keep_latest", "delete")
METADATA = {"actor": "langgraph", "command": "BlackboardSaver"}  # each event's metadata in the log
_BOARD = TypeAdapter(BoardName)


class PastCheckpoints(RuleViolation):
    """A saver of the past (`at`) only reads."""

    def __init__(self, position: int) -> None:
        super().__init__(
            f"this saver reads the checkpoints as they were at log position {position}: it writes nothing "
            "(write through the saver it came from)"
        )


class UnreadableValue(RuleViolation):
    """A stored value that the saver's serializer cannot read (a type tag it does not know, such as `pickle`
    for the strict one, or bytes that are not what the tag says): nothing is rebuilt from it."""

    def __init__(self, thread_id: str, checkpoint_id: str, what: str, kind: str, error: Exception) -> None:
        super().__init__(
            f"thread {thread_id!r}, checkpoint {checkpoint_id!r}: its {what} is stored as {kind!r}, which this "
            f"saver's serializer does not read ({type(error).__name__}: {str(error)[:200]}); nothing was rebuilt "
            "from it"
        )


class BlackboardSaver(BaseCheckpointSaver[int]):
    """LangGraph's checkpointer on one board of a store (SQLite or PostgreSQL).

    `BlackboardSaver(Blackboard(url), board="b")`: the `Blackboard` (the Python API) lends its database; once
    it is closed, every call raises `blackboard.Closed`. Graph threads (`configurable.thread_id`) are the board's.
    Values are read back as LangGraph's safe types and `allowed_types` (classes, or `(module, name)` pairs), any
    other type as its data (serde.py); `serde=` replaces that serializer with one of the caller's, as it is.
    """

    def __init__(
        self,
        blackboard: Any,
        board: str,
        *,
        serde: SerializerProtocol | None = None,
        at: int | None = None,
        allowed_types: Iterable[Any] = (),
    ) -> None:
        if serde is not None and allowed_types:
            raise InvalidInput(
                "allowed_types",
                "applies to the saver's own serializer; a serde you pass reads the types it allows "
                "(LangGraph's JsonPlusSerializer(allowed_msgpack_modules=[...]))",
            )
        super().__init__(serde=serde if serde is not None else strict_serializer(allowed_types))
        try:
            board = _BOARD.validate_python(board)
        except ValidationError as exc:
            raise InvalidInput("board", _rule(exc)) from None
        engine = getattr(getattr(blackboard, "_parts", None), "engine", None)
        if not isinstance(engine, Engine):
            raise InvalidInput("blackboard", "must be an open blackboard.Blackboard on SQLite or PostgreSQL")
        if at is not None and (isinstance(at, bool) or not isinstance(at, int) or at < 0):
            raise InvalidInput("at", f"must be a log position (an integer, 0 or more), got {at!r}")
        self.blackboard = blackboard
        self.board = board
        self.position = at

    @property
    def _log(self) -> SqlCheckpoints:
        """The board's checkpoints in the blackboard's database: Closed once the blackboard is closed. Its
        reads (and the writes that decide on the rows) first catch the read model up with the log when it is
        behind (a rebuild, an import), through the blackboard's own projector, as the board's queries do."""
        parts = self.blackboard._parts
        return SqlCheckpoints(parts.engine, self.board, parts.projector.catch_up)

    def at(self, position: int) -> BlackboardSaver:
        """The board's checkpoints as they were once the log held `position` (time travel): reads only."""
        return BlackboardSaver(self.blackboard, self.board, serde=self.serde, at=position)

    # ---- reads ----

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        thread, ns, checkpoint_id = _thread(config), _ns(config), _checkpoint_id(config)
        if self.position is not None:
            found = next(self._past(thread, ns, checkpoint_id, None), None)
        else:
            found = self._log.get(thread, ns, checkpoint_id)
        return None if found is None else self._tuple(*found)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        thread = ns = checkpoint_id = None
        if config is not None:
            configurable = _configurable(config, "config")
            thread = _thread(config) if configurable.get("thread_id") is not None else None
            ns = _ns(config) if configurable.get("checkpoint_ns") is not None else None
            checkpoint_id = _checkpoint_id(config)
        before_id = _checkpoint_id(before, "before") if before is not None else None
        if filter is not None and not isinstance(filter, Mapping):
            raise InvalidInput(
                "filter", f"must be a mapping of metadata keys to values, got {type(filter).__name__}"
            )
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise InvalidInput("limit", f"must be a count (an integer, 0 or more), got {limit!r}")
        if limit == 0:
            return
        if self.position is not None:
            found = self._past(thread, ns, checkpoint_id, before_id)
        else:  # the limit goes to the database unless the metadata filter comes after it
            found = self._log.rows(thread, ns, checkpoint_id, before_id, None if filter else limit)
        given = 0
        for row, writes in found:
            item = self._tuple(row, writes)
            if filter and not all(item.metadata.get(k) == v for k, v in filter.items()):
                continue
            yield item
            given += 1
            if limit is not None and given >= limit:
                return

    def _past(
        self, thread: str | None, ns: str | None, checkpoint_id: str | None, before: str | None
    ) -> Iterator[tuple[Row, list[Write]]]:
        """As `SqlCheckpoints.rows`, from the log's events up to `self.position` (newest first)."""
        events = [r.event for r in self._log.history(thread, self.position)]
        state = rules.fold(e for e in events if isinstance(e, CheckpointEvent))
        keys = sorted(
            k
            for k in state.saved
            if (ns is None or k[1] == ns)
            and (checkpoint_id is None or k[2] == checkpoint_id)
            and (before is None or k[2] < before)
        )
        keys.sort(key=lambda k: k[2], reverse=True)  # newest first, then by thread and namespace, as the rows
        for key in keys:
            saved = state.saved[key]
            blob = saved.metadata_blob
            row = Row(
                saved.thread_id,
                saved.checkpoint_ns,
                saved.checkpoint_id,
                saved.parent_checkpoint_id,
                _pair(saved.checkpoint),
                None if blob else json.dumps(saved.checkpoint_metadata),
                _pair(blob) if blob else None,
            )
            writes = [
                Write(w.task_id, w.write.channel, _pair(w.write.value)) for w in state.ordered_writes(key)
            ]
            yield row, writes

    def _tuple(self, row: Row, writes: list[Write]) -> CheckpointTuple:
        def config(checkpoint_id: str) -> RunnableConfig:
            return {
                "configurable": {
                    "thread_id": row.thread_id,
                    "checkpoint_ns": row.checkpoint_ns,
                    "checkpoint_id": checkpoint_id,
                }
            }

        if row.metadata_json is not None:
            metadata = json.loads(row.metadata_json)
        else:
            assert row.metadata_blob is not None
            metadata = self._load(row, row.metadata_blob, "metadata")
        return CheckpointTuple(
            config=config(row.checkpoint_id),
            checkpoint=self._load(row, row.checkpoint, "checkpoint"),
            metadata=metadata,
            parent_config=config(row.parent_checkpoint_id) if row.parent_checkpoint_id else None,
            pending_writes=[
                (
                    w.task_id,
                    w.channel,
                    self._load(row, w.value, f"write of task {w.task_id!r} to {w.channel!r}"),
                )
                for w in writes
            ],
        )

    def _load(self, row: Row, blob: tuple[str, bytes], what: str) -> Any:
        """A stored value, as the serializer reads it; UnreadableValue when it cannot."""
        try:
            return self.serde.loads_typed(blob)
        except Exception as exc:  # noqa: BLE001 - whatever the serializer cannot read, named with its place
            raise UnreadableValue(row.thread_id, row.checkpoint_id, what, blob[0], exc) from None

    # ---- writes: each an event ----

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        self._writable()
        thread, ns, parent = _thread(config), _ns(config), _checkpoint_id(config)
        if not isinstance(checkpoint, Mapping):
            raise InvalidInput(
                "checkpoint", f"must be a LangGraph Checkpoint (a mapping), got {type(checkpoint).__name__}"
            )
        checkpoint_id = _text(checkpoint.get("id"), "checkpoint.id")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidInput("metadata", f"must be a mapping, got {type(metadata).__name__}")
        as_json, as_blob = self._metadata(get_serializable_checkpoint_metadata(config, dict(metadata or {})))
        blob = self._blob(checkpoint, "checkpoint")

        def build(version: int, _conn: Any) -> list[CheckpointEvent]:
            return [
                CheckpointSaved(
                    **self._envelope(thread, version),
                    checkpoint_ns=ns,
                    checkpoint_id=checkpoint_id,
                    parent_checkpoint_id=parent,
                    checkpoint=blob,
                    checkpoint_metadata=as_json,
                    metadata_blob=as_blob,
                )
            ]

        self._log.append(thread, build, METADATA, reads_rows=False)
        return {"configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._writable()
        thread, ns = _thread(config), _ns(config)
        checkpoint_id = _checkpoint_id(config)
        if checkpoint_id is None:
            raise InvalidInput(
                "config.configurable.checkpoint_id", "is required: the checkpoint the writes belong to"
            )
        task_id = _text(task_id, "task_id")
        task_path = _text(task_path, "task_path", empty=True)
        if isinstance(writes, str | bytes) or not isinstance(writes, Sequence):
            raise InvalidInput("writes", "must be a list of (channel, value) pairs")
        items = []
        for i, pair in enumerate(writes):
            if not isinstance(pair, Sequence) or isinstance(pair, str | bytes) or len(pair) != 2:
                raise InvalidInput(f"writes[{i}]", "must be a (channel, value) pair")
            channel = _text(pair[0], f"writes[{i}].channel")
            idx = WRITES_IDX_MAP.get(channel, i)
            items.append(CheckpointWrite(idx=idx, channel=channel, value=self._blob(pair[1], f"writes[{i}]")))
        if not items:
            return

        def build(version: int, conn: Any) -> list[CheckpointEvent]:
            held = self._log.held_writes(conn, thread, ns, checkpoint_id, task_id)
            fresh = [w for w in items if not (rules.keeps(w.idx) and w.idx in held)]
            if not fresh:  # every one stored already: nothing new to record
                return []
            return [
                CheckpointWritesSaved(
                    **self._envelope(thread, version),
                    checkpoint_ns=ns,
                    checkpoint_id=checkpoint_id,
                    task_id=task_id,
                    task_path=task_path,
                    writes=tuple(fresh),
                )
            ]

        self._log.append(thread, build, METADATA)

    def delete_thread(self, thread_id: str) -> None:
        self._writable()
        thread = _thread_id(thread_id, "thread_id")

        def build(version: int, conn: Any) -> list[CheckpointEvent]:
            if not self._log.refs(conn, thread) and not self._log.any_writes(conn, thread):
                return []  # nothing that reads see: nothing to delete
            return [CheckpointThreadDeleted(**self._envelope(thread, version), reason="delete_thread")]

        self._log.append(thread, build, METADATA)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest", keep_last: int = 1) -> None:
        """Per namespace of each thread, keep the newest `keep_last` checkpoints (`keep_latest`, 1 by default
        as LangGraph's) or none (`delete`); reads stop seeing the others and their writes, the log keeps them."""
        self._writable()
        threads = _thread_ids(thread_ids, "thread_ids")
        if strategy not in STRATEGIES:
            raise InvalidInput("strategy", f"must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
        if isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 1:
            raise InvalidInput("keep_last", f"must be a count of checkpoints (1 or more), got {keep_last!r}")
        keep = 0 if strategy == "delete" else keep_last
        reason = "prune delete" if keep == 0 else f"prune keep_latest {keep}"
        for thread in threads:

            def build(version: int, conn: Any, thread: str = thread) -> list[CheckpointEvent]:
                by_ns: dict[str, list[str]] = {}
                for ns, checkpoint_id in self._log.refs(conn, thread):
                    by_ns.setdefault(ns, []).append(checkpoint_id)
                gone = [
                    CheckpointRef(checkpoint_ns=ns, checkpoint_id=i)
                    for ns, ids in by_ns.items()
                    for i in ids[: max(0, len(ids) - keep)]
                ]
                if not gone:
                    return []
                return [
                    CheckpointsPruned(
                        **self._envelope(thread, version), checkpoints=tuple(gone), reason=reason
                    )
                ]

            self._log.append(thread, build, METADATA)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Hide the checkpoints these runs saved (their metadata's `run_id`), and their writes, on every thread."""
        self._writable()
        runs = _thread_ids(run_ids, "run_ids", MAX_ID)  # a run id is not in a stream id
        for thread, refs in self._log.runs(runs).items():

            def build(
                version: int, _conn: Any, thread: str = thread, refs: list = refs
            ) -> list[CheckpointEvent]:
                gone = tuple(CheckpointRef(checkpoint_ns=ns, checkpoint_id=i) for ns, i in refs)
                return [
                    CheckpointsPruned(
                        **self._envelope(thread, version), checkpoints=gone, reason="delete_for_runs"
                    )
                ]

            self._log.append(thread, build, METADATA, reads_rows=False)  # `runs` read them, caught up

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """The source thread's checkpoints and writes, as reads see them, saved again on the target thread."""
        self._writable()
        source = _thread_id(source_thread_id, "source_thread_id")
        target = _thread_id(target_thread_id, "target_thread_id")
        found = list(self._log.rows(source, None, None, None, None))
        if not found:
            return
        found.sort(key=lambda rw: (rw[0].checkpoint_ns, rw[0].checkpoint_id))  # oldest first
        # read before the append's transaction: a read that found the read model behind would catch it up, which
        # waits for that transaction (SQLite's one writer)
        tasks = [self._log.task_writes(source, row.checkpoint_ns, row.checkpoint_id) for row, _ in found]

        def build(version: int, _conn: Any) -> list[CheckpointEvent]:
            events: list[CheckpointEvent] = []
            for (row, _), task_writes in zip(found, tasks, strict=True):
                events.append(
                    CheckpointSaved(
                        **self._envelope(target, version + len(events)),
                        checkpoint_ns=row.checkpoint_ns,
                        checkpoint_id=row.checkpoint_id,
                        parent_checkpoint_id=row.parent_checkpoint_id,
                        checkpoint=_typed(row.checkpoint),
                        checkpoint_metadata=json.loads(row.metadata_json)
                        if row.metadata_json
                        else _run_only(self._load(row, row.metadata_blob, "metadata")),
                        metadata_blob=_typed(row.metadata_blob) if row.metadata_blob else None,
                    )
                )
                for task in task_writes:
                    events.append(
                        CheckpointWritesSaved(
                            **self._envelope(target, version + len(events)),
                            checkpoint_ns=row.checkpoint_ns,
                            checkpoint_id=row.checkpoint_id,
                            task_id=task.task_id,
                            task_path=task.task_path,
                            writes=task.writes,
                        )
                    )
            return events

        self._log.append(target, build, METADATA, reads_rows=False)  # `rows` read them, caught up

    # ---- async: the same calls, in a thread ----

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        found = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def aprune(
        self, thread_ids: Sequence[str], *, strategy: str = "keep_latest", keep_last: int = 1
    ) -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy, keep_last=keep_last)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    # ---- helpers ----

    def _writable(self) -> None:
        """Before every write: not a look at the past, and the caller may write checkpoints on this board
        (application/callers.py: a run on its own signal's board, while its claim holds)."""
        if self.position is not None:
            raise PastCheckpoints(self.position)
        self.blackboard._parts.authority.checkpoint(self.board)

    def _envelope(self, thread: str, version: int) -> dict[str, Any]:
        return {
            "blackboard_id": self.board,
            "version": version + 1,
            "occurred_at": datetime.now(UTC),
            "thread_id": thread,
        }

    def _blob(self, value: Any, field: str) -> TypedBlob:
        try:
            kind, data = self.serde.dumps_typed(value)
        except Exception as exc:  # noqa: BLE001 - whatever the serializer refuses, named as the argument
            raise InvalidInput(field, f"must be a value LangGraph's serializer takes: {exc}") from None
        return TypedBlob(type=kind, base64=base64.b64encode(data).decode("ascii"))

    def _metadata(self, metadata: Mapping[str, Any]) -> tuple[dict[str, Any], TypedBlob | None]:
        """JSON when it round-trips as JSON (LangGraph's usually does): readable in the log; else a blob, with
        the JSON keeping only its `run_id` (as text) for the fold's run_id column (`delete_for_runs`). A lone
        surrogate anywhere in it is refused: the log's JSON could not be read back (nor its event loaded)."""
        _valid_text(metadata, "metadata")
        try:
            as_json = json.loads(json.dumps(metadata, allow_nan=False))
        except (TypeError, ValueError):
            as_json = None
        if as_json is not None and as_json == metadata and "\x00" not in json.dumps(as_json):
            return as_json, None
        return _run_only(metadata), self._blob(dict(metadata), "metadata")


def _valid_text(value: Any, field: str) -> None:
    """Every string in `value` (keys too, however nested) is valid Unicode: `check_unicode`."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            check_unicode(item, field)
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)


def _run_only(metadata: Any) -> dict[str, Any]:
    """Beside a metadata blob, the JSON keeps the run's id only, as text (the fold's `str(run_id)`)."""
    run_id = metadata.get("run_id") if isinstance(metadata, Mapping) else None
    return {} if run_id is None else {"run_id": str(run_id)}


def _pair(blob: TypedBlob) -> tuple[str, bytes]:
    return blob.type, base64.b64decode(blob.base64)


def _typed(pair: tuple[str, bytes]) -> TypedBlob:
    return TypedBlob(type=pair[0], base64=base64.b64encode(pair[1]).decode("ascii"))


def _rule(exc: ValidationError) -> str:
    return exc.errors()[0]["msg"]


def _configurable(config: Any, field: str) -> Mapping[str, Any]:
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    if not isinstance(configurable, Mapping):
        raise InvalidInput(f"{field}.configurable", "must be a mapping (LangGraph's RunnableConfig)")
    return configurable


def _thread(config: Any) -> str:
    return _thread_id(_configurable(config, "config").get("thread_id"), "config.configurable.thread_id")


def _thread_id(value: Any, field: str, most: int = MAX_THREAD) -> str:
    if value is None:
        raise InvalidInput(field, "is required")
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    text = _text(value, field, most=most)
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise InvalidInput(field, "must not contain control characters")
    return text


def _thread_ids(values: Any, field: str, most: int = MAX_THREAD) -> list[str]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | set | frozenset):
        raise InvalidInput(field, f"must be a list of ids, got {type(values).__name__}")
    return [_thread_id(v, f"{field}[{i}]", most) for i, v in enumerate(values)]


def _ns(config: Any) -> str:
    return _text(
        _configurable(config, "config").get("checkpoint_ns") or "",
        "config.configurable.checkpoint_ns",
        empty=True,
    )


def _checkpoint_id(config: Any, field: str = "config") -> str | None:
    value = _configurable(config, field).get("checkpoint_id")
    return None if value is None else _text(value, f"{field}.configurable.checkpoint_id")


def _text(value: Any, field: str, empty: bool = False, most: int = MAX_ID) -> str:
    if not isinstance(value, str):
        raise InvalidInput(field, f"must be a string, got {type(value).__name__}")
    if not value and not empty:
        raise InvalidInput(field, "must not be empty")
    if len(value) > most:
        raise InvalidInput(field, f"must be at most {most} characters, got {len(value)}")
    if "\x00" in value:
        raise InvalidInput(field, "must not contain NUL characters")
    return check_unicode(value, field)  # the database's text is UTF-8
