"""The Starlette application: the page and its assets (shipped in the package), the JSON endpoints,
the live stream, the Host check (always) and the token gate (with a token)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from blackboard.application.ports import LogNotifier
from blackboard.application.status import StatusQueries
from blackboard.infrastructure.web.auth import TokenGate
from blackboard.infrastructure.web.charts import charts_endpoint
from blackboard.infrastructure.web.decide import decisions
from blackboard.infrastructure.web.fleet import live_workers
from blackboard.infrastructure.web.headers import SecurityHeaders
from blackboard.infrastructure.web.hosts import Names
from blackboard.infrastructure.web.live import LogFollower, log_stream
from blackboard.infrastructure.web.metrics import Metrics
from blackboard.infrastructure.web.routes import api, refused, since
from blackboard.infrastructure.web.view import BoardView

STATIC = Path(__file__).parent / "static"


def build_app(
    view: BoardView, notifier: LogNotifier, token: str | None, names: Names, status: StatusQueries
) -> SecurityHeaders:
    """Every request's Host must be one of `names` (web/hosts.py: the loopback names, the bind host, those of
    --allow-host), token or not, so a page of another site cannot reach it through DNS rebinding; `token`
    None: no gate (a loopback bind only). The security headers wrap everything, so even Starlette's own 500
    carries them."""
    follower = LogFollower(view, notifier)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        follower.start()
        yield
        follower.stop()

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def stream(request: Request) -> Response:
        try:
            start = since(request)  # an EventSource reconnecting goes on after the last record it had
        except Exception as exc:  # noqa: BLE001 - the one translation of an error (routes.refused)
            return refused(exc, request)
        start = view.last_position() if start is None else start
        return EventSourceResponse(log_stream(view, follower, start), ping=15, send_timeout=30)

    metrics = Metrics(status)

    async def scrape(request: Request) -> Response:
        """Read-only like the page: the same Host check on loopback, the same token off it (a scraper
        sends it as `Authorization: Bearer T`); a database down is a 503, the server goes on."""
        try:
            body, content_type = await run_in_threadpool(metrics.render, request.headers.get("accept", ""))
        except Exception as exc:  # noqa: BLE001 - the one translation of an error (routes.refused)
            return refused(exc, request)
        return Response(body, headers={"Content-Type": content_type, "Cache-Control": "no-store"})

    handlers = api(view)
    decide = decisions(view, token, names)
    routes = [
        Route("/", page, methods=["GET"]),
        Route("/api/boards", handlers["boards"], methods=["GET"]),
        Route("/api/board", handlers["board"], methods=["GET"]),  # ?board=ID: any id, `/` included
        Route("/api/board/{board:path}", handlers["board"], methods=["GET"]),
        Route("/api/entry", handlers["entry"], methods=["GET"]),  # ?board=ID&key=KEY
        Route("/api/entry/{board}/{key:path}", handlers["entry"], methods=["GET"]),
        Route("/api/events", handlers["events"], methods=["GET"]),
        Route("/api/output", handlers["output"], methods=["GET"]),  # ?signal=SIG&after=CURSOR: a run's output
        Route("/api/charts", charts_endpoint(view), methods=["GET"]),  # ?board=ID&window=MINUTES&at=POSITION
        Route("/api/stream", stream, methods=["GET"]),
        Route("/api/workers", live_workers(status), methods=["GET"]),  # ?board=ID: the workers serving it
        Route("/metrics", scrape, methods=["GET"]),  # Prometheus' text format (web/metrics.py)
        # the only writes: a person's decision on a gate (decide.py: the token and the page's own origin)
        Route("/api/gates/{signal_id}/approve", decide["approve"], methods=["POST"]),
        Route("/api/gates/{signal_id}/reject", decide["reject"], methods=["POST"]),
        Route(
            "/api/signals/{signal_id}/nudge", decide["nudge"], methods=["POST"]
        ),  # and a run's, the same guard
        Route("/api/signals/{signal_id}/cancel", decide["cancel"], methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(names.hosts), www_redirect=False)]
    if token:  # after the Host check: a rebinding page is refused before it learns a token is wanted
        middleware.append(Middleware(TokenGate, token=token))
    return SecurityHeaders(Starlette(routes=routes, middleware=middleware, lifespan=lifespan))
