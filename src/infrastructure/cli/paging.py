"""`signals` and `events`: a page by default (saying on stderr when more remain), `--all` for
everything. `events` streams: it reads the log a page at a time and prints each event as it goes
(text, a JSON array, or `--jsonl`), so its memory stays flat however long the log is."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Callable, Iterable
from typing import Any

from dependency_injector.wiring import Provide, inject

from blackboard.application.commands import ListSignals, ReadEvents
from blackboard.application.ports import Recorded
from blackboard.infrastructure import documents
from blackboard.infrastructure.cli import render, terminal_safe
from blackboard.infrastructure.cli.parser import PAGE
from blackboard.infrastructure.cli.render import Output
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import BlackboardSettings

Lazy = Callable[[], Any]


@inject
def signals(
    args: argparse.Namespace,
    queries: Lazy = Provide[Container.queries.provider],
    status: Lazy = Provide[Container.status.provider],
) -> Output:
    paged = not args.all and args.limit is None
    query = ListSignals(
        status=args.status,
        signal_type=args.signal_type,
        capabilities=tuple(args.capabilities),
        blackboard_id=args.blackboard,
        limit=PAGE + 1 if paged else args.limit,
        at=args.at,
        labels=tuple(args.labels),
    )
    status().require_board(query.blackboard_id)
    found = queries().list_signals(query)
    if paged and len(found) > PAGE:
        found = found[:PAGE]
        _more(
            f"the {PAGE} oldest signals shown; more remain: --limit N or --all shows more, "
            "--status, --type, --capability, --label or --blackboard fewer"
        )
    if args.at is not None:  # as it was: no marks of now
        return render.signals(found)
    return render.signals(
        found, overdue=queries().overdue(found), waiting=queries().waiting_for_workers(found)
    )


@inject
def events(
    args: argparse.Namespace,
    queries: Lazy = Provide[Container.queries.provider],
    status: Lazy = Provide[Container.status.provider],
    config: BlackboardSettings = Provide[Container.config],
) -> None:
    given = {"since": args.since, "limit": args.limit, "blackboard_id": args.blackboard}
    query = ReadEvents(**{name: value for name, value in given.items() if value is not None})
    status().require_board(query.blackboard_id)
    limit = None if args.all else query.limit or PAGE
    found = queries().logged(query.since, query.blackboard_id)  # read a page at a time, as it is printed
    write = _jsonl if args.jsonl else _json_array if config.json else _text
    shown, last = write(itertools.islice(found, limit))
    if query.limit is None and shown == limit and next(found, None) is not None:
        _more(
            f"{limit} events shown; more remain after position {last}: --since {last} shows the next page, "
            "--limit N or --all more"
        )


def _jsonl(records: Iterable[Recorded]) -> tuple[int, int]:
    return _each(records, lambda r, _: json.dumps(documents.jsonable(documents.event(r))) + "\n")


def _json_array(records: Iterable[Recorded]) -> tuple[int, int]:
    """What `json.dumps(documents, indent=2)` prints, one element at a time."""

    def item(record: Recorded, first: bool) -> str:
        text = json.dumps(documents.jsonable(documents.event(record)), indent=2).replace("\n", "\n  ")
        return ("[\n  " if first else ",\n  ") + text

    shown, last = _each(records, item)
    sys.stdout.write("\n]\n" if shown else "[]\n")
    return shown, last


def _text(records: Iterable[Recorded]) -> tuple[int, int]:
    shown, last = _each(
        records, lambda r, _: terminal_safe(render.event_line(r)) + "\n"
    )  # as `main` prints text
    if not shown:
        print("no events")
    return shown, last


def _each(records: Iterable[Recorded], line: Callable[[Recorded, bool], str]) -> tuple[int, int]:
    """Write each record as `line` makes it (told whether it is the first); how many, and the last position."""
    shown, last = 0, 0
    for record in records:
        sys.stdout.write(line(record, shown == 0))
        shown, last = shown + 1, record.position
    return shown, last


def _more(message: str) -> None:
    print(f"blackboard: {message}", file=sys.stderr)
