"""Lay the package out as it is installed, for import-linter, which reads a package from disk.

pyproject.toml maps `src/domain` to `blackboard.domain` (and so on) without any link in the source
tree; import-linter finds `blackboard` by its folder and would not see the mapped ones. This copies
each mapped folder under `build/lint/` as the wheel lays it out, and `make lint` points
import-linter there (PYTHONPATH).
"""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(target: Path) -> None:
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    shutil.rmtree(target, ignore_errors=True)
    # the parents first, so that a child's folder is copied into its parent's copy
    for package, folder in sorted(mapping.items(), key=lambda item: item[0].count(".")):
        shutil.copytree(
            ROOT / folder,
            target / package.replace(".", "/"),
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "lint")
