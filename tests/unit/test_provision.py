"""`make tools` (tools/provision.py): installs only what is missing, or stops naming what to install and how.

Installing for real would change the machine under the other tests, so the machine's answers (which
programs are on it, who runs this, whether it is Debian) are stood in for here and every command the
script would run is recorded instead; `make test` itself runs the real thing first.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.tools import claude_executable
from tools import provision


@pytest.fixture
def machine(monkeypatch):
    """A machine lacking what `absent` names; the commands provision would run land in `ran`."""

    class Machine:
        absent: set[str] = set()
        root = True
        debian = True
        ran: list[list[str]] = []

    def which(name, *args, **kwargs):
        return None if name in Machine.absent else f"/usr/bin/{name}"

    def run(command, *args, **kwargs):
        Machine.ran.append([str(part) for part in command])
        if command[:2] == ["apt-get", "install"]:
            Machine.absent -= {
                program for program, package in provision.DEBIAN_PACKAGES.items() if package in command
            }
        return subprocess.CompletedProcess(command, 0, stdout="", stderr="")

    monkeypatch.setattr(provision.shutil, "which", which)
    monkeypatch.setattr(provision.os, "access", lambda path, mode: path not in Machine.absent)
    monkeypatch.setattr(provision.os, "geteuid", lambda: 0 if Machine.root else 1000)
    monkeypatch.setattr(provision, "claude_code_version", lambda: provision.CLAUDE_CODE_VERSION)
    real_exists = provision.Path.exists
    monkeypatch.setattr(
        provision.Path,
        "exists",
        lambda self: Machine.debian if str(self) == "/etc/debian_version" else real_exists(self),
    )
    monkeypatch.setattr(provision.subprocess, "run", run)
    return Machine


def test_a_machine_with_everything_runs_nothing_and_says_nothing(machine, capsys):
    assert provision.main() == 0
    assert machine.ran == []
    assert capsys.readouterr() == ("", "")


def test_as_root_on_debian_only_the_missing_packages_are_installed_with_apt(machine, capsys):
    machine.absent = {"fish", "/usr/bin/chromedriver"}
    assert provision.main() == 0
    assert machine.ran == [["apt-get", "update"], ["apt-get", "install", "-y", "fish", "chromium-driver"]]
    assert "provisioned the Debian packages fish chromium-driver in" in capsys.readouterr().out


def test_not_root_it_stops_before_installing_and_names_the_packages_and_the_command(machine, capsys):
    machine.absent, machine.root = {"zsh", "/usr/bin/chromium"}, False
    assert provision.main() == 1
    assert machine.ran == []
    assert (
        "sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y zsh chromium"
        in capsys.readouterr().err
    )


def test_off_debian_it_names_what_the_packages_provide(machine, capsys):
    machine.absent, machine.debian = {"fish"}, False
    assert provision.main() == 1
    assert machine.ran == []
    err = capsys.readouterr().err
    assert "This is not Debian" in err and "fish" in err and "/usr/bin/chromedriver" in err


def test_claude_code_is_installed_with_npm_at_the_pinned_version_into_the_project(
    machine, monkeypatch, capsys
):
    answers = iter([None, provision.CLAUDE_CODE_VERSION])  # before npm install, after it
    monkeypatch.setattr(provision, "claude_code_version", lambda: next(answers))
    assert provision.main() == 0
    [npm] = machine.ran
    assert npm[:3] == ["npm", "install", "--prefix"] and npm[-1] == "@anthropic-ai/claude-code@2.1.332"
    assert npm[3] == str(provision.ROOT / ".tools" / "claude-code")
    assert "provisioned Claude Code 2.1.332 in" in capsys.readouterr().out


def test_without_npm_it_names_npm_and_the_install_command(machine, monkeypatch, capsys):
    machine.absent = {"npm"}
    monkeypatch.setattr(provision, "claude_code_version", lambda: "2.0.1")  # another version
    assert provision.main() == 1
    assert machine.ran == []
    err = capsys.readouterr().err
    assert "npm is not on PATH" in err
    assert "npm install --prefix .tools/claude-code @anthropic-ai/claude-code@2.1.332" in err


def test_the_tests_find_the_pinned_claude_code_where_make_tools_put_it():
    path = claude_executable()
    assert path == str(provision.ROOT / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude")
    done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("2.1.332 "), done
