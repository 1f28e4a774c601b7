"""A tool's arguments: a pydantic model derived from the fields of the command model it feeds.

The tool's input schema is that model's JSON schema, and the same field definitions (types,
patterns, bounds, validators) check a call's arguments as they check the CLI's options: one rule,
two interfaces. A refusal names the tool's argument and the rule, before anything is written.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo

from blackboard.application.fields import MAX_INT64
from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.errors.input import invalid_input
from blackboard.infrastructure.interfaces.names import public

STRICT = ConfigDict(extra="forbid")


def same(*names: str) -> dict[str, str]:
    """Arguments named as the command model's fields."""
    return {name: name for name in names}


def named(*fields: str) -> dict[str, str]:
    """Arguments by the fields' public names (interfaces/names.py: `by` for `approved_by`): argument -> field."""
    return {public(field): field for field in fields}


def derive(
    title: str,
    model: type[BaseModel],
    fields: Mapping[str, str],
    optional: tuple[str, ...] = (),
    own: Mapping[str, tuple[Any, FieldInfo]] | None = None,
    notes: Mapping[str, str] | None = None,
) -> type[BaseModel]:
    """An argument model named `title`: each argument of `fields` (argument -> the model's field) as
    the model defines that field; those in `optional` may be left out (None), whatever the model
    says; `own` adds arguments the command model does not have; `notes` describe arguments."""
    made: dict[str, Any] = {}
    for argument, name in fields.items():
        field = copy.deepcopy(model.model_fields[name])
        if argument in optional and field.is_required():
            inner = Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
            field = FieldInfo(annotation=inner | None, default=None)
        made[argument] = (field.annotation, field)
    made.update(own or {})
    for argument, note in (notes or {}).items():  # merged, not assigned: an assigned one is lost when
        annotation, field = made[argument]  # pydantic merges an optional argument's Annotated metadata
        made[argument] = (annotation, FieldInfo.merge_field_infos(field, description=note))
    arguments = create_model(title, __config__=STRICT, **made)
    COMMAND_FIELDS[arguments] = (model, dict(fields))
    return arguments


# Each argument model's command model and its arguments' fields (argument -> field): what the tests of the
# one validation layer read to drive a command model's fields through the tools, new fields included.
COMMAND_FIELDS: dict[type[BaseModel], tuple[type[BaseModel], dict[str, str]]] = {}


def invalid(error: ValidationError, names: Mapping[str, str] | None = None) -> InvalidInput:
    """A ValidationError as bad input naming each argument (`names`: a command field -> the argument
    that gave it) and its rule: the one translation every interface uses (errors/input.py). An argument
    model's own refusal names its arguments already; the fields it renames are still given, so a hint
    naming another field (errors/input.py, HINTS) says it as the tool's argument."""
    if names is None:
        names = next(
            (
                {field: argument for argument, field in fields.items() if field != argument}
                for arguments, (_, fields) in COMMAND_FIELDS.items()
                if arguments.__name__ == error.title
            ),
            None,
        )
    return invalid_input(error, names)


def accepted(arguments_model: type[BaseModel], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments the caller gave, validated (ValidationError when one breaks its rule)."""
    return arguments_model.model_validate(dict(arguments)).model_dump(exclude_unset=True)


EMPTY_DEFAULTS = ([], {}, "", False, None)  # what leaving an argument out means anyway


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema as a model reads it, every rule kept and the words that carry none left out:
    each tool's schema is in the context of every request a session makes (docs/mcp.md, "Context size").

    - no `title` (pydantic titles each field with its own name, "Ps Id" for `ps_id`);
    - `$defs` inlined (an enum used once reads better where it is used);
    - an optional argument is its own type, without `anyOf [..., {"type": "null"}]` and `default: null`
      (leaving it out says that; null is still accepted);
    - no default that leaving the argument out implies (`[]`, `{}`, `""`, `false`, `null`), and no
      `additionalProperties: true` (JSON Schema's own default); other defaults stay (`entry_type`: note);
    - no `maximum` of 2**63 - 1, the 64-bit bound of every position and count (a call past it is still
      refused, naming the argument).
    """
    definitions = schema.get("$defs", {})

    def node(value: Any) -> Any:
        if isinstance(value, list):
            return [node(item) for item in value]
        if not isinstance(value, dict):
            return value
        if "$ref" in value:
            value = {**definitions[value["$ref"].rsplit("/", 1)[-1]], **value}
            value.pop("$ref")
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in ("title", "$defs") or (key == "additionalProperties" and item is True):
                continue
            if key == "maximum" and item == MAX_INT64:  # every position and count: still refused past it
                continue
            if key == "properties":
                out[key] = {name: node(field) for name, field in item.items()}
            else:
                out[key] = node(item)
        options = out.get("anyOf")
        if "default" in out and out["default"] is None and isinstance(options, list) and len(options) == 2:
            kept = [option for option in options if option != {"type": "null"}]
            if len(kept) == 1:
                del out["anyOf"], out["default"]
                out = {**kept[0], **out}
        if "default" in out and any(
            out["default"] == e and type(out["default"]) is type(e) for e in EMPTY_DEFAULTS
        ):
            del out["default"]
        return out

    return node(schema)
