"""`blackboard ui`: checks the bind, then serves the web page (blackboard.infrastructure.web) until Ctrl-C.

The web framework is imported only here, once the bind is allowed: no other command pays for it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from dependency_injector.wiring import Provide, inject

from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.web.auth import TOKEN_ENV, check_bind
from blackboard.infrastructure.web.hosts import served_names

Lazy = Callable[[], Any]


class MissingExtra(RuntimeError):
    """The web view's libraries are not installed (exit 1, one line saying how to get them)."""


@inject
def ui(
    args: argparse.Namespace,
    store: Lazy = Provide[Container.event_store.provider],
    signals: Lazy = Provide[Container.read_model.provider],
    queries: Lazy = Provide[Container.queries.provider],
    knowledge: Lazy = Provide[Container.knowledge_queries.provider],
    entries: Lazy = Provide[Container.entry_read_model.provider],
    notifier: Lazy = Provide[Container.notifier.provider],
    service: Lazy = Provide[Container.service.provider],
    status: Lazy = Provide[Container.status.provider],
    clock: Lazy = Provide[Container.clock.provider],
    watcher: Lazy = Provide[Container.watcher.provider],
    webhooks: Lazy = Provide[Container.webhooks.provider],
    held: Lazy = Provide[Container.held_back.provider],
) -> None:
    from blackboard.infrastructure.keeper.identity import web_caller

    token = args.token if args.token is not None else (os.environ.get(TOKEN_ENV) or None)
    check_bind(args.host, args.port, token)
    names = served_names(args.host, args.port, args.allow_host)  # the Host check's, the decisions' origins
    try:
        from blackboard.infrastructure.web.server import serve
        from blackboard.infrastructure.web.view import BoardView
    except ImportError as exc:
        raise MissingExtra(
            f"the web view needs its libraries ({exc.name}): pip install 'agent-blackboard[ui]'"
        ) from None
    # with a token, a person on the page may decide gates, nudge and cancel runs (web/decide.py); else read-only.
    # Started inside an agent's run, the page decides as that run: not at all (docs/permissions.md)
    deciding = service().acting(web_caller()) if token else None
    view = BoardView(
        store(), signals(), queries(), knowledge(), entries(), deciding, clock(), watcher(), held()
    )
    host = f"[{args.host}]" if ":" in args.host else args.host
    board = f"?board={args.board}" if args.board else ""
    mode = (
        "read-only but for deciding gates, nudging and cancelling runs; open it with ?token=<your token>"
        if token
        else "read-only"
    )
    print(
        f"blackboard ui: serving http://{host}:{args.port}/{board} ({mode}; Ctrl-C stops)",
        file=sys.stderr,
        flush=True,
    )
    if (courier := webhooks()) is not None:
        courier.start()  # announces gates while the page is served, those its decisions end at once
    serve(view, notifier(), status(), args.host, args.port, token, names)
    return None
