"""Runs import-linter on the installed layout: `blackboard.*` as pyproject's package-dir maps it.

The folders stay where the project's layout puts them (src/domain, ...), so no folder on disk looks
like the `blackboard` package that gets installed; import-linter reads packages from disk. This
builds that package as a tree of symlinks under build/lint (from the one mapping in pyproject.toml)
and lints it there. Exit code: import-linter's.
"""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "lint"


def link_tree() -> None:
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    shutil.rmtree(TREE, ignore_errors=True)
    for package, folder in sorted(mapping.items()):  # parents before children
        target = TREE.joinpath(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for source in (ROOT / folder).rglob("*.py"):
            link = target / source.relative_to(ROOT / folder)
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.exists():
                link.symlink_to(source)


def main() -> int:
    link_tree()
    sys.path.insert(0, str(TREE))
    from importlinter.cli import lint_imports

    return lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_logo=True)


if __name__ == "__main__":
    sys.exit(main())
