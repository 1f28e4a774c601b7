"""pyproject maps every source folder into the `blackboard` namespace, and nothing else."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_folder_with_python_modules_is_a_listed_package_under_blackboard():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping: dict[str, str] = setuptools["package-dir"]
    on_disk = set()
    for package, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder)
            on_disk.add(".".join([package, *relative.parts]))
    folders_without_init = [
        str(d.relative_to(ROOT))
        for folder in mapping.values()
        for d in (ROOT / folder).rglob("*")
        if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py")) and not (d / "__init__.py").exists()
    ]

    # a folder of data only (no module) is a package of its own named in package-data: setuptools warns of
    # data in a folder that is not listed
    data_only = {name for name in setuptools["packages"] if name not in on_disk}
    for name in data_only:
        folder = _folder(mapping, name)
        assert folder.is_dir() and not any(folder.glob("*.py")), name
        assert name in setuptools["package-data"], f"{name} lists no files in package-data"

    assert set(setuptools["packages"]) == on_disk | data_only
    assert all(name == "blackboard" or name.startswith("blackboard.") for name in on_disk)
    assert folders_without_init == []


def _folder(mapping: dict[str, str], package: str) -> Path:
    """The folder a package name lives in, by the longest mapped prefix."""
    parent = max((p for p in mapping if package == p or package.startswith(p + ".")), key=len)
    return ROOT / mapping[parent] / Path(*package[len(parent) :].split(".")[1:])


def test_each_layer_has_the_one_link_import_linter_needs_and_it_leads_to_the_mapped_folder():
    """import-linter walks src/blackboard on disk: a link per mapped layer, to the folder the mapping names."""
    mapping: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"
    ]
    package_folder = ROOT / mapping["blackboard"]
    layers = {
        name.removeprefix("blackboard."): folder for name, folder in mapping.items() if name.count(".") == 1
    }
    links = {p.name: p for p in package_folder.iterdir() if p.is_symlink()}

    assert set(links) == set(layers)
    for name, folder in layers.items():
        assert links[name].resolve() == (ROOT / folder).resolve(), name
