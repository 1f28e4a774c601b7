"""Serving the page with uvicorn until Ctrl-C."""

from __future__ import annotations

import logging

import uvicorn

from blackboard.application.ports import LogNotifier
from blackboard.application.status import StatusQueries
from blackboard.infrastructure.web.app import build_app
from blackboard.infrastructure.web.hosts import Names
from blackboard.infrastructure.web.view import BoardView


def serve(
    view: BoardView,
    notifier: LogNotifier,
    status: StatusQueries,
    host: str,
    port: int,
    token: str | None,
    names: Names,
) -> None:
    app = build_app(view, notifier, token, names, status)
    # a stream never ends by itself: on Ctrl-C give open pages a second, then close them
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=1,
        server_header=False,
        limit_concurrency=200,
        h11_max_incomplete_event_size=64 * 1024,
        log_config=LOG_CONFIG,
    )
    server = uvicorn.Server(config)
    try:
        server.run()
    except SystemExit:  # uvicorn exits 3 when it cannot bind: here that is exit 1 (docs/cli.md: exit codes)
        if server.started:
            raise
        raise CannotServe(f"could not listen on {host}:{port} (the line above says why)") from None


class CannotServe(RuntimeError):
    """The address could not be bound (in use, not this machine's): exit 1, in one line."""


class OneLine(logging.Formatter):
    """A failure in one line on stderr, its error named, never a traceback (docs/cli.md: exit codes)."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            message += f": {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        return f"blackboard ui: {message}"


LOG_CONFIG = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"one_line": {"()": OneLine}},
    "handlers": {
        "stderr": {"class": "logging.StreamHandler", "formatter": "one_line", "stream": "ext://sys.stderr"}
    },
    "loggers": {
        name: {"handlers": ["stderr"], "level": "WARNING", "propagate": False}
        for name in ("uvicorn", "uvicorn.error", "blackboard")
    },
}
