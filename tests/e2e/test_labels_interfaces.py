"""Labels on signals through the other interfaces (docs/python-api.md, docs/mcp.md, docs/web.md): the Python
API's and the MCP tools' `labels` argument on post and on the signal listing (and the API's watch), with the
CLI's documents and the model's rule; `/metrics` counting signals by the labels BLACKBOARD_METRIC_LABELS
names, and those only. On SQLite and PostgreSQL, each against the real executable or server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from blackboard import Blackboard, InvalidInput
from tests.e2e.conftest import Cli, assert_signal, database_url
from tests.e2e.mcp_client import served
from tests.e2e.web import UiServer, browser  # noqa: F401 - the browser fixture


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store(request, make_cli, agents_dir, tmp_path_factory) -> Iterator[tuple[Blackboard, Cli]]:
    url = database_url(request, tmp_path_factory, "labels-interfaces")
    with Blackboard(url, agents_dir=agents_dir) as api:
        yield api, make_cli(url, tmp_path_factory.mktemp("cwd"))


@pytest.fixture
def board() -> str:
    return f"ps-{uuid.uuid4().hex[:8]}"


def test_the_python_api_posts_lists_and_watches_by_labels_as_the_cli_does(store, board):
    api, cli = store
    both = api.post("RESEARCH", board, "e-1", "both", labels=["bug", "team:core", "bug"])
    bug = api.post("RESEARCH", board, "e-2", "bug only", labels=("bug",))
    api.post("RESEARCH", board, "e-3", "none")

    assert both.labels == ["bug", "team:core"] and bug.labels == ["bug"]
    assert [s.signal_id for s in api.signals(blackboard_id=board, labels=["bug"])] == [
        both.signal_id,
        bug.signal_id,
    ]
    listed = api.signals(blackboard_id=board, labels=["bug", "team:core"])
    assert [s.model_dump(mode="json") for s in listed] == cli.ok(
        "signals", "--blackboard", board, "--label", "bug", "--label", "team:core"
    )
    assert api.signals(blackboard_id=board, labels="team:core")[0].signal_id == both.signal_id  # one name

    since = api.position()
    for signal in (bug, both):
        api.claim(signal.signal_id, agent="ps-researcher")
        api.complete(signal.signal_id, agent="ps-researcher")
    watched = api.watch(["RESEARCH"], blackboard_id=board, since=since, timeout=30, labels=["team:core"])
    assert watched.signal_id == both.signal_id


@pytest.mark.parametrize("bad", [["Bug"], ["x" * 65], [f"l{n}" for n in range(21)]])
def test_the_python_api_refuses_a_bad_label_naming_the_argument_and_writes_nothing(store, board, bad):
    api, _ = store
    before = api.position()
    with pytest.raises(InvalidInput) as refused:
        api.post("RESEARCH", board, "e-1", "t", labels=bad)
    with pytest.raises(InvalidInput) as listed:
        api.signals(labels=bad)
    assert refused.value.field.startswith("labels") and listed.value.field.startswith("labels")
    assert api.position() == before


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_mcp_tools_post_and_list_by_labels(store, board):
    _, cli = store
    async with served(cli, "--blackboard", board) as server:
        posted = assert_signal(
            await server.call("blackboard_post_signal", topic="t", capabilities=["RESEARCH"], labels=["bug"])
        )
        await server.call("blackboard_post_signal", topic="u", capabilities=["RESEARCH"])
        listed = await server.call("blackboard_signals", labels=["bug"])
        text, _ = await server.refused("blackboard_post_signal", topic="t", labels=["Not A Label"])

    assert posted["labels"] == ["bug"]
    assert [s["signal_id"] for s in listed] == [posted["signal_id"]]
    assert "labels" in text and "pattern" in text
    assert len(cli.ok("signals", "--blackboard", board)) == 2  # the refused post wrote nothing


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_metrics_count_signals_by_the_labels_named_and_no_other(store, board):
    api, cli = store
    for n, labels in enumerate((["bug", "team:core"], ["bug"], ["team:core"], [])):
        api.post("RESEARCH", board, f"e-{n + 1}", "t", labels=labels)
    api.cancel(api.signals(blackboard_id=board, labels=["team:core"])[-1].signal_id)

    server = UiServer(cli, env={"BLACKBOARD_METRIC_LABELS": "bug, other"}).wait_ready()
    try:
        status, _, body = server.get("/metrics")
    finally:
        server.stop()
    assert status == 200, body
    found = samples(body.decode())

    def value(status: str, **label: str) -> float | None:
        return found.get(
            ("blackboard_signals", tuple(sorted({"board": board, "status": status, **label}.items())))
        )

    assert value("POSTED") == 3 and value("CANCELLED") == 1  # the board's own, as before
    assert value("POSTED", label="bug") == 2 and value("CANCELLED", label="bug") == 0
    assert value("POSTED", label="team:core") is None  # not named: no series
    assert value("POSTED", label="other") is None  # named, but on no signal of the board


def test_a_bad_metric_labels_variable_exits_2_naming_it(store):
    _, cli = store
    refused = cli("status", env={"BLACKBOARD_METRIC_LABELS": "bug,Not Good"}).expect(2)
    assert "BLACKBOARD_METRIC_LABELS: must be signal labels separated by commas" in refused.stderr


def test_the_web_view_shows_labels_on_cards_and_filters_the_columns_by_them(store, board, browser):
    from selenium.webdriver.common.by import By

    from tests.e2e.web import settled

    api, cli = store
    both = api.post("RESEARCH", board, "e-1", "both", labels=["bug", "team:core"]).signal_id
    bug = api.post("RESEARCH", board, "e-2", "bug only", labels=["bug"]).signal_id
    plain = api.post("RESEARCH", board, "e-3", "none").signal_id

    def cards(driver) -> dict[str, list[str]]:
        return {
            c.get_attribute("data-signal"): [x.text for x in c.find_elements(By.CSS_SELECTOR, ".label")]
            for c in driver.find_elements(By.CSS_SELECTOR, ".column .card")
        }

    server = UiServer(cli).wait_ready()
    try:
        browser.get(f"{server.url}/?board={board}")
        every = settled(browser, lambda d: (found := cards(d)) and len(found) == 3 and found)
        assert every == {both: ["bug", "team:core"], bug: ["bug"], plain: []}

        browser.find_element(By.ID, "label-filter").send_keys("bug")
        assert settled(browser, lambda d: set(cards(d)) == {both, bug})
        browser.find_element(By.ID, "label-filter").send_keys(", team:core")  # every label named
        assert settled(browser, lambda d: set(cards(d)) == {both})

        browser.get(f"{server.url}/?board={board}&label=team:core")  # the filter in the address
        assert settled(browser, lambda d: set(cards(d)) == {both})
        later = api.post("RESEARCH", board, "e-4", "later", labels=["team:core"]).signal_id
        assert settled(browser, lambda d: set(cards(d)) == {both, later})  # live, filtered as it lands
    finally:
        server.stop()
