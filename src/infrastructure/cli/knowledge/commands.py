"""The knowledge commands (write, read, entries, search, resolve, summary): argv in, a use case called, an Output back.

The knowledge side is imported inside each command, so wiring this module costs a signal command nothing."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dependency_injector.wiring import Provide, inject

from blackboard.domain.errors import InvalidInput, RuleViolation
from blackboard.infrastructure import documents
from blackboard.infrastructure.cli.signal_text import Output
from blackboard.infrastructure.composition.container import Container

if TYPE_CHECKING:
    from blackboard.domain.knowledge.entries import Entry, KeyInConflict


Lazy = Callable[[], Any]  # a provider: called only once the input has been validated


class KeptAsCandidate(RuleViolation):
    """A write kept as a conflict candidate: exit 3, with the key (and its candidates) printed."""

    def __init__(self, conflict: KeyInConflict) -> None:
        super().__init__(str(conflict))
        self.output = entry_output(conflict.entry)


@inject
def write(args: argparse.Namespace, knowledge: Lazy = Provide[Container.knowledge.provider]) -> Output:
    from blackboard.application.knowledge.commands import WriteEntry
    from blackboard.domain.knowledge.entries import KeyInConflict

    command = WriteEntry(  # --token without --signal: the model's rule
        blackboard_id=args.blackboard,
        key=args.key,
        value=_value(args),
        author=args.author,
        entry_type=args.entry_type,
        section=args.section,
        role=args.role,
        label=args.label,
        confidence=args.confidence,
        depends_on=tuple(args.depends_on),
        topics=tuple(args.topics),
        meta=_json(args.meta, "--meta") if args.meta is not None else {},
        replaces=args.replaces,
        signal_id=args.signal,
        token=args.token,
        correlation_id=args.correlation_id,
    )
    try:
        return entry_output(knowledge().write(command))
    except KeyInConflict as conflict:
        raise KeptAsCandidate(conflict) from None


@inject
def read(args: argparse.Namespace, queries: Lazy = Provide[Container.knowledge_queries.provider]) -> Output:
    from blackboard.application.knowledge.commands import ReadEntry

    if args.signal is not None and args.author is None:
        raise InvalidInput(
            "--author", "is required with --signal: the reader, who must be the signal's claimer"
        )
    query = ReadEntry(
        blackboard_id=args.blackboard,
        key=args.key,
        history=args.history,
        at=args.at,
        signal_id=args.signal,
        token=args.token,
        reader=args.author,
    )
    if query.history:
        versions = documents.jsonable([documents.history_version(r) for r in queries().history(query)])
        return Output(versions, "\n".join(_history_line(v) for v in versions))
    return entry_output(queries().read(query))


@inject
def entries(
    args: argparse.Namespace,
    queries: Lazy = Provide[Container.knowledge_queries.provider],
    status: Lazy = Provide[Container.status.provider],
) -> Output:
    from blackboard.application.knowledge.commands import ListEntries

    query = ListEntries(blackboard_id=args.blackboard, **_filters(args), at=args.at, limit=args.limit)
    status().require_board(query.blackboard_id)  # an unknown board is exit 4, not an empty list
    found = queries().entries(query)
    return Output(
        documents.jsonable(documents.entries(found)), "\n".join(_line(e) for e in found) or "no entries"
    )


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    """The filters `entries` and `search` share, as their request models name them."""
    names = ("section", "role", "author", "label", "entry_type", "topic", "prefix", "conflicts")
    return {name: getattr(args, name) for name in names}


@inject
def search(
    args: argparse.Namespace,
    queries: Lazy = Provide[Container.knowledge_queries.provider],
    status: Lazy = Provide[Container.status.provider],
) -> Output:
    from blackboard.application.knowledge.commands import SearchEntries

    given = {"limit": args.limit, "offset": args.offset}
    if args.filter is not None:
        given["filter"] = _json(args.filter, "--filter")
    query = SearchEntries(
        blackboard_id=args.blackboard,
        text=args.text,
        **_filters(args),
        **{name: value for name, value in given.items() if value is not None},
    )
    status().require_board(query.blackboard_id)  # an unknown board is exit 4, as for `entries`
    hits = queries().search(query)
    lines = [f"{hit.score:<9.3g} {_line(hit.entry)}" for hit in hits]
    return Output(documents.jsonable(documents.search_hits(hits)), "\n".join(lines) or "no entries found")


@inject
def resolve(args: argparse.Namespace, knowledge: Lazy = Provide[Container.knowledge.provider]) -> Output:
    from blackboard.application.knowledge.commands import ResolveEntry

    merged = {"value": _json(args.value, "--value")} if args.value is not None else {}
    command = ResolveEntry(
        blackboard_id=args.blackboard,
        key=args.key,
        author=args.author,
        pick=args.pick,
        rationale=args.rationale,
        correlation_id=args.correlation_id,
        topics=args.topics,
        **merged,
    )
    return entry_output(knowledge().resolve(command))


@inject
def summary(
    args: argparse.Namespace, queries: Lazy = Provide[Container.knowledge_queries.provider]
) -> Output:
    from blackboard.application.knowledge.commands import SummarizeBoard

    found = documents.jsonable(
        documents.summary(queries().summary(SummarizeBoard(blackboard_id=args.blackboard)))
    )
    latest = found["latest_entry"]
    lines = [
        f"blackboard {found['blackboard_id']}: {found['entries']} entries",
        "  by type: " + _counts(found["entries_by_type"]),
        "  by author: " + _counts(found["entries_by_author"]),
        "  signals: " + _counts(found["signals_by_status"]),
        "  open conflicts: " + (", ".join(found["open_conflicts"]) or "none"),
        f"  latest: {latest['key']} v{latest['version']} by {latest['author']}"
        if latest
        else "  latest: none",
    ]
    usage = found["usage"]
    if usage["runs"]:
        lines.append("  runner usage: " + _usage(usage))
        lines += [f"    {agent}: {_usage(total)}" for agent, total in usage["by_agent"].items()]
    return Output(found, "\n".join(lines))


def _usage(total: dict[str, Any]) -> str:
    """`3 runs, 12,400 tokens in, 2,100 out, $0.0421 (+1 unpriced), 9 turns, 48.2s` (`cost unknown (3 unpriced)`
    for runs none of which had a price)"""
    from blackboard.infrastructure.cli.status_view import cost_text

    return (
        f"{total['runs']} run(s), {total['input_tokens']:,} tokens in, {total['output_tokens']:,} out, "
        f"{cost_text(total['cost_usd'], total['unpriced_runs'])}, {total['turns']} turn(s), "
        f"{total['duration_ms'] / 1000:.1f}s"
    )


@inject
def watch_topic(
    args: argparse.Namespace,
    watcher: Lazy = Provide[Container.watcher.provider],
    store: Lazy = Provide[Container.event_store.provider],
) -> Output | None:
    """`watch --topic`: the first entry version published to the topic after the watch began (or
    `--since`); with `--follow`, every one, a JSON line each, flushed as it comes, until interrupted
    or `--timeout`. The log position to resume from goes to stderr as it ends."""
    from blackboard.application.errors import WaitTimedOut
    from blackboard.application.knowledge.commands import WatchTopic

    if args.blackboard is None:
        raise InvalidInput("--blackboard", "is required with --topic: topics belong to one board")
    if args.signal_types:
        raise InvalidInput("--topic", "watches entries; --type watches signals: give one of them")
    given = {"since": args.since, "timeout": args.timeout}
    query = WatchTopic(
        blackboard_id=args.blackboard,
        topic=args.topic,
        **{name: value for name, value in given.items() if value is not None},
    )
    position = query.since if query.since is not None else store().last_position()  # from now, taken first
    timeout = query.timeout
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            found = watcher().watch_topic(query.blackboard_id, query.topic, position, left)
            if not args.follow:
                first = documents.published_entry(found[0])
                print(f"position {found[0].position}", file=sys.stderr)
                return entry_output(first)
            for record in found:
                document = documents.jsonable(documents.published(record))
                print(json.dumps(document, ensure_ascii=False), flush=True)
                position = record.position
    except WaitTimedOut:
        if not args.follow:  # said with the timeout given, not the little left of it at the last wait
            raise WaitTimedOut(f"an entry on topic {query.topic}", timeout) from None
        print(f"position {position}", file=sys.stderr)  # --follow: the timeout is how long to follow
        return None
    except KeyboardInterrupt:
        print(f"position {position}", file=sys.stderr)
        raise


def entry_output(entry: Entry) -> Output:
    lines = [_line(entry), f"  value: {_short(entry.current.value, 2000)}"]
    v = entry.current
    details = [f"section {v.section}", f"role {v.role}", f"label {v.label}"]
    details += [f"confidence {v.confidence:g}"] if v.confidence is not None else []
    details += [f"depends on {', '.join(v.depends_on)}"] if v.depends_on else []
    details += [f"topics {', '.join(v.topics)}"] if v.topics else []
    details += [f"signal {v.signal_id}"] if v.signal_id else []
    lines.append(
        "  " + "; ".join(details) + f"; written {v.written_at:%Y-%m-%d %H:%M:%S} at position {v.position}"
    )
    lines += [f"  candidate v{c.version} by {c.author}: {_short(c.value)}" for c in entry.candidates]
    return Output(documents.jsonable(documents.entry(entry)), "\n".join(lines))


def _line(entry: Entry) -> str:
    v = entry.current
    conflict = f"  IN CONFLICT ({len(entry.candidates)} candidates)" if entry.in_conflict else ""
    head = f"{entry.key}  v{v.version} {v.entry_type:<14} by {v.author}"
    return f"{head}  [{entry.blackboard_id}] {_short(v.value)}{conflict}"


def _history_line(document: dict[str, Any]) -> str:
    why = f" ({document['rationale']})" if document.get("rationale") else ""
    return (
        f"v{document['version']:<4} {document['status']:<10} by {document['author']}  at position "
        f"{document['position']}: {_short(document['value'])}{why}"
    )


def _short(value: Any, width: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items()) or "none"


def _value(args: argparse.Namespace) -> Any:
    if args.value is not None:
        return _json(args.value, "--value")
    if args.text is not None:
        return args.text
    from blackboard.domain.knowledge.entries import MAX_VALUE_BYTES

    try:
        if os.path.getsize(args.file) > MAX_VALUE_BYTES:
            raise InvalidInput("--file", f"must be at most {MAX_VALUE_BYTES} bytes (1 MiB)")
        with open(args.file, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput("--file", f"must be a readable UTF-8 file: {exc}") from None


def _json(raw: str, option: str) -> Any:
    from blackboard.infrastructure.cli.json_input import parse_json

    return parse_json(raw, option)  # an object where one is needed: the command model's rule
