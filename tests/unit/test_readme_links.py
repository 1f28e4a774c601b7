"""The README's and the docs' relative links point at files inside the repository (a clone, or the sdist,
has no ../shared)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_of_a_page_is_a_file_of_the_repository(page):
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)  # code is not a link
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    relative = [link for link in links if not re.match(r"[a-z]+:", link)]
    outside = [link for link in relative if not (page.parent / link).resolve().is_relative_to(ROOT)]
    missing = [link for link in relative if not (page.parent / link).exists()]
    assert not outside and not missing, f"outside the repository: {outside}; missing: {missing}"


def test_the_readme_links_to_every_page_of_the_manual():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in ("cli", "knowledge", "agents", "mcp", "python-api", "web", "deploy-postgres", "testing"):
        assert f"(docs/{page}.md)" in readme, page
