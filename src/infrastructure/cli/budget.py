"""`blackboard budget BOARD`: set a board's budget (`--usd`, `--tokens`), or show it and what was spent."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from dependency_injector.wiring import Provide, inject

from blackboard.application.budgets import board_budget
from blackboard.application.commands import SetBudget
from blackboard.infrastructure import documents
from blackboard.infrastructure.cli.render import Output
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import BlackboardSettings

Lazy = Callable[[], Any]


@inject
def budget(
    args: argparse.Namespace,
    service: Lazy = Provide[Container.service.provider],
    read_model: Lazy = Provide[Container.read_model.provider],
    config: BlackboardSettings = Provide[Container.config],
    clock: Lazy = Provide[Container.clock.provider],
) -> Output:
    if args.usd is not None or args.tokens is not None:
        service().set_budget(
            SetBudget(
                board=args.board, usd=args.usd, tokens=args.tokens, set_by=args.by, reason=args.reason or ""
            )
        )
    shown = board_budget(read_model(), args.board, clock().now() - timedelta(seconds=config.claim_timeout))
    doc = documents.board_budget(shown.blackboard_id, shown.budget, shown.spent, shown.reserved)
    return Output(documents.jsonable(doc), text(doc))


def text(doc: documents.BoardBudget) -> str:
    limits = [
        f"${doc.usd:g}" if doc.usd is not None else "",
        f"{doc.tokens:,} tokens" if doc.tokens is not None else "",
    ]
    limit = " and ".join(x for x in limits if x) or "none"
    state = f"signals wait: {doc.reached}" if doc.reached else "signals are claimed as usual"
    return (
        f"budget of {doc.blackboard_id}: {limit}\n"
        f"spent: ${doc.spent_usd:.4f}, {doc.spent_tokens:,} tokens\n"
        f"reserved by open claims: ${doc.reserved_usd:.4f}, {doc.reserved_tokens:,} tokens\n"
        f"{state}"
    )
