"""`blackboard show SIG`: one signal, as every other command reads and prints it.

The signal comes from the queries (`get_signal`, which catches the read model up first), its marks of now
from the domain's rules through them (`overdue`: the deadline, `waiting_for_workers`: claimable and no
live worker fits it), and its document from `documents.signal` (render.py): the one document every
interface prints. `--at` prints the signal as it was then, without marks of now; `--transcript`, the
transcript its run kept; `--follow`, its run's output as it comes and then its outcome (`follow`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dependency_injector.wiring import Provide, inject

from blackboard.domain.errors import InvalidInput, RuleViolation
from blackboard.infrastructure.cli.signal_text import Output
from blackboard.infrastructure.composition.container import Container

if TYPE_CHECKING:
    from blackboard.infrastructure.composition.settings import BlackboardSettings

Lazy = Callable[[], Any]  # a provider: called only once the input has been validated


@inject
def show(
    args: argparse.Namespace,
    engine: Lazy = Provide[Container.engine.provider],
    config: BlackboardSettings = Provide[Container.config],
    queries: Lazy = Provide[Container.queries.provider],
    registry: Lazy = Provide[Container.agent_registry.provider],
    read_model: Lazy = Provide[Container.read_model.provider],
    clock: Lazy = Provide[Container.clock.provider],
    watcher: Lazy = Provide[Container.watcher.provider],
    rate_windows: Lazy = Provide[Container.rate_windows.provider],
) -> Output | None:
    from blackboard.application.commands import GetSignalById
    from blackboard.domain.signals import SignalStatus
    from blackboard.infrastructure.cli import render

    if args.follow:
        return follow(args, watcher, config.json)
    for option in ("after", "timeout"):
        if getattr(args, option) is not None:
            raise InvalidInput(f"--{option}", "is an option of show --follow: give --follow too")

    query = GetSignalById(signal_id=args.signal_id, at=args.at)  # refused before the database is opened
    found = queries().get_signal(query)
    if args.transcript:
        from blackboard.infrastructure.cli.transcript_view import transcript

        return transcript(found)
    if args.at is not None:  # as it was: no marks of now
        return render.signal(found)
    shown = render.signal(found, queries().overdue([found]), queries().waiting_for_workers([found]))
    if found.status == SignalStatus.POSTED:
        from blackboard.infrastructure.cli.budget_wait import budget_wait

        why = budget_wait(
            engine(), found.signal_id, found.blackboard_id, config, queries, registry, read_model, clock
        )
        if why is not None:
            shown = Output(shown.data, f"{shown.text}\n  {why}")
        from blackboard.domain.rates import waiting_for_rate_limit
        from blackboard.infrastructure.cli.rate_wait import rate_wait

        key = rate_wait(found, config, queries, registry, rate_windows, clock)
        if key is not None:  # its best agent's rate limit has no room now
            shown = Output(
                {**shown.data, "waiting_for_a_rate_limit": key},
                f"{shown.text}\n  {waiting_for_rate_limit(key)}",
            )
        from datetime import timedelta

        # its best agent's concurrency key has no room now: the plan `next` makes, of this one signal; one
        # GROUP BY of the claims under each key, and the agent files read only when some key has claims
        now = clock().now()
        claimed = read_model().claimed_under(now - timedelta(seconds=config.claim_timeout))
        if claimed:
            from blackboard.application.ranking import Controller

            plan = Controller(queries(), registry(), config.claim_threshold, claimed=lambda: claimed).next(
                found.blackboard_id, None, now, signals=[found]
            )
            if (held := plan.key_waits.get(found.signal_id)) is not None:
                shown = Output(shown.data, f"{shown.text}\n  {held}")
    return shown


def follow(args: argparse.Namespace, watcher: Lazy, as_json: bool) -> None:
    """`show SIG --follow`: each line of the run's output as it comes (a line of text, or with `--json` an
    OutputLine document a line), flushed, then the signal once it ended, as `wait` ends it: exit 0
    COMPLETED, 3 otherwise, 5 at `--timeout`. Prints as it goes: returns nothing."""
    from blackboard.application.commands import FollowSignal
    from blackboard.application.output import Cursor
    from blackboard.domain.signals import AgentSignal, SignalStatus
    from blackboard.infrastructure import documents
    from blackboard.infrastructure.cli import render, terminal_safe

    for option in ("at", "transcript"):
        if getattr(args, option):
            raise InvalidInput(
                f"--{option}", "cannot be given with --follow: a follow shows the run as it goes"
            )
    given = {"after": args.after, "timeout": args.timeout}
    query = FollowSignal(signal_id=args.signal_id, **{k: v for k, v in given.items() if v is not None})
    for item in watcher().follow(query.signal_id, Cursor.parse(query.after), query.timeout):
        if isinstance(item, AgentSignal):
            shown = render.signal(item)
            print(
                json.dumps(shown.data, ensure_ascii=False) if as_json else terminal_safe(shown.text),
                flush=True,
            )
            if item.status is not SignalStatus.COMPLETED:
                raise RuleViolation(f"the signal ended {item.status}")
            return None
        line = documents.output_line(item)
        print(
            json.dumps(documents.jsonable(line), ensure_ascii=False) if as_json else terminal_safe(line.line),
            flush=True,
        )
    return None
