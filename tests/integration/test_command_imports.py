"""What a plain command imports: the optional machinery of other commands (the web view's and the MCP
server's starlette, text matching's numpy and bm25s, the MCP SDK) stays out of its start-up."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("starlette", "mcp", "bm25s", "numpy", "uvicorn", "anthropic")


def test_a_plain_command_imports_none_of_the_optional_machinery(tmp_path):
    probe = (
        "import sys\n"
        "from blackboard.infrastructure.cli import main\n"
        f"code = main(['--db', 'sqlite:///{tmp_path / 'b.db'}', '--agents-dir', '{tmp_path}', 'signals'])\n"
        f"print(code, sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.stdout.split("\n")[-2] == "0 []", done.stdout + done.stderr


def test_the_hidden_hook_is_importable_again_for_the_commands_that_need_it():
    probe = (
        "import blackboard.infrastructure.injection, starlette.requests, sys; "
        "print(sys.modules['starlette.requests'].Request.__name__)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "Request", done.stderr
