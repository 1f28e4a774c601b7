"""docs/skill/SKILL.md teaches a coding agent the real command line: a skill's frontmatter, and the four steps
in its examples (test_examples.py runs every one of them, beside a running worker)."""

from __future__ import annotations

import frontmatter

from tests.docs.examples import ROOT, blocks

SKILL = ROOT / "docs" / "skill" / "SKILL.md"


def test_the_skill_has_a_name_and_a_description():
    meta = frontmatter.loads(SKILL.read_text(encoding="utf-8")).metadata
    assert meta["name"] == "blackboard" and len(meta["description"]) > 50


def test_the_skill_shows_the_four_steps():
    shown = " ".join(block.text for block in blocks(SKILL) if block.language == "bash")
    for step in ("post -q", "wait", "watch", "--since", "read", "entries", "write"):
        assert f"blackboard {step}" in shown or f" {step} " in shown, step
