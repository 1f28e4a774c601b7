"""LangGraph's store on a real board: one `Blackboard` per database for the module (a SQLite file, and the
run's PostgreSQL database), a board of its own for each test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from blackboard import Blackboard
from blackboard.langgraph import BlackboardStore
from tests.e2e.conftest import empty_database


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def board(request, tmp_path_factory) -> Iterator[Blackboard]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('lg-store') / 'blackboard.db'}"
    else:
        url = request.getfixturevalue("pg_database_url")  # the run's database; each test has its own board
        empty_database(url)  # a test before may have left the log ahead of the read model there
    with Blackboard(url) as shared:
        yield shared


@pytest.fixture
def store(board) -> BlackboardStore:
    return BlackboardStore(board, blackboard_id=f"lg-{uuid.uuid4().hex[:10]}", author="ps-agent")
