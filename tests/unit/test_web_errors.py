"""The web view answers an error with its family's HTTP status (the one table, errors/families.py)."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from blackboard.application.errors import StoreUnavailable, WaitTimedOut
from blackboard.domain.errors import AlreadyClaimed, InvalidInput, SignalNotFound
from blackboard.infrastructure.errors.families import FAMILIES, family_of
from blackboard.infrastructure.web.routes import answers


class Limit(BaseModel):
    limit: int


def refused_model() -> ValidationError:
    try:
        Limit(limit="many")
    except ValidationError as exc:
        return exc
    raise AssertionError("the model took it")


def answer(error: Exception) -> tuple[int, dict]:
    def handler(request: Request) -> None:
        raise error

    scope = {"type": "http", "method": "GET", "path": "/api/boards", "headers": [], "query_string": b""}
    response = asyncio.run(answers(handler)(Request(scope)))
    return response.status_code, json.loads(response.body)


@pytest.mark.parametrize(
    "error",
    [
        StoreUnavailable("database is locked"),
        InvalidInput("at", "must be a log position"),
        AlreadyClaimed("sig-1", "CLAIMED", "ps-analyst"),
        SignalNotFound("sig-1"),
        WaitTimedOut("sig-1 to finish", 2),
    ],
)
def test_an_error_answers_the_http_status_of_its_family_with_its_message(error):
    status, body = answer(error)

    assert status == family_of(error).http_status and body == {"error": str(error)}


def test_every_family_has_its_own_http_status():
    assert len({family.http_status for family in FAMILIES}) == len(FAMILIES)


def test_a_value_a_model_refuses_is_bad_input_naming_the_field():
    status, body = answer(refused_model())

    assert status == 400 and body["error"].startswith("limit: ")


def test_an_error_of_no_family_is_a_500_that_shows_nothing_of_it():
    status, body = answer(ZeroDivisionError("a secret detail"))

    assert status == 500 and "secret" not in body["error"]
