"""The programs the tests drive beyond Python packages, where `make tools` (tools/provision.py) puts them.

A test that needs one and finds it missing fails, naming the command that provisions it; it never skips.
"""

from __future__ import annotations

import functools

import pytest

from tools.provision import CLAUDE, CLAUDE_CODE_INSTALL, CLAUDE_CODE_VERSION, claude_code_version


@functools.cache
def _claude() -> str | None:
    found = claude_code_version()
    return str(CLAUDE) if found == CLAUDE_CODE_VERSION else None


def claude_executable() -> str:
    """The absolute path of the pinned Claude Code CLI (`.tools/claude-code/node_modules/.bin/claude`);
    fails the calling test when it is missing or at another version."""
    path = _claude()
    if path is None:
        pytest.fail(
            f"Claude Code {CLAUDE_CODE_VERSION} is needed at {CLAUDE} ({claude_code_version() or 'missing'} there): "
            f"run `make tools`, which runs `{CLAUDE_CODE_INSTALL}`",
            pytrace=False,
        )
    return path
