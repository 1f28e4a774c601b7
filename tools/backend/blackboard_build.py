"""The build backend: setuptools' own (`setuptools.build_meta`), less one note it prints on every editable install.

`pyproject.toml` maps folders into `blackboard.*` (src/domain is `blackboard.domain`, ...), so setuptools makes
an editable install with an import finder, and says so with an `InformationOnly` warning ("Editable
installation... be careful with folders in your working directory with the same name as your package"), which
pip shows as a `BuildBackendWarning` at every `pip install -e .`: advice, not a problem of this project (it has
no folder named `blackboard` at its root). That one class of warning is left out of the editable build; every
other warning, and every other hook, is setuptools' own. pip finds this module through `backend-path`; a wheel
or an install never holds it.
"""

from __future__ import annotations

import warnings
from typing import Any

from setuptools import build_meta
from setuptools.build_meta import (
    build_sdist,
    build_wheel,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)
from setuptools.warnings import InformationOnly

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]


def build_editable(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InformationOnly)
        return build_meta.build_editable(wheel_directory, config_settings, metadata_directory)
