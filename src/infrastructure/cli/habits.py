"""`schema`, `completion` and `status`: what a user of the command line reaches for besides the board's work."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from dependency_injector.wiring import Provide, inject

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.cli.signal_text import Output
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import BlackboardSettings

Lazy = Callable[[], Any]
SCHEMA_FILES = {"signal": "agent-signal.schema.json", "entry": "entry.schema.json"}


def schema_text(document: str) -> str:
    """The JSON schema shipped inside the package (`blackboard/infrastructure/schemas/`)."""
    from importlib import resources

    return (resources.files("blackboard.infrastructure") / "schemas" / SCHEMA_FILES[document]).read_text(
        "utf-8"
    )


def schema(args: argparse.Namespace) -> Output:
    text = schema_text(args.document)
    return Output(json.loads(text), text.rstrip("\n"))


def completion(args: argparse.Namespace) -> Output:
    """The script that makes the shell ask `blackboard` itself (argcomplete, in `main`) what may come next."""
    import argcomplete

    text = argcomplete.shellcode(["blackboard"], shell=args.shell)
    return Output({"shell": args.shell, "script": text}, text.rstrip("\n"))


@inject
def status(
    args: argparse.Namespace,
    queries: Lazy = Provide[Container.status.provider],
    store: Lazy = Provide[Container.event_store.provider],
    notifier: Lazy = Provide[Container.notifier.provider],
    config: BlackboardSettings = Provide[Container.config],
) -> Output | None:
    from blackboard.infrastructure import documents
    from blackboard.infrastructure.cli import status_view

    if args.interval is not None and not args.watch:
        raise InvalidInput("--interval", "goes with --watch: how often the overview is redrawn")
    if args.interval is not None and not 0.1 <= args.interval <= 3600:
        raise InvalidInput("--interval", f"must be 0.1 to 3600 seconds, got {args.interval:g}")
    if args.blackboard is not None and not args.blackboard:
        raise InvalidInput("--blackboard", "must not be empty")
    position = store().last_position() if args.watch else 0  # before the first overview reads
    labels = tuple(args.labels)
    boards = queries().overview(args.blackboard, labels=labels)
    if args.watch:
        status_view.Watch(
            lambda: queries().overview(args.blackboard, labels=labels),
            store(),
            notifier(),
            position,
            args.interval,
            lambda: queries().live_workers(args.blackboard),
        ).run(boards, config.json)
        return None
    return Output(
        documents.jsonable([documents.status(b) for b in boards]),
        "" if config.json else status_view.text(boards, queries().live_workers(args.blackboard)),
    )  # rich: text only
