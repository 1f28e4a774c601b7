"""The shipped JSON schemas are generated from the document models (tools/schemas.py, `make schemas`), and
the signal's stays compatible with the contract's: every rule the contract puts on a field, ours puts there
too, as strict or stricter."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest
from jsonschema import Draft7Validator

from tests.paths import CONTRACT_SIGNAL_SCHEMA, ROOT, SCHEMAS

ANNOTATIONS = {"$schema", "$id", "title", "description"}


def generator() -> Any:
    spec = importlib.util.spec_from_file_location("schemas_tool", ROOT / "tools" / "schemas.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return generator().texts()


def test_each_checked_in_schema_is_what_the_models_generate(generated):
    assert sorted(generated) == sorted(p.name for p in SCHEMAS.glob("*.json"))
    for name, text in generated.items():
        assert (SCHEMAS / name).read_text(encoding="utf-8") == text, f"{name}: run `make schemas`"


def test_the_generated_schemas_are_valid_draft_07(generated):
    for text in generated.values():
        Draft7Validator.check_schema(json.loads(text))


def refinements(ours: dict[str, Any], theirs: dict[str, Any], where: str = "") -> list[str]:
    """Where `ours` accepts something `theirs` refuses, keyword by keyword of `theirs` (empty: none)."""
    broken: list[str] = []
    for keyword, rule in theirs.items():
        here, mine = f"{where}/{keyword}", ours.get(keyword)
        if keyword in ANNOTATIONS:
            continue
        if keyword == "type":
            if not set(_list(mine)) <= set(_list(rule)) or mine is None:
                broken.append(f"{here}: {mine} is not within {rule}")
        elif keyword == "enum":
            if mine is None or not set(mine) <= set(rule):
                broken.append(f"{here}: {mine} is not within {rule}")
        elif keyword == "required":
            if not set(rule) <= set(mine or ()):
                broken.append(f"{here}: {sorted(set(rule) - set(mine or ()))} not required")
        elif keyword == "properties":
            for name, sub in rule.items():
                if name not in (mine or {}):
                    broken.append(f"{here}/{name}: missing")
                else:
                    broken += refinements(mine[name], sub, f"{here}/{name}")
        elif keyword == "items":
            broken += refinements(mine or {}, rule, here)
        elif keyword in ("minLength", "minItems", "minimum"):
            if mine is None or mine < rule:
                broken.append(f"{here}: {mine} is below {rule}")
        elif keyword in ("maxLength", "maxItems", "maximum"):
            if mine is None or mine > rule:
                broken.append(f"{here}: {mine} is above {rule}")
        elif keyword in ("pattern", "format"):
            if mine != rule:
                broken.append(f"{here}: {mine!r} is not {rule!r}")
        elif keyword == "additionalProperties":
            if rule is False and mine is not False:
                broken.append(f"{here}: ours allows extra properties")
        else:
            broken.append(f"{here}: a keyword this check does not know")
    return broken


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def test_the_shipped_signal_schema_refines_the_contract_s(generated):
    contract = json.loads(CONTRACT_SIGNAL_SCHEMA.read_text(encoding="utf-8"))

    assert refinements(json.loads(generated["agent-signal.schema.json"]), contract) == []


def test_the_refinement_check_catches_a_looser_schema(generated):
    contract = json.loads(CONTRACT_SIGNAL_SCHEMA.read_text(encoding="utf-8"))
    ours = json.loads(generated["agent-signal.schema.json"])
    looser = {**ours, "properties": {**ours["properties"], "signal_id": {"type": "string"}}}
    del looser["properties"]["version"]["minimum"]

    assert refinements(looser, contract) == [
        "/properties/signal_id/pattern: None is not '^sig-[0-9a-f]{8}$'",
        "/properties/version/minimum: None is below 1",
    ]
