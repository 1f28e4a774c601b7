"""The page's only writes, a person's acts: approve or reject a gate, nudge or cancel a run. Accepted only when
the server runs with a token, with that token in the `X-Blackboard-Token` header (a cookie alone is what a
forged cross-site request could carry; a header it cannot set) and an `Origin` that is one of the server's own
as configured (web/hosts.py), never one made from the request's `Host`, which the request itself names."""

from __future__ import annotations

import functools
import hmac
import json
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.errors.input import invalid_input
from blackboard.infrastructure.web.hosts import Names
from blackboard.infrastructure.web.routes import PARAMETERS, Handler, answers
from blackboard.infrastructure.web.view import BoardView

MAX_BODY = 16_384  # a name and a nudge's text or a reason; anything longer is not a person's act
READ_ONLY = (
    "this web view is read-only: it approves and rejects gates, nudges and cancels runs only when it runs "
    "with --token"
)
# The commands' fields as the page's JSON bodies name them (routes.refused names the rest)
BODY_FIELDS = {"approved_by": "by", "rejected_by": "by", "nudged_by": "by", "cancelled_by": "by"}


class Forbidden(Exception):
    """An act the page may not do: no token, the wrong one, or from another origin (403)."""


def decisions(view: BoardView, token: str | None, names: Names) -> dict[str, Handler]:
    """POST /api/gates/{signal_id}/approve (`by`, `note`) and /reject (`by`, `reason`); POST
    /api/signals/{signal_id}/nudge (`by`, `text`) and /cancel (`by`, `reason`, which may be left out): JSON
    bodies, each behind the one guard below."""

    def guarded(act: Any) -> Handler:
        decide = answers(functools.partial(_fields_named, act))

        async def endpoint(request: Request) -> Response:
            try:
                _check(request, token, names)
                request.state.body = _body(await request.body())
            except Forbidden as refused:
                return JSONResponse({"error": str(refused)}, status_code=403)
            except InvalidInput as bad:
                return JSONResponse({"error": str(bad)}, status_code=400)
            return await decide(request)

        return endpoint

    def approve(request: Request) -> Any:
        body = request.state.body
        return view.approve(request.path_params["signal_id"], _text(body, "by"), _text(body, "note", False))

    def reject(request: Request) -> Any:
        body = request.state.body
        return view.reject(request.path_params["signal_id"], _text(body, "by"), _text(body, "reason"))

    def nudge(request: Request) -> Any:
        body = request.state.body
        return view.nudge(request.path_params["signal_id"], _text(body, "by"), _text(body, "text"))

    def cancel(request: Request) -> Any:
        body = request.state.body
        return view.cancel(request.path_params["signal_id"], _text(body, "by"), _text(body, "reason", False))

    acts = {"approve": approve, "reject": reject, "nudge": nudge, "cancel": cancel}
    return {name: guarded(act) for name, act in acts.items()}


def _fields_named(act: Any, request: Request) -> Any:
    """A command's refusal of a value names it as the body does (`by`, not `nudged_by`)."""
    try:
        return act(request)
    except ValidationError as exc:
        raise invalid_input(exc, {**PARAMETERS, **BODY_FIELDS}) from None


def _check(request: Request, token: str | None, names: Names) -> None:
    if not token:
        raise Forbidden(READ_ONLY)
    given = request.headers.get("x-blackboard-token", "")
    if not hmac.compare_digest(given.encode(), token.encode()):
        raise Forbidden("a person's act needs the token in the X-Blackboard-Token header")
    if not names.own(request.headers.get("origin")):
        raise Forbidden(
            "a person's act is accepted only from one of this server's own origins "
            f"({', '.join(sorted(names.origins))}; add one with `blackboard ui --allow-host`)"
        )


def _body(raw: bytes) -> dict[str, Any]:
    if len(raw) > MAX_BODY:
        raise InvalidInput("body", f"must be at most {MAX_BODY} bytes of JSON")
    try:
        body = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise InvalidInput("body", "must be a JSON object") from None
    if not isinstance(body, dict):
        raise InvalidInput("body", "must be a JSON object")
    return body


def _text(body: dict[str, Any], name: str, required: bool = True) -> Any:
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise InvalidInput(name, "is required: a string" if required else "must be a string")
    if required and not value.strip():
        raise InvalidInput(name, "must not be empty")
    return value
