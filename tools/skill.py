"""Copy the skill (docs/skill/SKILL.md, the one source) to where it ships: inside the Python package
(src/infrastructure/skill/SKILL.md, package data: `blackboard skill install` writes it into a project) and
inside the Claude Code plugin (plugin/skills/blackboard/SKILL.md).

`make skill` copies; `--check` copies nothing and fails, naming each copy that differs from the source
(tests/unit/test_skill_copies.py runs the same check).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "docs" / "skill" / "SKILL.md"
COPIES = (
    ROOT / "src" / "infrastructure" / "skill" / "SKILL.md",
    ROOT / "plugin" / "skills" / "blackboard" / "SKILL.md",
)


def stale() -> list[Path]:
    """The copies that differ from the source (or are missing)."""
    text = SOURCE.read_bytes()
    return [copy for copy in COPIES if not copy.is_file() or copy.read_bytes() != text]


def main(argv: list[str]) -> int:
    differing = stale()
    if "--check" in argv:
        for copy in differing:
            print(f"{copy.relative_to(ROOT)} differs from {SOURCE.relative_to(ROOT)}: run `make skill`")
        return 1 if differing else 0
    for copy in differing:
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(SOURCE.read_bytes())
        print(f"wrote {copy.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
