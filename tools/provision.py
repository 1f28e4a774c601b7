"""`make tools`: what `make test` drives beyond Python packages, installed when missing or named.

- Debian packages: the shells the completion tests check scripts with (`zsh`, `fish`) and the browser
  the web view's tests drive (`chromium` and its `chromium-driver`). Installed with apt-get when this
  runs as root on Debian; otherwise it stops, naming the packages and the command.
- Claude Code, the real CLI, pinned, for the runner tests: `npm install` into `.tools/claude-code`
  (git-ignored) when it is missing or at another version. `tests/tools.py` hands its path to the tests.

Quiet and fast (a few stat calls and one `claude --version`) when everything is there; the time spent
installing is printed, apart from the tests' own. Only the standard library: it runs before .venv exists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CLAUDE_CODE_VERSION = "2.1.332"
CLAUDE_CODE_PACKAGE = f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}"
CLAUDE_CODE_DIR = ROOT / ".tools" / "claude-code"
CLAUDE = CLAUDE_CODE_DIR / "node_modules" / ".bin" / "claude"
CLAUDE_CODE_INSTALL = f"npm install --prefix .tools/claude-code {CLAUDE_CODE_PACKAGE}"

# what the tests run -> the Debian package that provides it (the browser tests use these exact paths)
DEBIAN_PACKAGES = {
    "zsh": "zsh",
    "fish": "fish",
    "/usr/bin/chromium": "chromium",
    "/usr/bin/chromedriver": "chromium-driver",
}


class Missing(Exception):
    """Something `make test` needs that this cannot install here; the message says how to."""


def apt_command(packages: list[str], sudo: str = "") -> str:
    return f"{sudo}apt-get update && {sudo}DEBIAN_FRONTEND=noninteractive apt-get install -y {' '.join(packages)}"


def missing_debian_packages() -> list[str]:
    def present(program: str) -> bool:
        if program.startswith("/"):
            return os.access(program, os.X_OK)
        return shutil.which(program) is not None

    return [package for program, package in DEBIAN_PACKAGES.items() if not present(program)]


def install_debian_packages(packages: list[str]) -> None:
    if not Path("/etc/debian_version").exists():
        raise Missing(
            f"make test needs what the Debian packages {' '.join(packages)} provide (zsh and fish on PATH, "
            f"/usr/bin/chromium, /usr/bin/chromedriver). This is not Debian: install them with your system's "
            f"package manager. On Debian, as root: {apt_command(packages)}"
        )
    if os.geteuid() != 0:
        raise Missing(
            f"make test needs the Debian packages {' '.join(packages)}. Install them as root, then run "
            f"make test again:\n    {apt_command(packages, sudo='sudo ')}"
        )
    print(f"make tools: installing the Debian packages {' '.join(packages)} (apt-get)", flush=True)
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update"], ["apt-get", "install", "-y", *packages]):
        if subprocess.run(command, env=environment).returncode != 0:
            raise Missing(
                f"`{' '.join(command)}` failed (above). Run it by hand:\n    {apt_command(packages)}"
            )
    still = missing_debian_packages()
    if still:
        raise Missing(f"apt-get installed {' '.join(packages)}, but {' '.join(still)} still missing")


def claude_code_version() -> str | None:
    """The version `claude --version` prints from .tools/claude-code, or None when it does not run."""
    try:
        done = subprocess.run([CLAUDE, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    words = done.stdout.split()
    return words[0] if done.returncode == 0 and words else None


def install_claude_code() -> None:
    if shutil.which("npm") is None:
        raise Missing(
            f"make test needs Claude Code {CLAUDE_CODE_VERSION}, installed with npm, and npm is not on PATH. "
            f"Install Node.js and npm (on Debian: apt-get install -y nodejs npm), then run make test again; "
            f"it runs:\n    {CLAUDE_CODE_INSTALL}"
        )
    print(
        f"make tools: installing Claude Code {CLAUDE_CODE_VERSION} into .tools/claude-code (npm)", flush=True
    )
    command = [
        "npm",
        "install",
        "--prefix",
        str(CLAUDE_CODE_DIR),
        "--no-fund",
        "--no-audit",
        "--loglevel=error",  # not the engine and install-script notices: the check below says whether it runs
        CLAUDE_CODE_PACKAGE,
    ]
    if subprocess.run(command).returncode != 0:
        raise Missing(
            f"npm could not install Claude Code (above). Run it by hand:\n    {CLAUDE_CODE_INSTALL}"
        )
    found = claude_code_version()
    if found != CLAUDE_CODE_VERSION:
        raise Missing(
            f"after `{CLAUDE_CODE_INSTALL}`, `{CLAUDE.relative_to(ROOT)} --version` says {found or 'nothing'} "
            f"where {CLAUDE_CODE_VERSION} was expected"
        )


def main() -> int:
    started = time.monotonic()
    did, problems = [], []
    packages = missing_debian_packages()
    if packages:
        try:
            install_debian_packages(packages)
            did.append(f"the Debian packages {' '.join(packages)}")
        except Missing as missing:
            problems.append(str(missing))
    if claude_code_version() != CLAUDE_CODE_VERSION:
        try:
            install_claude_code()
            did.append(f"Claude Code {CLAUDE_CODE_VERSION}")
        except Missing as missing:
            problems.append(str(missing))
    if did:
        print(
            f"make tools: provisioned {' and '.join(did)} in {time.monotonic() - started:.0f} s", flush=True
        )
    for problem in problems:
        print(f"make tools: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
