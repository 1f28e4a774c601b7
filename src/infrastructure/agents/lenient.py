"""Frontmatter as Claude Code reads it: strict YAML first, then top-level `key: value` lines.

Claude Code registers agent files whose `description` holds an unquoted `: ` (`Context:` lines in
examples), which strict YAML refuses ("mapping values are not allowed here"). When the whole block is
not valid YAML, each top-level key is read on its own: its block (the `key:` line and the indented or
unkeyed lines after it) is parsed as YAML when it can be, and otherwise taken as text, the rest of
the line plus its continuation lines, the way Claude Code takes it. A key read as text is said in a
warning (with its fix: quote the value); a key the blackboard owns (`OWNED`) must be valid YAML, so
there the failure stays an error.

A value read as text runs on to the next key an agent file knows (`KNOWN`): descriptions carry example
blocks whose lines look like keys (`Examples:`, `Context: ...`, `user: "..."`, `assistant: "..."`, often
unindented after a blank line), and those belong to the text. So does a block of an unknown key that is not
valid YAML right after a description that was: the description's text goes on there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# keys whose value the blackboard acts on: a guess at what they mean would do the wrong work
OWNED = frozenset(
    {
        "name",
        "capabilities",
        "threshold",
        "command",
        "entrypoint",
        "timeout",
        "stall_timeout",
        "runner",
        "max_turns",
        "max_budget_usd",
        "retries",
        "concurrency",
        "estimate",
        "rate_limit",
    }
)
# every key Claude Code's agent files or the blackboard's give a meaning to: where a text value ends
KNOWN = OWNED | frozenset(
    {
        "description",
        "tools",
        "disallowedTools",
        "model",
        "permissionMode",
        "mcpServers",
        "hooks",
        "maxTurns",
        "skills",
        "memory",
        "background",
        "effort",
        "isolation",
        "color",
        "initialPrompt",
    }
)
RUNS_ON = "description"  # the key whose text examples continue
_KEY_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]|$)")


@dataclass(slots=True)
class Frontmatter:
    """The keys read, and what a reader should hear: warnings (the file loads) and errors (it does not)."""

    data: dict[str, Any]
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (message, fix)
    errors: list[tuple[str, str]] = field(default_factory=list)


def read_frontmatter(head: str) -> Frontmatter:
    """The frontmatter block (between the --- lines) as a mapping; raises yaml.YAMLError only when
    strict YAML fails and no top-level key can be found either."""
    import yaml

    try:
        data = yaml.load(head, Loader=_loader())
    except (
        yaml.YAMLError,
        ValueError,
    ) as strict:  # ValueError: a value YAML types but cannot build (2024-13-45)
        blocks = _blocks(head)
        if not blocks:
            raise strict from None
        return _leniently(blocks)
    return Frontmatter({} if data is None else data)


def _blocks(head: str) -> list[tuple[str, int, list[str]]]:
    """(key, line number in the file, lines) of each top-level key, in order."""
    found: list[tuple[str, int, list[str]]] = []
    for index, line in enumerate(head.splitlines()):
        match = _KEY_LINE.match(line)
        if match:
            found.append((match.group(1), index + 1, [line]))  # line 0 is the rest of the opening --- line
        elif found:
            found[-1][2].append(line)
    return found


def _leniently(blocks: list[tuple[str, int, list[str]]]) -> Frontmatter:
    import yaml

    read = Frontmatter({})
    blocks, last = list(blocks), None
    while blocks:
        key, line, lines = blocks.pop(0)
        try:
            value = yaml.load("\n".join(lines), Loader=_loader())
        except (yaml.YAMLError, ValueError) as exc:
            reason = f"{_problem(exc)}, line {line + _line_in(exc)} of the file"
            if key not in KNOWN and last is not None and last[0] == RUNS_ON and RUNS_ON in read.data:
                key, line, lines = last[0], last[1], [*last[2], *lines]  # the description goes on here
                del read.data[RUNS_ON]
            while key == RUNS_ON and blocks and blocks[0][0] not in KNOWN:  # `Context:` ... of its examples
                lines = [*lines, *blocks.pop(0)[2]]
            if key in OWNED:
                read.errors.append(
                    (f"{key}: is not valid YAML ({reason})", f"quote the {key} or fix its YAML")
                )
                continue
            read.data[key] = _as_text(key, lines)
            last = None
            read.warnings.append(
                (
                    f"{key}: is not strict YAML ({reason}); read as plain text, as Claude Code reads it",
                    f"quote the {key}",
                )
            )
            continue
        read.data[key] = value.get(key) if isinstance(value, dict) else None
        last = (key, line, lines)
    return read


def _as_text(key: str, lines: list[str]) -> str:
    """The rest of the key's line and its continuation lines; a `\\n` written out in a one-line value
    (as public collections do in descriptions) becomes a line break."""
    first = lines[0].split(":", 1)[1].strip()
    rest = [line.strip() for line in lines[1:]]
    text = "\n".join([first, *rest]).strip()
    return text.replace("\\n", "\n") if "\n" not in text else text


def _loader() -> Any:
    """libyaml's safe loader when PyYAML was built with it (three times faster), as python-frontmatter picks."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _problem(exc: Any) -> str:
    return str(getattr(exc, "problem", None) or exc).strip()


def _line_in(exc: Any) -> int:
    mark = getattr(exc, "problem_mark", None)
    return mark.line if mark is not None else 0
