"""`blackboard show SIG`: one signal, printed from its row when nothing needs the domain's models.

A script or an agent calls `show` more than any other command, and a CLI call's cost is mostly its
imports: reading the row and printing it (persistence/signal_rows.py) imports SQLAlchemy and no
pydantic. `--at`, `--transcript`, a read model behind the log, an unknown signal, or one past the
earliest deadline it can have take the full path (the queries, the models, the documents), which
prints the same (tests/unit/test_signal_rows.py).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from blackboard.infrastructure.cli.signal_text import Output, signal_text
from blackboard.infrastructure.container import Container
from blackboard.infrastructure.injection import Provide, inject
from blackboard.infrastructure.waiting import waiting_for_a_worker

if TYPE_CHECKING:
    from blackboard.infrastructure.settings import BlackboardSettings

Lazy = Callable[[], Any]  # a provider: called only once the input has been validated
SIGNAL_ID = re.compile(r"sig-[0-9a-f]{8}")  # domain.signals.SIGNAL_ID_PATTERN (a test holds them alike)


@inject
def show(
    args: argparse.Namespace,
    engine: Lazy = Provide[Container.engine.provider],
    config: BlackboardSettings = Provide[Container.config],
    queries: Lazy = Provide[Container.queries.provider],
    registry: Lazy = Provide[Container.agent_registry.provider],
    read_model: Lazy = Provide[Container.read_model.provider],
    clock: Lazy = Provide[Container.clock.provider],
) -> Output:
    # a malformed id takes the full path, which refuses it before it opens (or creates) the database
    shown = None
    if args.at is None and not args.transcript and SIGNAL_ID.fullmatch(args.signal_id):
        shown = _from_row(args.signal_id, engine(), config)
    shown = shown or _full(args, queries)
    doc = shown.data
    if args.at is None and not args.transcript and isinstance(doc, dict) and doc.get("status") == "POSTED":
        from blackboard.infrastructure.cli.budget_wait import budget_wait

        why = budget_wait(
            engine(), doc["signal_id"], doc["blackboard_id"], config, queries, registry, read_model, clock
        )
        if why is not None:
            shown = Output(shown.data, f"{shown.text}\n  {why}")
    return shown


def _from_row(signal_id: str, engine: Any, config: BlackboardSettings) -> Output | None:
    from blackboard.infrastructure.persistence import signal_rows

    row = signal_rows.caught_up_row(engine, signal_id)
    if row is None:
        return None
    post = None if config.post_timeout is None else timedelta(seconds=config.post_timeout)
    due = signal_rows.earliest_deadline(row, post, timedelta(seconds=config.claim_timeout))
    if due is not None and datetime.now(UTC) >= due:  # overdue or not: the live workers decide
        return None
    waiting = None
    if signal_rows.claimable(row):  # whether a live worker fits it: none can when none is running
        if signal_rows.any_worker_running(engine):
            return None  # the live workers decide, scored as a claim is: the full path
        waiting = waiting_for_a_worker(json.loads(row.target_capabilities))
    signal = signal_rows.view(row)
    return Output(signal_rows.document(signal, waiting), signal_text(signal, None, waiting))


def _full(args: argparse.Namespace, queries: Lazy) -> Output:
    from blackboard.application.commands import GetSignalById
    from blackboard.infrastructure.cli import render

    query = GetSignalById(signal_id=args.signal_id, at=args.at)
    found = queries().get_signal(query)
    if args.transcript:
        from blackboard.infrastructure.cli.transcript_view import transcript

        return transcript(found)
    if args.at is not None:  # as it was: no marks of now
        return render.signal(found)
    return render.signal(found, queries().overdue([found]), queries().waiting_for_workers([found]))
