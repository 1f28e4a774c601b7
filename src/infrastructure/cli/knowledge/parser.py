"""The grammar of the knowledge commands (docs/knowledge.md), added to the parser's commands."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def add_knowledge_commands(commands: Any, _command: Callable[..., argparse.ArgumentParser]) -> None:
    """write, read, entries, search, resolve, summary: the shared knowledge on a board (docs/knowledge.md)."""

    write = _command(
        commands,
        "write",
        "write a new version of an entry key; exit 3 if it is kept as a conflict candidate",
        "blackboard write findings/sources --blackboard ps-42 --author ps-researcher --type finding "
        '--value \'["paper A", "paper B"]\'',
        "write",
    )
    write.add_argument("key", metavar="KEY", help="1..200 characters of A-Z a-z 0-9 _ . : / -")
    given = write.add_mutually_exclusive_group(required=True)
    given.add_argument("--value", metavar="JSON", help="the value, any JSON (at most 1 MiB)")
    given.add_argument("--text", metavar="TEXT", help="the value, as a JSON string")
    given.add_argument("--file", metavar="PATH", help="the value: this UTF-8 file's text, as a JSON string")
    write.add_argument("--blackboard", required=True, metavar="ID", help="the board")
    write.add_argument("--author", required=True, help="who writes (provenance)")
    write.add_argument(
        "--type",
        dest="entry_type",
        default="note",
        metavar="T",
        help="query, finding, plan, analysis, recommendation, decision, artifact, final or note (default)",
    )
    for option, default, meaning in (
        ("--section", "default", "namespace"),
        ("--role", "assistant", "the writer's role"),
        ("--label", "unlabelled", "plan-step label"),
    ):
        write.add_argument(option, default=default, help=f"{meaning} (default {default})")
    write.add_argument("--confidence", metavar="C", help="how sure the author is, 0..1")
    write.add_argument(
        "--depends-on",
        action="append",
        default=[],
        metavar="KEY",
        help="an entry this builds on (repeatable)",
    )
    write.add_argument(
        "--topic",
        action="append",
        default=[],
        metavar="T",
        dest="topics",
        help="publish to a topic (repeatable)",
    )
    write.add_argument("--meta", metavar="JSON", help="a small JSON object of free metadata")
    write.add_argument(
        "--replaces",
        metavar="VERSION",
        help="compare-and-set: write only if VERSION is the key's version (0: never written)",
    )
    write.add_argument(
        "--signal",
        metavar="SIG",
        help="the signal whose work this is; if it has key permissions, "
        "only its claimer may write, and only its write keys",
    )
    write.add_argument("--token", help="the signal's claim token, when the claim has one")
    write.add_argument("--correlation-id", help="ties the event to the caller's own run")

    read = _command(
        commands,
        "read",
        "print an entry key's current version (and its conflict candidates)",
        "blackboard read findings/sources --blackboard ps-42 --history",
        "read",
    )
    read.add_argument("key", metavar="KEY")
    read.add_argument("--blackboard", required=True, metavar="ID", help="the board")
    read.add_argument("--history", action="store_true", help="every recorded version, oldest first")
    read.add_argument("--at", metavar="POSITION", help="as it was right after this log position")
    read.add_argument(
        "--signal",
        metavar="SIG",
        help="read under this signal: if it has key permissions, only its "
        "claimer may read, and only its read or write keys (needs --author)",
    )
    read.add_argument("--token", help="the signal's claim token, when the claim has one")
    read.add_argument("--author", metavar="NAME", help="who reads (with --signal)")

    entries = _command(
        commands,
        "entries",
        "list a board's current entries, filtered, in key order",
        "blackboard entries --blackboard ps-42 --type finding --conflicts",
        "entries",
    )
    entries.add_argument("--blackboard", required=True, metavar="ID", help="the board")
    _entry_filters(entries)
    entries.add_argument("--at", metavar="POSITION", help="as the board was right after this log position")
    entries.add_argument("--limit", metavar="N", help="at most N entries")

    search = _command(
        commands,
        "search",
        "find a board's current entries holding every word of TEXT, best first",
        'blackboard search "sources paper" --blackboard ps-42 --type finding --limit 5',
        "search",
    )
    search.add_argument(
        "text",
        metavar="TEXT",
        help="the words to find (1..1000 characters; case, accents and punctuation aside) in each entry's "
        "key, value strings, topics and author",
    )
    search.add_argument("--blackboard", required=True, metavar="ID", help="the board")
    _entry_filters(search)
    search.add_argument(
        "--filter",
        metavar="JSON",
        help='a JSON object: top-level fields the value must hold, each equal to the scalar given ({"status": "done"})',
    )
    search.add_argument("--limit", metavar="N", help="at most N entries (default 20)")
    search.add_argument("--offset", metavar="N", help="skip the first N hits (default 0)")

    resolve = _command(
        commands,
        "resolve",
        "end a key's conflict with one candidate or a merged value",
        "blackboard resolve plan/outline --blackboard ps-42 --author ps-lead --pick 3 "
        '--rationale "B cites its sources"',
        "resolve",
    )
    resolve.add_argument("key", metavar="KEY")
    resolve.add_argument("--blackboard", required=True, metavar="ID", help="the board")
    resolve.add_argument("--author", required=True, help="who resolves")
    choice = resolve.add_mutually_exclusive_group(required=True)
    choice.add_argument("--pick", metavar="VERSION", help="the candidate version that wins")
    choice.add_argument("--value", metavar="JSON", help="a merged value, any JSON")
    resolve.add_argument("--rationale", required=True, metavar="TEXT", help="why")
    resolve.add_argument(
        "--topic",
        action="append",
        dest="topics",
        metavar="T",
        help="a topic the resolution is published to (repeatable; default: the key's own, and the pick's)",
    )
    resolve.add_argument("--correlation-id", help="ties the event to the caller's own run")

    summary = _command(
        commands,
        "summary",
        "count a board's entries by type and author, its signals by status, "
        "its open conflicts, and show its latest entry",
        "blackboard summary --blackboard ps-42",
        "summary",
    )
    summary.add_argument("--blackboard", required=True, metavar="ID", help="the board")
    _add_transfer_commands(commands, _command)


def _add_transfer_commands(commands: Any, _command: Callable[..., argparse.ArgumentParser]) -> None:
    """export and import: a whole board as one JSON document, and back."""
    export = _command(
        commands,
        "export",
        "write a whole board (its signals' and entries' events) as one JSON document",
        "blackboard export ps-42 --output ps-42.json",
        "export",
    )
    export.add_argument("board", metavar="BOARD", help="the board")
    export.add_argument("--output", metavar="FILE", help="write the document to FILE (default: print it)")

    imported = _command(
        commands,
        "import",
        "recreate an exported board in a store that does not hold it; exit 3 if it does",
        "blackboard --db sqlite:///other.db import ps-42.json",
        "import_board",
    )
    imported.add_argument("file", metavar="FILE", help="an export document (- reads standard input)")


def _entry_filters(parser: argparse.ArgumentParser) -> None:
    """The filters `entries` and `search` share (commands.py `_filters` reads them back)."""
    for option in ("--section", "--role", "--author", "--label"):
        parser.add_argument(option, metavar=option[2:].upper()[0])
    parser.add_argument("--type", dest="entry_type", metavar="T", help="an entry type")
    parser.add_argument("--topic", metavar="T", help="entries published to this topic")
    parser.add_argument("--prefix", metavar="P", help="keys starting with P")
    parser.add_argument("--conflicts", action="store_true", help="only keys in conflict")
