"""What a worker hands a handler command and takes back from it, through real `blackboard worker` processes.

Signal data reaches the command only on standard input and in the named BLACKBOARD_* variables, never on
its command line: shell metacharacters in every field of a posted signal run nothing. An artifact path a
handler returns must lead inside the agent's folder or the artifacts folder (BLACKBOARD_ARTIFACTS_DIR);
anywhere else fails the signal, saying why.
"""

from __future__ import annotations

import json
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli, write_agents
from tests.waiting import wait_until

ECHO = """---
name: ps-echo
capabilities: {RESEARCH: 0.95}
command: cat > received.json; env | grep '^BLACKBOARD_' > env.txt
---
Echoes what it is given.
"""
POINTER = """---
name: ps-pointer
capabilities: {{REVIEW: 0.95}}
command: "python3 -c 'import json, sys; json.load(sys.stdin); \\
  print(json.dumps({{\\"artifact_path\\": sys.argv[1]}}))' {path}"
---
Names an artifact.
"""


def hostile(marker_dir: Path, n: int) -> str:
    """Text that runs `touch` in a shell that would interpret it."""
    m = marker_dir / f"m{n}"
    return f"$(touch {m}a) `touch {m}b` ; touch {m}c | touch {m}d && touch {m}e ' \" $HOME \\"


@pytest.fixture
def wcli(make_cli, tmp_path) -> Cli:
    return make_cli(
        f"sqlite:///{tmp_path / 'board.db'}",
        tmp_path,
        write_agents(tmp_path / "agents", {"ps-echo.md": ECHO}),
    )


def run_worker(cli: Cli, agent: str, env: dict[str, str] | None = None) -> None:
    cli("worker", "--agent", agent, "--once", env=env).expect(0)


def test_shell_metacharacters_in_every_field_reach_the_handler_as_data_only(wcli, tmp_path, request):
    # a short folder: the ids hold at most 200 characters, and each hostile text names its markers 5 times
    markers = Path(tempfile.mkdtemp(prefix="bbm", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(markers, ignore_errors=True))
    fields = {
        name: hostile(markers, n)
        for n, name in enumerate(("ps", "topic", "prompt", "key", "value", "poster", "dedupe", "correlation"))
    }
    fields["prompt"] += f"\n touch {markers}/newline"  # ids may not hold line breaks; a prompt may
    context = {fields["key"]: fields["value"]}
    posted = wcli.ok(
        "post",
        "--type",
        "RESEARCH",
        "--ps-id",
        fields["ps"],
        "--entry-id",
        "e-1",
        "--topic",
        fields["topic"][:200],
        "--prompt",
        fields["prompt"],
        "--context",
        json.dumps(context),
        "--posted-by",
        fields["poster"],
        "--key",
        fields["dedupe"],
        "--correlation-id",
        fields["correlation"],
    )

    run_worker(wcli, "ps-echo")

    assert wcli.ok("show", posted["signal_id"])["status"] == "COMPLETED"
    assert list(markers.iterdir()) == [], "a shell ran text from the signal"
    received = json.loads((tmp_path / "agents" / "received.json").read_text(encoding="utf-8"))
    assert received["payload"]["context"] == context and received["payload"]["prompt"] == fields["prompt"]
    assert (received["blackboard_id"], received["posted_by"]) == (fields["ps"], fields["poster"])
    env = dict(
        line.split("=", 1)
        for line in (tmp_path / "agents" / "env.txt").read_text().splitlines()
        if "=" in line
    )
    assert env["BLACKBOARD_SIGNAL_ID"] == posted["signal_id"] and env["BLACKBOARD_AGENT"] == "ps-echo"


@pytest.mark.parametrize(
    ("path", "inside"),
    [
        ("out/report.md", True),  # relative to the agent's folder
        ("artifacts/report.md", True),
        ("/etc/passwd", False),
        ("../../../../etc/passwd", False),
        ("out/../../secret.md", False),
    ],
)
def test_an_artifact_path_must_stay_inside_the_agents_folder(wcli, tmp_path, path, inside):
    (tmp_path / "agents" / "ps-pointer.md").write_text(POINTER.format(path=path), encoding="utf-8")
    posted = wcli.ok("post", "--type", "REVIEW", "--ps-id", "ps-art", "--entry-id", "e-1", "--topic", "t")

    run_worker(wcli, "ps-pointer")

    shown = wcli.ok("show", posted["signal_id"])
    if inside:
        assert shown["status"] == "COMPLETED" and shown["result"]["artifact_path"] == path
    else:
        assert shown["status"] == "FAILED"
        assert "handler output refused: artifact_path" in shown["result"]["error"]
        assert "leads outside the agent's folder" in shown["result"]["error"]


def test_a_link_inside_the_folder_that_leads_out_is_refused(wcli, tmp_path):
    (tmp_path / "agents" / "escape").symlink_to("/etc")
    (tmp_path / "agents" / "ps-pointer.md").write_text(POINTER.format(path="escape/passwd"), encoding="utf-8")
    posted = wcli.ok("post", "--type", "REVIEW", "--ps-id", "ps-link", "--entry-id", "e-1", "--topic", "t")

    run_worker(wcli, "ps-pointer")

    assert wcli.ok("show", posted["signal_id"])["status"] == "FAILED"


def test_the_artifacts_folder_can_be_configured_elsewhere(wcli, tmp_path):
    elsewhere = tmp_path / "shared-artifacts"
    (tmp_path / "agents" / "ps-pointer.md").write_text(
        POINTER.format(path=elsewhere / "r.md"), encoding="utf-8"
    )
    posted = wcli.ok("post", "--type", "REVIEW", "--ps-id", "ps-conf", "--entry-id", "e-1", "--topic", "t")

    run_worker(wcli, "ps-pointer", env={"BLACKBOARD_ARTIFACTS_DIR": str(elsewhere)})

    shown = wcli.ok("show", posted["signal_id"])
    assert shown["status"] == "COMPLETED" and shown["result"]["artifact_path"] == str(elsewhere / "r.md")


DEEP = """---
name: ps-deep
capabilities: {REVIEW: 0.95}
command: "python3 -c 'import json, sys; topic = json.load(sys.stdin)[\\"payload\\"][\\"topic\\"]; \\
  print(\\"[\\" * 100000 + \\"]\\" * 100000 if topic == \\"deep\\" else \\"[[[not json]]]\\")'"
---
Prints output nested 100,000 levels deep, for the topic `deep`.
"""


def test_output_nested_thousands_deep_fails_its_signal_saying_so_and_the_worker_goes_on(wcli, tmp_path):
    """Before: reading it raised RecursionError, which the worker caught as its own failure: a traceback in its
    log and `the worker could not run the handler: RecursionError: maximum recursion depth exceeded`."""
    (tmp_path / "agents" / "ps-deep.md").write_text(DEEP, encoding="utf-8")
    deep = wcli.post(type="REVIEW", topic="deep")
    text = wcli.post(type="REVIEW", entry="e-2", topic="brackets as text")

    worker = wcli.start("worker", "--agent", "ps-deep", "--concurrency", "1")
    wait_until(lambda: wcli.ok("show", text["signal_id"])["status"] == "COMPLETED", 60, "both runs")
    worker.send_signal(signal.SIGTERM)
    stopped = wcli.finish(worker).expect(0)  # and no traceback in its log (Cli.finish)

    failed = wcli.ok("show", deep["signal_id"])
    assert (failed["status"], failed["result"]["error"]) == (
        "FAILED",
        "handler output: nested deeper than 64 levels of arrays and objects (100000); "
        "output read as JSON may nest at most 64",
    )
    # output that does not open as JSON keeps its brackets as text
    assert wcli.ok("show", text["signal_id"])["result"]["knowledge_items"] == ["[[[not json]]]"]
    assert "RecursionError" not in stopped.stderr


def test_a_handler_s_artifact_path_that_is_not_valid_unicode_fails_its_signal_naming_the_field(
    wcli, tmp_path
):
    """Before: `handler output refused: artifact_path: Input should be a valid string, unable to parse raw data
    as a unicode string`, pydantic's words."""
    (tmp_path / "agents" / "lone.py").write_text('print(r\'{"artifact_path": "notes-\\udc80.md"}\')\n')
    (tmp_path / "agents" / "ps-pointer.md").write_text(
        "---\nname: ps-pointer\ncapabilities: {REVIEW: 0.95}\ncommand: python3 lone.py\n---\nNames it.\n",
        encoding="utf-8",
    )
    posted = wcli.post(type="REVIEW")

    run_worker(wcli, "ps-pointer")

    shown = wcli.ok("show", posted["signal_id"])
    assert (shown["status"], shown["result"]["error"]) == (
        "FAILED",
        "handler output refused: artifact_path: must be valid Unicode text (a lone surrogate cannot be stored)",
    )
