"""How a handler's run ended, from a command's standard output or from an entrypoint's return value."""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from pathlib import Path
from typing import Any

from blackboard.domain.errors import InvalidInput


@dataclass(frozen=True, slots=True)
class HandlerOutcome:
    """How one run of a handler ended: succeeded with a result, or failed with an error."""

    succeeded: bool
    artifact_path: str | None = None
    knowledge_items: tuple[str, ...] = field(default_factory=tuple)
    error: str | None = None
    # the handler asked for a retry (exit 75, or `{"retry_after": SECONDS}`): seconds to wait, None for
    # the backoff's wait; a failure either way, which uses an attempt (docs/control.md, "Retries")
    retry_after: float | None = None


RETRY_EXIT = 75  # EX_TEMPFAIL (sysexits.h): a temporary failure, try again later


def retry_asked(value: Any, source: str) -> HandlerOutcome | None:
    """A handler's `{"retry_after": SECONDS}`: a failure asking for a retry after that long; None when
    `value` does not ask. A wait that is not a number of seconds from 0 to a day is a refused output."""
    if not isinstance(value, dict) or "retry_after" not in value:
        return None
    wait = value["retry_after"]
    if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait <= MAX_RETRY_AFTER:
        return HandlerOutcome(
            False, error=f"{source}: retry_after must be a number of seconds from 0 to 86400, got {wait!r}"
        )
    reason = value.get("error") if isinstance(value.get("error"), str) else None
    said = f"asked for a retry in {wait:g}s" + (f": {reason}" if reason else "")
    return HandlerOutcome(False, error=f"{source}: {said}", retry_after=float(wait))


MAX_RETRY_AFTER = 86_400.0


MAX_OUTPUT_DEPTH = 64  # levels of arrays and objects an output read as JSON may nest (a result needs 2)
_STEPS = bytes.maketrans(b"[{]}", b"\2\2\0\0")  # an opening bracket one level down (2 - 1), a closing one up
_NOT_A_BRACKET = bytes(set(range(256)) - set(b"[]{}"))


def nesting(text: str) -> int:
    """How deep the arrays and objects of `text` nest, read as JSON would be (brackets inside strings are
    text), counted without parsing it, in passes at C speed (megabytes in a tenth of a second): what decides
    whether it may be parsed at all. Escapes go first (`\\\\`, then `\\"`), so every quote left opens or
    closes a string, and every other piece between quotes is outside one."""
    raw = text.encode("utf-8", "surrogatepass").replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(raw.split(b'"')[::2])
    steps = outside.translate(None, _NOT_A_BRACKET).translate(_STEPS)
    return max(accumulate(map(operator.sub, steps, repeat(1))), default=0)


def from_stdout(stdout: str, source: str = "handler output") -> HandlerOutcome:
    """A command's standard output (or a runner's final answer): a JSON object with our keys as a result,
    anything else as text. Output that opens as JSON (`[` or `{`) and nests deeper than
    MAX_OUTPUT_DEPTH levels is not parsed (Python's parser would give up past about a thousand, with a
    RecursionError): it fails the run, saying so."""
    text = stdout.strip()
    if text[:1] in ("[", "{") and (deep := nesting(text)) > MAX_OUTPUT_DEPTH:
        return HandlerOutcome(False, error=too_deep(source, deep))
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    if (asked := retry_asked(value, source)) is not None:
        return asked
    if isinstance(value, dict) and ("artifact_path" in value or "knowledge_items" in value):
        return _fields(value, source)
    return HandlerOutcome(True, knowledge_items=(text,) if text else ())


def too_deep(source: str, deep: int) -> str:
    return (
        f"{source}: nested deeper than {MAX_OUTPUT_DEPTH} levels of arrays and objects ({deep}); "
        f"output read as JSON may nest at most {MAX_OUTPUT_DEPTH}"
    )


def from_value(value: Any) -> HandlerOutcome:
    """An entrypoint's return value: a dict as a command's JSON, a str as its text, None as nothing."""
    if value is None:
        return HandlerOutcome(True)
    if isinstance(value, str):
        text = value.strip()
        return HandlerOutcome(True, knowledge_items=(text,) if text else ())
    if (asked := retry_asked(value, "handler result")) is not None:
        return asked
    if isinstance(value, dict) and ("artifact_path" in value or "knowledge_items" in value):
        return _fields(value, "handler result")
    if isinstance(value, dict):
        return HandlerOutcome(
            False,
            error=f"handler result: a dict must hold artifact_path and/or knowledge_items, "
            f"got keys {sorted(map(str, value))}",
        )
    return HandlerOutcome(
        False, error=f"handler result: must be a dict, a str or None, got {type(value).__name__}"
    )


def _fields(value: dict[str, Any], source: str) -> HandlerOutcome:
    items = value.get("knowledge_items") or []
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        return HandlerOutcome(False, error=f"{source}: knowledge_items must be a list of strings")
    artifact = value.get("artifact_path")
    if artifact is not None and not isinstance(artifact, str):
        return HandlerOutcome(False, error=f"{source}: artifact_path must be a string")
    return HandlerOutcome(True, artifact, tuple(items))


def artifact_refusal(
    artifact_path: str, folder: Path, artifacts_dir: str, whose: str = "the agent's folder"
) -> str | None:
    """Why a completion may not name this artifact, or None when it may: the one rule of every completion
    path. The path, relative to `folder` (the agent's folder or the run's for a worker's handler, the working
    folder for the CLI, the Python API and an MCP server) unless absolute, must lead (symbolic links followed)
    inside that folder or inside the artifacts folder (BLACKBOARD_ARTIFACTS_DIR, absolute once the settings
    are read), so neither a handler fed hostile signal data nor a hand at the keyboard can make the board
    point readers at /etc/passwd or ~/.ssh."""
    shown = repr(artifact_path[:200])
    try:
        target = (folder / artifact_path).resolve()
        allowed = [folder.resolve(), (folder / artifacts_dir).resolve()]
    except (OSError, RuntimeError, ValueError) as exc:  # a loop of links, a NUL in the path
        return f"{shown} cannot be resolved: {exc}"
    if any(target.is_relative_to(root) for root in allowed):
        return None
    return (
        f"{shown} leads outside {whose} {allowed[0]} and the artifacts folder {allowed[1]}, symbolic links "
        "followed (an artifact must be inside one of them; set BLACKBOARD_ARTIFACTS_DIR to allow another folder)"
    )


def checked_artifact(artifact_path: str | None, artifacts_dir: str, field: str) -> str | None:
    """The artifact path of a completion made by hand (`complete --artifact-path`, `Blackboard.complete`, MCP
    `blackboard_complete`), if it leads inside the working folder or the artifacts folder (artifact_refusal);
    else InvalidInput naming `field` (exit 2), before anything is written."""
    if artifact_path is None:
        return None
    try:
        here = Path.cwd()
    except OSError as exc:  # the working folder was removed
        raise InvalidInput(
            field, f"the working folder cannot be read ({exc}), so no artifact path can be checked"
        ) from None
    if (refused := artifact_refusal(artifact_path, here, artifacts_dir, "the working folder")) is not None:
        raise InvalidInput(field, refused)
    return artifact_path
