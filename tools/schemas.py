"""Write the JSON schemas the package ships (src/infrastructure/schemas/*.json) from the document models.

`make schemas` writes them; `--check` writes nothing and fails, naming the file, when one differs from
what the models give (tests/unit/test_schemas.py runs the same check). The models are the truth
(infrastructure/documents/, one module per feature); a schema is pydantic's schema of what a model dumps, laid out as
draft-07 reads it: each `$ref` inlined, an optional value as a type list (`["string", "null"]`), no
titles but the document's own.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "src" / "infrastructure" / "schemas"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"
ORDER = ("$schema", "title", "description", "type", "required", "properties", "items")


def models() -> dict[str, type[BaseModel]]:
    from blackboard.infrastructure.documents import Entry, Signal

    return {"agent-signal.schema.json": Signal, "entry.schema.json": Entry}


def schema(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema(mode="serialization")
    definitions = raw.pop("$defs", {})
    body = _plain(raw, definitions)
    body["title"] = raw["title"]
    body["description"] = " ".join(raw.get("description", "").split())
    return _ordered({"$schema": DRAFT_07, **body})


def texts() -> dict[str, str]:
    """Each schema file's name and the text it must hold."""
    return {
        name: json.dumps(schema(model), indent=2, ensure_ascii=False) + "\n"
        for name, model in models().items()
    }


def _plain(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_plain(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _plain(definitions[node["$ref"].rsplit("/", 1)[-1]], definitions)
    plain: dict[str, Any] = {}
    for keyword, value in node.items():
        if keyword in ("title", "default"):
            continue
        if keyword == "description":  # a model's docstring: one line
            plain[keyword] = " ".join(value.split())
        elif keyword == "properties":
            plain[keyword] = {name: _plain(sub, definitions) for name, sub in value.items()}
        else:
            plain[keyword] = _plain(value, definitions)
    options = plain.get("anyOf")
    if options is not None and len(options) == 2 and {"type": "null"} in options:
        (kind,) = [o for o in options if o != {"type": "null"}]
        if isinstance(kind.get("type"), str):  # X or null: X's rules, its type joined by null
            del plain["anyOf"]
            plain = {**kind, **plain, "type": [kind["type"], "null"]}
    return _ordered(plain)


def _ordered(node: dict[str, Any]) -> dict[str, Any]:
    first = [k for k in ORDER if k in node]
    return {k: node[k] for k in [*first, *sorted(set(node) - set(first))]}


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for name, text in texts().items():
        path = FOLDER / name
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(name)
        if not check:
            path.write_text(text, encoding="utf-8")
    if check and stale:
        print(f"schemas out of date (run `make schemas`): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
