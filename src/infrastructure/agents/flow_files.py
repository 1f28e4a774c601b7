"""Reading a flow file: Markdown with YAML front matter (`name`, `description`, `steps`), its body the flow's
longer description, as an agent file is read (python-frontmatter, YAML); every problem named with its field
and the rule, and the file (`FlowInvalid`, exit 2). The rules themselves are the command model's
(application/flows/commands.py) and the domain's (domain/flows.py), which the Python API and MCP apply too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from blackboard.application.flows.commands import FlowSpec
from blackboard.domain.errors import InvalidInput
from blackboard.domain.flows import MAX_STEPS, NAME_RULE, FlowInvalid
from blackboard.infrastructure.errors.input import shown

MAX_FILE_BYTES = 256 * 1024  # a flow file is a page or two of text
KEYS = ("name", "description", "steps")  # the front matter's; the body is the rest of the file
STEP_KEYS = ("id", "capability", "agent", "topic", "prompt", "after", "gate", "type")


def read_flow_file(path: Path | str) -> FlowSpec:
    """The flow a file holds. FlowInvalid naming the file and every rule it breaks; InvalidInput (`FILE`)
    when it cannot be read."""
    path = Path(path)
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise InvalidInput("FILE", f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise FlowInvalid(
            [("file", f"is bigger than {MAX_FILE_BYTES // 1024} KiB, too big for a flow file")], str(path)
        )
    if b"\0" in raw:
        raise FlowInvalid([("file", "is binary (it holds NUL bytes), not a flow file")], str(path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FlowInvalid([("file", "is not UTF-8 text")], str(path)) from None
    return read_flow_text(text, str(path))


def read_flow_text(text: str, where: str = "flow") -> FlowSpec:
    """The flow a flow file's text holds (`where` names it in a refusal)."""
    import frontmatter  # imported when a flow is read: other commands skip it
    import yaml

    handler = frontmatter.YAMLHandler()
    text = text.lstrip("\ufeff").strip()
    if not handler.detect(text):
        raise FlowInvalid(
            [("frontmatter", "is missing: start the file with a block between --- lines")], where
        )
    try:
        head, body = handler.split(text)
    except ValueError:
        raise FlowInvalid([("frontmatter", "has no closing --- line")], where) from None
    try:
        data = yaml.safe_load(head)
    except yaml.YAMLError as exc:
        raise FlowInvalid([("frontmatter", f"is not valid YAML: {_yaml_reason(exc)}")], where) from None
    if not isinstance(data, dict):
        raise FlowInvalid(
            [("frontmatter", "must be a mapping of keys to values (name, description, steps)")], where
        )
    problems = [
        (str(key), f"is not a key of a flow file ({', '.join(KEYS)})") for key in data if key not in KEYS
    ]
    if problems:
        raise FlowInvalid(problems, where)
    try:
        return FlowSpec.model_validate({**data, "body": body.strip()})
    except ValidationError as exc:
        raise FlowInvalid([_problem(error) for error in exc.errors()], where) from None
    except FlowInvalid as exc:  # the steps' rules together (domain/flows.py)
        raise FlowInvalid(exc.problems, where) from None


def flow_of(value: Any, where: str = "flow") -> FlowSpec:
    """A flow given as a mapping (the Python API, MCP): the same model and the same words as a file's."""
    if isinstance(value, FlowSpec):
        return value
    try:
        return FlowSpec.model_validate(value)
    except ValidationError as exc:
        raise FlowInvalid([_problem(error) for error in exc.errors()], where) from None


def _problem(error: Any) -> tuple[str, str]:
    """One pydantic error as (field, rule): `steps[1].topic`, in the file's words."""
    loc = error["loc"]
    field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")
    kind, value = error["type"], error.get("input")
    if kind == "missing":
        return field, "is required"
    if kind == "extra_forbidden":
        where = "a step" if len(loc) == 3 and loc[0] == "steps" else "a flow file"
        keys = STEP_KEYS if where == "a step" else KEYS
        return field, f"is not a key of {where} ({', '.join(keys)})"
    if kind == "one_target":
        return field or "steps", str(error["msg"])
    if field == "steps" and kind in ("too_short", "too_long"):
        return (
            field,
            f"must list 1 to {MAX_STEPS} steps, got {len(value) if isinstance(value, list | tuple) else value}",
        )
    if kind == "string_pattern_mismatch":
        return field, f"must be {NAME_RULE}, got {shown(value)}"
    if kind == "enum" and loc[-1:] == ("type",):
        return (
            field,
            f"must be one of RESEARCH, ANALYSIS, REVIEW, DECISION, INVESTIGATION, SYNTHESIS, got {shown(value)}",
        )
    message = str(error["msg"])
    return field or "flow", f"{message[0].lower()}{message[1:]}, got {shown(value)}"


def _yaml_reason(exc: Any) -> str:
    import yaml

    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        # the YAML text starts on the opening --- line (its remainder is empty), and marks count from 0
        return f"{exc.problem} (line {exc.problem_mark.line + 1} of the file)"
    return str(exc)
