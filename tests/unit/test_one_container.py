"""One container: the CLI, `blackboard mcp` and the Python API each build one instance of the same
`Container` from their settings and use it unchanged."""

from __future__ import annotations

import pytest

from blackboard.infrastructure.composition.container import Container


@pytest.fixture
def built(monkeypatch) -> list:
    """Every container built while the test runs."""
    made: list = []
    build = Container.__new__

    def counted(cls, *args, **kwargs):
        container = build(cls, *args, **kwargs)
        made.append(container)
        return container

    monkeypatch.setattr(Container, "__new__", counted)
    return made


def test_blackboard_mcp_serves_from_the_one_container_the_cli_built_from_its_settings(
    built, monkeypatch, tmp_path
):
    from blackboard.infrastructure.cli import main
    from blackboard.infrastructure.mcp import server

    served = []
    monkeypatch.setattr(
        server,
        "serve",
        lambda container, agent, board, claim=None, confine=False: served.append((container, board)),
    )
    url = f"sqlite:///{tmp_path / 'b.db'}"

    assert main(["--db", url, "--agents-dir", str(tmp_path), "mcp", "--blackboard", "ps-1"]) == 0

    ((container, board),) = served
    assert [container] == built and container.declarative_parent is Container and board == "ps-1"
    assert container.config().db == url


def test_the_python_api_builds_the_same_container_and_wires_nothing(built, tmp_path):
    from blackboard import Blackboard

    with Blackboard(f"sqlite:///{tmp_path / 'b.db'}", agents_dir=tmp_path):
        pass

    ((container,),) = [built]
    assert container.declarative_parent is Container and container.wired_to_modules == []


def test_building_the_container_wires_no_module(built):
    container = Container()

    assert container.wired_to_modules == [] and container.wired_to_packages == []
