"""The web view's dependency graph laid out (docs/web.md, "The dependency graph"), in a real headless Chromium,
on SQLite and PostgreSQL, of a board real `blackboard worker` processes drive: a diamond, a chain with an edge
that skips a layer, a flow run from a flow file (its write step failed once and was retried), a signal after the
flow's middle step, and lone signals. The test reads the drawn SVG (each box's transform, each edge's path, each
flow's band): an upstream's box is left of what waits on it, no two boxes overlap, the diamond's edges do not
cross, no edge passes a box (the one that skips a layer included), the flow's steps are inside its band in step
order, the lone signals are chips in the strip; clicking a box opens the signal, and the slider's past position
draws the graph as it was."""

from __future__ import annotations

import itertools

import pytest
from selenium.webdriver.common.by import By

from blackboard import Blackboard
from tests.e2e.conftest import QUICK_AGENT, Cli, cli_with_agents, database_url
from tests.e2e.test_cli_flows import AGENTS, FLOW
from tests.e2e.test_ui_page import csp_refusals
from tests.e2e.web import UiServer, browser, click, screenshot, settled  # noqa: F401 - the browser fixture
from tests.waiting import wait_until

WITHIN = 60.0  # a bound for what a loaded machine does, never reached when things work
BOARD = "g"


@pytest.fixture(params=["sqlite", "postgresql"])
def gcli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    """The flows' agents (doc-writer fails its first run) and ps-quick, which completes RESEARCH at once."""
    agents = {**AGENTS, "ps-quick.md": QUICK_AGENT}
    made = cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "ui-graph", agents)
    (tmp_path / "pages.md").write_text(FLOW, encoding="utf-8")
    made.ok("db", "upgrade")
    return made


def post(cli: Cli, topic: str, *after: str, type: str = "RESEARCH") -> str:
    args = [a for u in after for a in ("--after", u)]
    return cli.ok("post", "--blackboard", BOARD, "--type", type, "--topic", topic, *args)["signal_id"]


def status(cli: Cli, signal_id: str) -> str:
    return cli.ok("show", signal_id)["status"]


# The drawing, read in one script (the live stream redraws it meanwhile): each box's place and size from its
# transform and its rect, each edge's ends and points along its path, each band's rectangle, the strip's chips.
DRAWN = """
const graph = document.getElementById('graph'), num = (v) => Number(v);
const boxes = {}, edges = [], bands = {};
for (const g of graph.querySelectorAll('g.node')) {
  const m = /translate\\(([-\\d.]+),([-\\d.]+)\\)/.exec(g.getAttribute('transform')), r = g.querySelector('rect');
  boxes[g.dataset.signal] = [num(m[1]), num(m[2]), num(r.getAttribute('width')), num(r.getAttribute('height')),
    g.getAttribute('class')];
}
for (const p of graph.querySelectorAll('path.edge')) {
  const n = p.getTotalLength(), points = [];
  for (let k = 0; k <= 60; k++) { const q = p.getPointAtLength((n * k) / 60); points.push([q.x, q.y]); }
  edges.push({from: p.dataset.from, to: p.dataset.to, retry: p.classList.contains('retry'), points,
    arrow: p.getAttribute('marker-end')});
}
for (const b of graph.querySelectorAll('g.band')) {
  const r = b.querySelector('rect');
  bands[b.dataset.flow] = [num(r.getAttribute('x')), num(r.getAttribute('y')), num(r.getAttribute('width')),
    num(r.getAttribute('height')), b.textContent];
}
const strip = graph.querySelector('.graph-lone');
return {boxes, edges, bands, lone: [...graph.querySelectorAll('.graph-lone .lone-chip')].map((c) => c.dataset.signal),
  strip: strip ? strip.textContent : ''};
"""


def drawn(driver) -> dict:
    return driver.execute_script(DRAWN)


def overlap(a, b) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def inside(point, box, inset: float = 1.0) -> bool:
    x, y = point
    return box[0] + inset < x < box[0] + box[2] - inset and box[1] + inset < y < box[1] + box[3] - inset


def crosses(p, q) -> bool:
    """Whether two polylines cross (a proper intersection of two of their segments)."""

    def side(a, b, c) -> float:
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    for a, b in itertools.pairwise(p):
        for c, d in itertools.pairwise(q):
            if side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0:
                return True
    return False


def edge(picture: dict, a: str, b: str) -> dict:
    found = [e for e in picture["edges"] if (e["from"], e["to"]) == (a, b)]
    assert len(found) == 1, (a, b, picture["edges"])
    return found[0]


def test_the_graph_is_laid_out_in_layers_with_flows_in_bands_and_lone_signals_in_a_strip(gcli, browser):
    cli, driver = gcli, browser
    a = post(cli, "the question")
    b, c = post(cli, "one side", a), post(cli, "the other side", a)
    before_d = cli.ok("events", "--all")[-1]["position"]
    d = post(cli, "both sides", b, c)
    x = post(cli, "first")
    y = post(cli, "second", x)
    z = post(cli, "third, after both", y, x)  # x -> z skips y's layer
    flow = cli.ok("flow", "run", "pages.md", "--blackboard", BOARD, "--flow-id", "pages-1")
    steps = [s["signal_id"] for s in flow["steps"]]  # read, plan, approve, write: in step order
    outside = post(cli, "after the plan", steps[1])  # leaves the band from its middle
    lone = [post(cli, "on its own"), post(cli, "also on its own")]

    cli.start("worker", "--agent", "ps-quick", "--board", BOARD)
    for agent in ("doc-reader", "doc-planner"):
        cli("worker", "--agent", agent, "--board", BOARD, "--once").expect(0)
    cli.ok("approve", steps[2], "--by", "ana")
    cli("worker", "--agent", "doc-writer", "--board", BOARD, "--once").expect(0)  # fails its first run
    assert status(cli, steps[3]) == "FAILED"
    retry = cli.ok("retry", steps[3])["signal_id"]  # the write step again, in the flow
    cli("worker", "--agent", "doc-writer", "--board", BOARD, "--once").expect(0)
    done = [a, b, c, d, x, y, z, *lone, *steps[:3], retry, outside]
    wait_until(lambda: all(status(cli, s) == "COMPLETED" for s in done), WITHIN, "the workers' runs")

    server = UiServer(cli).wait_ready()
    try:
        driver.get(f"{server.url}/?board={BOARD}")
        drawn_boxes = [a, b, c, d, x, y, z, *steps, retry, outside]
        picture = settled(
            driver,
            lambda dr: (
                (p := drawn(dr))
                and all(s in p["boxes"] and "COMPLETED" in p["boxes"][s][4] for s in done if s not in lone)
                and p
            ),
        )
        boxes = picture["boxes"]
        assert sorted(boxes) == sorted(drawn_boxes)  # the lone ones are not boxes
        assert "FAILED" in boxes[steps[3]][4]

        # every upstream left of what waits on it (the retry too), each edge with its arrowhead
        wanted = {(a, b), (a, c), (b, d), (c, d), (x, y), (y, z), (x, z), (steps[1], outside)}
        wanted |= {(steps[0], steps[1]), (steps[1], steps[2]), (steps[1], steps[3]), (steps[2], steps[3])}
        wanted |= {(steps[3], retry), (steps[1], retry), (steps[2], retry)}  # the retry: after the same steps
        assert {(e["from"], e["to"]) for e in picture["edges"]} == wanted
        for e in picture["edges"]:
            up, down = boxes[e["from"]], boxes[e["to"]]
            assert up[0] + up[2] <= down[0], e
            assert e["arrow"] == "url(#arrow)"
            assert e["retry"] == ((e["from"], e["to"]) == (steps[3], retry))
        # no two boxes overlap
        for (one, p), (other, q) in itertools.combinations(boxes.items(), 2):
            assert not overlap(p, q), (one, other)
        # the diamond's edges do not cross
        diamond = [edge(picture, *pair) for pair in [(a, b), (a, c), (b, d), (c, d)]]
        for e, f in itertools.combinations(diamond, 2):
            if not {e["from"], e["to"]} & {f["from"], f["to"]}:
                assert not crosses(e["points"], f["points"]), (e["from"], e["to"], f["from"], f["to"])
        # the edge that skips a layer goes through it, and every edge (the one leaving the band from its middle
        # step too), clear of every box but its own two
        assert boxes[y][0] > boxes[x][0] + boxes[x][2] and boxes[y][0] + boxes[y][2] < boxes[z][0]
        assert edge(picture, x, z)
        for e in picture["edges"]:
            for name, box in boxes.items():
                if name not in (e["from"], e["to"]):
                    assert not any(inside(pt, box) for pt in e["points"]), (e["from"], e["to"], name)
        # the flow: its steps in its band (the retried step's retry too), in step order left to right, nothing
        # else in it
        band, in_band = picture["bands"]["pages-1"], [*steps, retry]
        assert "pages-1" in band[4]
        for s in in_band:
            assert band[0] <= boxes[s][0] and boxes[s][0] + boxes[s][2] <= band[0] + band[2], s
            assert band[1] <= boxes[s][1] and boxes[s][1] + boxes[s][3] <= band[1] + band[3], s
        assert (
            boxes[steps[0]][0]
            < boxes[steps[1]][0]
            < boxes[steps[2]][0]
            < boxes[steps[3]][0]
            < boxes[retry][0]
        )
        for name, box in boxes.items():
            if name not in in_band:
                assert not overlap(box, band[:4]), name
        assert boxes[outside][0] > band[0] + band[2]
        # the lone signals: chips in the strip, counted
        assert sorted(picture["lone"]) == sorted(lone)
        assert "2 signals with no dependencies" in picture["strip"]

        # a click on a box opens the signal, its box highlighted
        click(driver, f'g.node[data-signal="{d}"]', "#graph")
        settled(driver, lambda dr: dr.find_element(By.CSS_SELECTOR, "#detail h3").text.startswith(d))
        assert "selected" in drawn(driver)["boxes"][d][4]
        # the picture on a wider window, where the panel holds the whole drawing (it scrolls in a narrower one)
        driver.set_window_size(1760, 1300)
        fits = "const g = document.getElementById('graph'); return g.scrollWidth <= g.clientWidth;"
        settled(driver, lambda dr: dr.execute_script(fits))
        driver.execute_script("document.getElementById('graph-panel').scrollIntoView()")
        screenshot(driver, "web-graph.png", "#graph-panel")
        assert csp_refusals(driver) == []

        # at a past position: the diamond before d was posted, nothing run yet
        driver.execute_script(
            "const s = document.getElementById('slider'); s.value = arguments[0];"
            "s.dispatchEvent(new Event('input'));",
            before_d,
        )
        past = settled(driver, lambda dr: (p := drawn(dr)) and d not in p["boxes"] and p)
        assert sorted(past["boxes"]) == sorted([a, b, c])
        assert {(e["from"], e["to"]) for e in past["edges"]} == {(a, b), (a, c)}
        assert all("POSTED" in box[4] for box in past["boxes"].values())
    finally:
        server.stop()


LARGE_PAIRS = 160  # 320 signals in pairs (one after the other): more than the 300 boxes the panel draws


@pytest.fixture(params=["sqlite", "postgresql"])
def large_cli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    made = make_cli(database_url(request, tmp_path_factory, "ui-graph-large"), tmp_path)
    made.ok("db", "upgrade")
    return made


def test_a_large_board_draws_at_most_300_boxes_the_most_recent_groups_first(large_cli, browser):
    cli, driver = large_cli, browser
    pairs = []
    with Blackboard(cli.db_url, agents_dir=cli.agents_dir) as api:  # in one process: 320 posts, not 320 CLIs
        for i in range(LARGE_PAIRS):
            first = api.post("RESEARCH", "big", topic=f"first {i}").signal_id
            pairs.append((first, api.post("RESEARCH", "big", topic=f"then {i}", after=[first]).signal_id))
        lone = api.post("RESEARCH", "big", topic="on its own").signal_id
    server = UiServer(cli).wait_ready()
    try:
        driver.get(f"{server.url}/?board=big")
        picture = settled(driver, lambda dr: (p := drawn(dr)) and len(p["boxes"]) == 300 and p)
        newest = [s for pair in pairs[-150:] for s in pair]
        assert sorted(picture["boxes"]) == sorted(newest)  # the 150 newest pairs; the 10 oldest left out
        assert len(picture["edges"]) == 150 and picture["lone"] == [lone]
        said = "At most 300 boxes: 300 signals drawn, the most recent groups; 20 signals in 10 older groups left out."
        settled(driver, lambda dr: dr.find_element(By.CSS_SELECTOR, "#graph .graph-left-out").text == said)
        # a box left out is still a card: a click there selects it, and the graph stays as it was
        click(driver, f'.card[data-signal="{pairs[0][0]}"]')
        settled(
            driver, lambda dr: dr.find_element(By.CSS_SELECTOR, "#detail h3").text.startswith(pairs[0][0])
        )
        assert sorted(drawn(driver)["boxes"]) == sorted(newest)
        assert csp_refusals(driver) == []
    finally:
        server.stop()
