"""docs/skill/SKILL.md teaches an agent the real command line: a skill's frontmatter, and every
`blackboard ...` call in its examples accepted by the CLI's own parser."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import frontmatter
import pytest

from blackboard.infrastructure.cli.parser import build_parser

SKILL = Path(__file__).resolve().parents[2] / "docs" / "skill" / "SKILL.md"
VARIABLES = {"$SIG": "sig-1a2b3c4d", '"$SINCE"': "0"}
ENDS = {">", "|", ";", "&&", "||", "2>&1"}


def calls() -> list[str]:
    """Each `blackboard` call of the bash examples, continuation lines joined, cut where the shell moves on."""
    text = SKILL.read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    found = []
    for line in "\n".join(blocks).replace("\\\n", " ").splitlines():
        for match in re.finditer(r"(?:^|\$\(|\s)blackboard\s(.*)", line):
            found.append(match.group(1))
    return found


def arguments(call: str) -> list[str]:
    for name, value in VARIABLES.items():
        call = call.replace(name, value)
    words = []
    for word in shlex.split(call, comments=True):
        if word in ENDS or word.startswith(">"):
            break
        core = word.rstrip(";")
        if core.endswith(")") and "(" not in core:  # the end of a $( ... )
            words.append(core[:-1])
            break
        words.append(word)
    return words


def test_the_skill_has_a_name_and_a_description():
    meta = frontmatter.loads(SKILL.read_text(encoding="utf-8")).metadata
    assert meta["name"] == "blackboard" and len(meta["description"]) > 50


def test_the_skill_shows_the_four_steps():
    found = " ".join(calls())
    assert all(word in found for word in ("post -q", "wait", "watch", "--since", "read", "entries", "write"))


@pytest.mark.parametrize("call", calls())
def test_every_call_in_the_skill_parses(call):
    try:
        build_parser().parse_args(arguments(call))
    except SystemExit as exit_:
        pytest.fail(f"`blackboard {call}` is refused by the parser (exit {exit_.code})")
