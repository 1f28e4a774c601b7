"""The `blackboard` command line (primary adapter): argv in, text or JSON out, errors as exit codes."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from infrastructure.persistence.engine import DEFAULT_URL, StoreSettings, make_engine

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def _settings(args: argparse.Namespace) -> StoreSettings:
    return StoreSettings(
        url=args.db or os.environ.get("BLACKBOARD_DB", DEFAULT_URL),
        synchronous=os.environ.get("BLACKBOARD_SQLITE_SYNCHRONOUS", "FULL"),
        busy_timeout=float(os.environ.get("BLACKBOARD_SQLITE_BUSY_TIMEOUT", "30")),
    )


def db_upgrade(args: argparse.Namespace) -> int:
    from infrastructure.persistence.schema import current_revision, upgrade

    engine = make_engine(_settings(args))
    upgrade(engine)
    print(f"schema at revision {current_revision(engine)}")
    return EXIT_OK


def projection_rebuild(args: argparse.Namespace) -> int:
    from infrastructure.persistence.rebuild import BlackboardProjectionRebuilder
    from infrastructure.persistence.schema import ensure_schema

    engine = make_engine(_settings(args))
    ensure_schema(engine)
    rebuilder = BlackboardProjectionRebuilder(engine)
    if sys.stderr.isatty():
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("replaying events", total=None)
            folded = rebuilder.rebuild(args.resume, lambda done, last: bar.update(task, completed=done, total=last))
    else:
        folded = rebuilder.rebuild(args.resume)
    print(f"read model rebuilt: {folded} events replayed")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="blackboard", description="Event-sourced coordination for AI agents.")
    parser.add_argument("--db", metavar="URL", help=f"event store URL (env BLACKBOARD_DB; default {DEFAULT_URL})")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    db = commands.add_parser("db", help="the database schema").add_subparsers(dest="db_command", required=True)
    db.add_parser(
        "upgrade", help="create or upgrade the schema", description="Create or upgrade the schema (alembic).",
        epilog="example: blackboard --db sqlite:///board.db db upgrade",
    ).set_defaults(run=db_upgrade)

    proj = commands.add_parser("projection", help="the signal read model").add_subparsers(
        dest="projection_command", required=True
    )
    rebuild = proj.add_parser(
        "rebuild", help="rebuild the read model by replaying every event",
        description="Clear the signal read model and replay the whole event log into it.",
        epilog="example: blackboard projection rebuild",
    )
    rebuild.add_argument("--resume", action="store_true", help="continue an interrupted rebuild")
    rebuild.set_defaults(run=projection_rebuild)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place an unexpected error becomes one line
        print(f"blackboard: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
