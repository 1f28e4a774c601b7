"""The distribution as a user installs it: non-editable, beside the user's own packages."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.one_process  # its tests share a costly module fixture (tests/scheduling.py)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv holding the wheel `make dist` builds (dependencies lent from this venv, so nothing is
    fetched but the build backend)."""
    work = tmp_path_factory.mktemp("install")
    # this venv's python (VENV=sys.prefix), so make neither creates nor installs one
    run(
        [
            "make",
            "-C",
            str(ROOT),
            "--no-print-directory",
            "dist",
            f"DIST={work / 'dist'}",
            f"VENV={sys.prefix}",
        ]
    )
    [wheel] = (work / "dist").glob("agent_blackboard-*.whl")
    venv = work / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    purelib = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip()
    Path(purelib, "lent-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", str(wheel)])
    return venv


def run(argv: list[str], cwd: Path | None = None) -> str:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{argv} exited {done.returncode}: {done.stderr[-2000:]}"
    return done.stdout


def test_the_wheel_installs_only_the_blackboard_package(installed):
    purelib = Path(
        run(
            [
                str(installed / "bin" / "python"),
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ]
        ).strip()
    )
    top_level = {p.name for p in purelib.iterdir() if not p.name.endswith((".dist-info", ".pth"))}

    assert top_level == {"blackboard"}
    assert (purelib / "blackboard" / "migrations" / "versions").is_dir()


def test_an_installed_blackboard_migrates_and_posts_beside_the_users_own_domain_package(installed, tmp_path):
    for name in ("domain", "application"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("OWNER = 'the user'\n")
    blackboard = str(installed / "bin" / "blackboard")
    db = f"sqlite:///{tmp_path / 'board.db'}"

    run([blackboard, "--db", db, "db", "upgrade"], cwd=tmp_path)
    posted = run(
        [
            blackboard,
            "--db",
            db,
            "--json",
            "post",
            "--type",
            "RESEARCH",
            "--ps-id",
            "ps-1",
            "--entry-id",
            "e-1",
            "--topic",
            "installed",
        ],
        cwd=tmp_path,
    )
    shown = run([blackboard, "--db", db, "--json", "show", json.loads(posted)["signal_id"]], cwd=tmp_path)
    users = run(
        [
            str(installed / "bin" / "python"),
            "-c",
            textwrap.dedent("""
        import domain, application, blackboard.domain.signals
        print(domain.OWNER, application.OWNER, blackboard.__version__)
    """),
        ],
        cwd=tmp_path,
    )

    assert json.loads(shown)["payload"]["topic"] == "installed"
    assert users.split()[:4] == ["the", "user", "the", "user"]


def test_the_installed_package_ships_the_json_schemas_and_its_version(installed, tmp_path):
    """`blackboard schema` reads the schemas from inside the installed package (package-data), not from
    the source tree: the files generated from the models."""
    from tests.paths import SCHEMAS

    blackboard = str(installed / "bin" / "blackboard")
    signal = json.loads(run([blackboard, "--json", "schema", "signal"], cwd=tmp_path))
    entry = json.loads(run([blackboard, "--json", "schema", "entry"], cwd=tmp_path))
    assert signal == json.loads((SCHEMAS / "agent-signal.schema.json").read_text(encoding="utf-8"))
    assert entry["title"] == "Entry" and "conflict" in entry["properties"]
    assert run([blackboard, "--version"], cwd=tmp_path).startswith("blackboard ")


def test_the_installed_python_api_reads_what_the_installed_cli_posted(installed, tmp_path):
    blackboard = str(installed / "bin" / "blackboard")
    db = f"sqlite:///{tmp_path / 'board.db'}"
    posted = json.loads(
        run(
            [
                blackboard,
                "--db",
                db,
                "--json",
                "post",
                "--type",
                "RESEARCH",
                "--ps-id",
                "ps-1",
                "--entry-id",
                "e-1",
                "--topic",
                "installed",
            ],
            cwd=tmp_path,
        )
    )
    shown = run(
        [
            str(installed / "bin" / "python"),
            "-c",
            textwrap.dedent(f"""
        import json
        from blackboard import Blackboard
        from blackboard.models import Signal
        with Blackboard({db!r}) as bb:
            found = bb.show({posted["signal_id"]!r})
        assert isinstance(found, Signal)
        print(json.dumps(found.model_dump(mode="json")))
    """),
        ],
        cwd=tmp_path,
    )

    assert json.loads(shown) == posted


def test_an_installed_blackboard_ui_serves_its_page_and_assets_from_the_package(installed, tmp_path):
    import http.client
    import os
    import signal
    import time

    from tests.e2e.web import free_port

    port = free_port()
    db = f"sqlite:///{tmp_path / 'board.db'}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    server = subprocess.Popen(
        [str(installed / "bin" / "blackboard"), "--db", db, "ui", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    served: dict[str, tuple[int, bytes]] = {}
    try:
        deadline = time.monotonic() + 60
        while len(served) < 3 and time.monotonic() < deadline and server.poll() is None:
            try:
                for path in ("/", "/static/app.js", "/static/style.css"):
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                    connection.request("GET", path)
                    response = connection.getresponse()
                    served[path] = (response.status, response.read())
                    connection.close()
            except OSError:
                time.sleep(0.1)
    finally:
        server.send_signal(signal.SIGINT)
        _, stderr = server.communicate(timeout=30)

    assert {path: status for path, (status, _) in served.items()} == dict.fromkeys(
        ("/", "/static/app.js", "/static/style.css"), 200
    ), stderr
    assert b'src="/static/app.js"' in served["/"][1] and b"EventSource" in served["/static/app.js"][1]
    assert "Traceback" not in stderr


def test_the_installed_package_ships_the_skill_and_installs_it_into_a_project(installed, tmp_path):
    """`blackboard skill install` reads the skill from inside the installed package (package data): the
    bytes of docs/skill/SKILL.md, its one source."""
    blackboard = str(installed / "bin" / "blackboard")
    run([blackboard, "skill", "install", "--dir", str(tmp_path)], cwd=tmp_path)
    installed_skill = tmp_path / ".claude" / "skills" / "blackboard" / "SKILL.md"
    assert installed_skill.read_bytes() == (ROOT / "docs" / "skill" / "SKILL.md").read_bytes()


def test_an_editable_install_into_a_fresh_venv_prints_no_build_warning(tmp_path):
    """Issue 34, item 10: `pip install -e .` printed three setuptools warnings (data folders that were no
    packages) and its note on every editable install; a new user reads them as something broken. The build's
    own output holds no warning now (pip's own `WARNING:` lines about this machine's indexes aside)."""
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--no-deps",
            "-e",
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert done.returncode == 0, done.stderr[-2000:]
    said = done.stdout + done.stderr
    assert "Successfully installed agent-blackboard" in said
    assert not [line for line in said.splitlines() if "Warning" in line or line.strip() == "!!"], said
