"""`blackboard show SIG`: one signal, as every other command reads and prints it.

The signal comes from the queries (`get_signal`, which catches the read model up first), its marks of now
from the domain's rules through them (`overdue`: the deadline, `waiting_for_workers`: claimable and no
live worker fits it), and its document from `documents.signal` (render.py): the one document every
interface prints. `--at` prints the signal as it was then, without marks of now; `--transcript`, the
transcript its run kept.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dependency_injector.wiring import Provide, inject

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
    rate_windows: Lazy = Provide[Container.rate_windows.provider],
) -> Output:
    from blackboard.application.commands import GetSignalById
    from blackboard.domain.signals import SignalStatus
    from blackboard.infrastructure.cli import render

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
    return shown
