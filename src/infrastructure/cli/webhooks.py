"""`blackboard webhooks`: a board's webhook deliveries (docs/webhooks.md), and `--deliver`: a round now."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from dependency_injector.wiring import Provide, inject

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure import documents
from blackboard.infrastructure.cli.render import Output
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.documents.webhooks import WebhookDelivery

Lazy = Callable[[], Any]


@inject
def webhooks(
    args: argparse.Namespace,
    courier: Lazy = Provide[Container.webhooks.provider],
    engine: Lazy = Provide[Container.engine.provider],
    status: Lazy = Provide[Container.status.provider],
) -> Output | None:
    if args.blackboard is None and not args.deliver:
        raise InvalidInput(
            "--blackboard", "is required: the board whose deliveries to list (or give --deliver)"
        )
    summary = None
    if args.deliver:
        made = courier()
        if made is None:
            raise InvalidInput("BLACKBOARD_WEBHOOKS", "must be set to deliver: the URLs to announce gates to")
        done = made.deliver()
        counts = {
            "made": done.made,
            "received": done.received,
            "failed": done.failed,
            "given_up": done.given_up,
        }
        said = (
            f"webhooks: {done.made} made, {done.received} received, {done.failed} to try again, "
            f"{done.given_up} given up"
        )
        summary = Output(counts, said)
    if args.blackboard is None:
        return summary  # the round alone
    if summary is not None:
        print(summary.text, file=sys.stderr)  # the round, beside the board's deliveries
    from blackboard.infrastructure.persistence.webhooks import SqlWebhookOutbox

    status().require_board(args.blackboard)  # exit 4 for a board the store does not hold
    listed = [_document(d) for d in SqlWebhookOutbox(engine()).deliveries(args.blackboard)]
    return Output(documents.jsonable(listed), text(listed))


def _document(d: Any) -> WebhookDelivery:
    return WebhookDelivery(
        delivery_id=d.delivery_id,
        event=d.event,
        signal_id=d.signal_id,
        url=d.url,
        status=d.status,
        attempts=d.attempts,
        last_status=d.last_status,
        last_error=d.last_error,
        created_at=d.created_at,
        last_try_at=d.last_try_at,
        next_try_at=d.next_try_at,
    )


def text(listed: list[WebhookDelivery]) -> str:
    if not listed:
        return "no webhook deliveries"
    lines = []
    for d in listed:
        line = f"{d.event:<15} {d.signal_id}  {d.status:<9} attempts {d.attempts}  {d.url}"
        if d.last_error:
            line += f"\n    last error: {d.last_error}"
        if d.next_try_at is not None:
            line += f"\n    next try: {d.next_try_at.isoformat()}"
        lines.append(line)
    return "\n".join(lines)
