"""README's relative links point at files inside the repository (a clone, or the sdist, has no ../shared)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_relative_link_of_the_readme_is_a_file_of_the_repository():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    relative = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert relative, "the README links to its docs"
    outside = [link for link in relative if not (ROOT / link).resolve().is_relative_to(ROOT)]
    missing = [link for link in relative if not (ROOT / link).exists()]
    assert not outside and not missing, f"outside the repository: {outside}; missing: {missing}"
