"""`GET /api/charts?board=ID&window=MINUTES[&at=POSITION]`: the Spend and flow panel's series (application/
flow_charts.py), as JSON; a bad window or position is a 400 naming it (routes.answers)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from blackboard.application.commands import ListSignals
from blackboard.application.flow_charts import FlowCharts, window_bounds
from blackboard.infrastructure.web.routes import Handler, answers, board_id, given
from blackboard.infrastructure.web.view import BoardView

DEFAULT_WINDOW = 60  # minutes


def window_of(request: Request) -> int:
    """`?window=`: whole minutes from 1 to a week (flow_charts.MAX_WINDOW) (DEFAULT_WINDOW when not given)."""
    return window_bounds(request.query_params.get("window") or DEFAULT_WINDOW)


def charts_endpoint(view: BoardView) -> Handler:
    def charts(request: Request) -> Any:
        query = ListSignals(blackboard_id=board_id(request), **given(request, "at"))  # `at`: a log position
        window = window_of(request)
        board = str(query.blackboard_id)
        return document(board, window, query.at, view.charts.charts(board, window, query.at))

    return answers(charts)


def document(board: str, window: int, at: int | None, charts: FlowCharts) -> dict[str, Any]:
    return {
        "blackboard_id": board,
        "window": window,
        "at": at,
        "start": charts.start.isoformat(),
        "end": charts.end.isoformat(),
        "bucket_seconds": charts.bucket_seconds,
        "buckets": [b.isoformat() for b in charts.buckets],
        "finished": charts.finished,
        "claim_wait": {"claimed": charts.claimed, "p50": charts.wait_p50, "p90": charts.wait_p90},
        "spend": {
            "agents": [
                {
                    "agent": a.agent,
                    "usd": a.usd,
                    "tokens": a.tokens,
                    "window_usd": a.window_usd,
                    "window_tokens": a.window_tokens,
                    "total_usd": a.total_usd,
                    "total_tokens": a.total_tokens,
                    "unpriced_runs": a.unpriced_runs,
                }
                for a in charts.agents
            ],
            "spent_usd": charts.spent.usd,
            "spent_tokens": charts.spent.tokens,
            "budget": {"usd": charts.budget.usd, "tokens": charts.budget.tokens}
            if charts.budget.is_set
            else None,
        },
    }
