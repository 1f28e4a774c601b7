"""What the CLI prints for a signal validates against seed 003's own AgentSignal schema (section 9.1, kept
verbatim in tests/fixtures/seed-003), where its fields overlap ours, in every status: a result without an
artifact leaves `artifact_path` out (the seed's schema wants a string there; the contract's allows null).

The seed's state machine has no UNCLAIMED: for that status alone the test widens the seed's status enum
by it, and holds every other field to the seed's rules as they are.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from tests.e2e.conftest import FORMATS, Cli, assert_signal

pytestmark = pytest.mark.one_process  # its tests share a costly module fixture (tests/scheduling.py)

SEED = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "seed-003" / "agent-signal.schema.json").read_text(
        encoding="utf-8"
    )
)
OURS_ONLY = {"UNCLAIMED"}  # statuses of ours that the seed's state machine does not have
Draft7Validator.check_schema(SEED)


def seed_errors(document: dict[str, Any]) -> list[str]:
    schema = copy.deepcopy(SEED)
    if document.get("status") in OURS_ONLY:
        schema["properties"]["status"]["enum"].append(document["status"])
    validator = Draft7Validator(schema, format_checker=FORMATS)
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
        for e in validator.iter_errors(document)
    ]


@pytest.fixture(scope="module")
def printed(make_cli, tmp_path_factory) -> dict[str, list[dict[str, Any]]]:
    """A signal in each status, made through the real CLI: what each command printed, then `show`."""
    folder = tmp_path_factory.mktemp("seed-schema")
    cli: Cli = make_cli(f"sqlite:///{folder / 'blackboard.db'}", folder)
    said: dict[str, list[dict[str, Any]]] = {}

    def post(name: str, *args: str) -> str:
        document = cli.post(*args, entry=f"e-{len(said) + 1}", topic=name)
        said[name] = [document]
        return document["signal_id"]

    def then(name: str, *args: str) -> None:
        said[name].append(cli.ok(*args))

    post("POSTED")
    claimed = post("CLAIMED")
    then("CLAIMED", "claim", claimed, "--agent", "ps-researcher")
    written = post("COMPLETED with an artifact")
    then("COMPLETED with an artifact", "claim", written, "--agent", "ps-researcher")
    then(
        "COMPLETED with an artifact",
        "complete",
        written,
        "--agent",
        "ps-researcher",
        "--artifact",
        "notes.md",
    )
    known = post("COMPLETED with knowledge only")
    then("COMPLETED with knowledge only", "claim", known, "--agent", "ps-researcher")
    then("COMPLETED with knowledge only", "complete", known, "--agent", "ps-researcher", "--knowledge", "k")
    failed = post("FAILED")
    then("FAILED", "claim", failed, "--agent", "ps-researcher")
    then("FAILED", "fail", failed, "--agent", "ps-researcher", "--error", "the source was down")
    post("EXPIRED", "--after", failed)  # its upstream failed: it expires as it is posted
    post("UNCLAIMED", "--capability", "WEAVING")  # no agent can: it ends at once
    for documents in said.values():
        documents.append(cli.ok("show", documents[0]["signal_id"]))
    said["every one, listed"] = cli.ok("signals")
    return said


@pytest.mark.parametrize(
    "name",
    [
        "POSTED",
        "CLAIMED",
        "COMPLETED with an artifact",
        "COMPLETED with knowledge only",
        "FAILED",
        "EXPIRED",
        "UNCLAIMED",
        "every one, listed",
    ],
)
def test_what_the_cli_prints_for_a_signal_validates_against_the_seed_s_own_schema(printed, name):
    for document in printed[name]:
        assert_signal(document)  # and the contract's, as always
        assert seed_errors(document) == [], json.dumps(document, indent=2)


def test_every_status_was_reached_and_a_result_without_an_artifact_leaves_it_out(printed):
    last = {name: documents[-1] for name, documents in printed.items() if name != "every one, listed"}
    assert {d["status"] for d in last.values()} == {
        "POSTED",
        "CLAIMED",
        "COMPLETED",
        "FAILED",
        "EXPIRED",
        "UNCLAIMED",
    }
    assert last["COMPLETED with an artifact"]["result"]["artifact_path"] == "notes.md"
    for name in ("COMPLETED with knowledge only", "FAILED"):
        assert "artifact_path" not in last[name]["result"], last[name]
    assert last["FAILED"]["result"]["error"] == "the source was down"
    for name in ("EXPIRED", "UNCLAIMED"):
        assert "artifact_path" not in (last[name]["result"] or {}), last[name]


def test_the_seed_s_schema_refuses_a_null_artifact_path_so_the_check_can_fail(printed):
    failed = printed["FAILED"][-1]

    assert seed_errors({**failed, "result": {**failed["result"], "artifact_path": None}}) == [
        "result/artifact_path: None is not of type 'string'"
    ]
