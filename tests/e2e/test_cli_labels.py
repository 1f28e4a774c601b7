"""Labels on signals (docs/cli.md, "Labels"): `post --label L`, repeatable, kept in the signal's document; the
`--label` filters of `signals`, `next`, `status` and `watch` (a signal matches when it carries every label
named); carried by a rebuild, by time travel (`--at`) and by export and import; a bad label exits 2 naming
`--label` and its rule, writing nothing. Through the real executable, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import (
    QUICK_AGENT,
    Cli,
    assert_signal,
    assert_signals,
    cli_with_agents,
    empty_database,
)

BOARD = "ps-l"


@pytest.fixture(params=["sqlite", "postgresql"])
def lcli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    return cli_with_agents(
        request, make_cli, tmp_path_factory, tmp_path, "labels", {"ps-quick.md": QUICK_AGENT}
    )


def post(cli: Cli, entry: str, *labels: str, **more: str) -> dict:
    flags = [flag for label in labels for flag in ("--label", label)]
    return cli.post(*flags, *more.get("extra", ()), ps=BOARD, entry=entry, topic=f"work {entry}")


def ids(documents: list[dict]) -> list[str]:
    return [d["signal_id"] for d in documents]


def test_labels_are_posted_kept_in_the_document_and_filter_every_listing(lcli):
    both = post(lcli, "e-1", "bug", "team:core", "bug")  # a label given twice is kept once
    bug = post(lcli, "e-2", "bug")
    core = post(lcli, "e-3", "team:core")
    plain = post(lcli, "e-4")
    # a label with `_` is no LIKE pattern: `a_b` does not find `axb`; a context holding "bug" is no label
    lookalike = post(lcli, "e-5", "axb", extra=("--context", '{"labels": ["bug"], "note": "bug"}'))

    assert both["labels"] == ["bug", "team:core"] and plain["labels"] == []
    assert "labels" not in both["payload"]  # one place for them: the document's own field
    assert lcli.ok("show", both["signal_id"])["labels"] == ["bug", "team:core"]
    assert "  labels: bug, team:core" in lcli("show", both["signal_id"]).expect(0).stdout

    def listed(*labels: str) -> list[str]:
        flags = [flag for label in labels for flag in ("--label", label)]
        return ids(assert_signals(lcli.ok("signals", "--blackboard", BOARD, *flags)))

    assert listed() == ids([both, bug, core, plain, lookalike])
    assert listed("bug") == ids([both, bug])
    assert listed("team:core") == ids([both, core])
    assert listed("bug", "team:core") == ids([both])  # every label named
    assert listed("a_b") == [] and listed("axb") == ids([lookalike])
    assert listed("nothing") == []

    planned = lcli.ok("next", "--blackboard", BOARD, "--label", "team:core")["next"]
    assert sorted(m["signal_id"] for m in planned) == sorted(ids([both, core]))

    (status,) = lcli.ok("status", "--label", "bug")
    assert status["blackboard_id"] == BOARD and status["signals"]["POSTED"] == 2
    assert lcli.ok("status", "--label", "nothing") == []
    assert lcli.ok("status", "--blackboard", BOARD, "--label", "nothing") == []  # the board is, unlabelled so
    assert lcli("status", "--blackboard", "ps-none", "--label", "bug").expect(4)
    assert lcli.ok("status")[0]["signals"]["POSTED"] == 5


def test_watch_with_labels_waits_for_a_completion_carrying_them(lcli):
    plain, labelled = post(lcli, "e-1")["signal_id"], post(lcli, "e-2", "release")["signal_id"]
    since = lcli.ok("events")[-1]["position"]
    for signal in (plain, labelled):  # the plain one completes first: the watch must pass it by
        lcli.ok("claim", signal, "--agent", "ps-quick")
        lcli.ok("complete", signal, "--agent", "ps-quick")

    found = lcli.ok(
        "watch", "--type", "RESEARCH", "--label", "release", "--since", str(since), "--timeout", "30"
    )
    unlabelled = lcli.ok("watch", "--type", "RESEARCH", "--since", str(since), "--timeout", "30")

    assert found["signal_id"] == labelled and found["labels"] == ["release"]
    assert unlabelled["signal_id"] == plain
    refused = lcli("watch", "--topic", "t", "--blackboard", BOARD, "--label", "release").expect(2)
    assert "--label: goes with --type" in refused.stderr


def test_a_rebuild_and_time_travel_carry_the_labels(lcli):
    first = post(lcli, "e-1", "bug")["signal_id"]
    at = lcli.ok("events")[-1]["position"]
    second = post(lcli, "e-2", "bug")["signal_id"]
    lcli.ok("claim", first, "--agent", "ps-quick")

    lcli.ok("projection", "rebuild")

    assert ids(lcli.ok("signals", "--label", "bug")) == [first, second]
    assert lcli.ok("show", first)["labels"] == ["bug"]
    then = lcli.ok("signals", "--label", "bug", "--at", str(at))
    assert ids(then) == [first] and then[0]["status"] == "POSTED" and then[0]["labels"] == ["bug"]
    assert lcli.ok("show", second, "--at", str(at + 1))["labels"] == ["bug"]


@pytest.fixture(params=["sqlite", "postgresql"])
def two_stores(request, make_cli, tmp_path, tmp_path_factory) -> tuple[Cli, Cli]:
    """A board's store and an empty one of the other technology: labels cross from each to the other."""
    sqlite = f"sqlite:///{tmp_path_factory.mktemp('labels-transfer') / 'blackboard.db'}"
    pg = request.getfixturevalue("pg_database_url")
    empty_database(pg)
    source, target = (sqlite, pg) if request.param == "sqlite" else (pg, sqlite)
    return make_cli(source, tmp_path), make_cli(target, tmp_path)


def test_export_and_import_carry_the_labels(two_stores, tmp_path: Path):
    source, target = two_stores
    labelled = post(source, "e-1", "bug", "team:core")["signal_id"]
    post(source, "e-2")
    source("export", BOARD, "--output", str(tmp_path / "board.json")).expect(0)

    target.ok("import", str(tmp_path / "board.json"))

    assert ids(target.ok("signals", "--label", "team:core")) == [labelled]
    assert target.ok("show", labelled)["labels"] == ["bug", "team:core"]
    assert target.ok("signals", "--blackboard", BOARD) == source.ok("signals", "--blackboard", BOARD)


@pytest.mark.parametrize(
    ("labels", "rule"),
    [
        (["Bug"], "String should match pattern '^[a-z0-9][a-z0-9._:/-]*$'"),
        (["-bug"], "String should match pattern"),
        (["two words"], "String should match pattern"),
        ([""], "String should match pattern"),
        (["x" * 65], "String should have at most 64 characters"),
        ([f"l{n}" for n in range(21)], "Tuple should have at most 20 items"),
    ],
    ids=["upper-case", "leading-dash", "space", "empty", "65-characters", "21-labels"],
)
def test_a_bad_label_exits_2_naming_the_option_and_its_rule_and_writes_nothing(lcli, labels, rule):
    lcli.ok("events", "--limit", "1")  # the schema exists
    before = lcli.ok("events", "--all")
    flags = [f"--label={label}" for label in labels]  # `--label=-bug`: argparse takes it as the value

    refused = lcli("post", "--capability", "RESEARCH", "--blackboard", BOARD, "--topic", "t", *flags).expect(
        2
    )
    listed = lcli("signals", *flags).expect(2)

    assert f"--label: {rule}" in refused.stderr, refused.stderr
    assert f"--label: {rule}" in listed.stderr, listed.stderr
    assert lcli.ok("events", "--all") == before


def test_the_longest_and_the_most_labels_are_taken(lcli):
    most = [f"l{n}" for n in range(19)] + ["x" * 64]
    assert assert_signal(post(lcli, "e-1", *most))["labels"] == most
    assert ids(lcli.ok("signals", "--label", "x" * 64, "--label", "l0")) == [
        lcli.ok("signals")[0]["signal_id"]
    ]
