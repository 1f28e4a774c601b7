"""Agent files as public collections write them, through the real CLI: `agents` (text and --json) tells
what it loaded and what it left out, `post` warns when only agents with nothing to run fit, and a
worker refuses to start for one of them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests.cli_server import run_blackboard
from tests.paths import SIGNAL_SCHEMA

BLACKBOARD = str(Path(sys.executable).parent / "blackboard")
COLLECTION = Path(__file__).resolve().parents[1] / "fixtures" / "agent-collection"
COLLECTION_AGENTS = [
    "backend-architect",
    "code-reviewer",
    "debugger",
    "docs-writer",
    "pr-reviewer",
    "security-auditor",
    "test-writer",
    "ui-designer",
]


def cli(
    tmp_path: Path,
    *args: str,
    folders: list[Path] | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "BLACKBOARD_DB": f"sqlite:///{tmp_path / 'b.db'}",
        "BLACKBOARD_JSON": "",
        "BLACKBOARD_AGENTS_DIR": os.pathsep.join(map(str, folders or [])),
        # no Claude Code here, whatever the machine has: an agent with no handler has no runner that can start
        "BLACKBOARD_CLAUDE": str(tmp_path / "no-claude"),
        **(env or {}),
    }
    if "PYTHONPATH" in (env or {}):  # read by a starting interpreter only: this call starts cold
        done = subprocess.run(
            [BLACKBOARD, *args],
            env=environment,
            cwd=cwd or tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
    else:
        done = run_blackboard(list(args), environment, cwd or tmp_path, 60)
    assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    """A copy of the collection, as `git clone` leaves it: README, subfolders, a .git folder."""
    folder = tmp_path / "collection"
    shutil.copytree(COLLECTION, folder)
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD.md").write_text("ref: refs/heads/main\n")
    return folder


def test_a_public_collection_loads_unchanged_and_agents_says_how_it_read_it(tmp_path, collection):
    done = cli(tmp_path, "agents", folders=[collection])

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == f"8 of 8 files loaded from {collection}"
    listed = [line.split()[0] for line in lines if not line.startswith(" ") and line != lines[-1]]
    assert listed == COLLECTION_AGENTS
    reviewer = next(i for i, line in enumerate(lines) if line.startswith("code-reviewer "))
    assert "CODE-REVIEWER=1" in lines[reviewer] and "not runnable" in lines[reviewer]
    assert lines[reviewer + 1].startswith("    warning: description: is not strict YAML (mapping values")
    assert lines[reviewer + 1].endswith("(fix: quote the description)")
    assert "left out:" not in lines


def test_agents_json_carries_every_file_with_its_fields_warnings_and_reasons(tmp_path, collection):
    (collection / "broken.md").write_text("---\nname: broken\ncapabilities: {REVIEW: 1.5}\n---\n")
    (collection / "notes.md").write_text("Just notes, no frontmatter.\n")

    done = cli(tmp_path, "--json", "agents", folders=[collection])

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["loaded"], report["files"]) == (8, 10)
    assert report["folders"] == [{"folder": str(collection), "exists": True, "glob": None}]
    by_name = {a["name"]: a for a in report["agents"]}
    reviewer = by_name["code-reviewer"]
    assert (reviewer["runnable"], reviewer["model"], reviewer["tools"]) == (
        False,
        "sonnet",
        ["Read", "Grep", "Glob", "Bash"],
    )
    assert reviewer["description"].startswith("Use this agent when code has been written")
    assert "\nContext: The user has just implemented" in reviewer["description"]
    assert by_name["backend-architect"]["tools"] == ["Read", "Write", "Edit", "Bash"]
    assert by_name["debugger"]["capabilities"] == [
        {"type": "REVIEW", "score": 1.0},
        {"type": "DEBUG", "score": 1.0},
    ]
    [governance] = by_name["security-auditor"]["warnings"]
    assert governance["message"].startswith("capabilities: is not a score map")
    assert "capabilities: {REVIEW: 0.9}" in governance["fix"]
    left_out = {Path(item["file"]).name: item["problems"] for item in report["left_out"]}
    assert left_out == {
        "broken.md": [{"message": "capabilities.REVIEW: must be between 0 and 1, got 1.5", "fix": ""}],
        "notes.md": [
            {"message": "frontmatter: is missing", "fix": "start the file with a block between --- lines"}
        ],
    }
    assert "broken.md: capabilities.REVIEW" in done.stderr  # a script reading stdout hears of it too


def test_bad_files_are_named_with_path_and_rule_and_every_other_agent_still_loads(tmp_path, collection):
    extra = tmp_path / "more"
    (extra / "deep").mkdir(parents=True)
    (extra / "binary.md").write_bytes(b"---\nname: bin\n---\n\x00\x01\x02")
    (extra / "latin1.md").write_bytes("---\nname: caf\xe9\n---\n".encode("latin-1"))
    (extra / "huge.md").write_text("---\nname: huge\n---\n" + "x" * (1024 * 1024))
    (extra / "loop-a.md").symlink_to(extra / "loop-b.md")
    (extra / "loop-b.md").symlink_to(extra / "loop-a.md")
    (extra / "gone.md").symlink_to(extra / "nowhere.md")
    (extra / "deep" / "back").symlink_to(extra)  # a folder link back up: a loop
    (extra / "code-reviewer.md").write_text(
        "---\nname: code-reviewer\nentrypoint: handlers.noop:handle\n---\n"
    )
    (extra / "deep" / "fine.md").write_text("---\nname: fine\ncapabilities: [review]\n---\nFine.\n")

    done = cli(tmp_path, "agents", folders=[collection, extra])

    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.splitlines()[-1] == f"9 of 16 files loaded from {collection}, {extra}"
    assert f"{extra / 'binary.md'}: file: is binary (it holds NUL bytes)" in out
    assert f"{extra / 'latin1.md'}: file: is not UTF-8 text (fix: save it as UTF-8)" in out
    assert f"{extra / 'huge.md'}: file: is bigger than 1024 KiB" in out
    assert f"{extra / 'loop-a.md'}: file: is a symbolic link loop" in out
    assert f"{extra / 'gone.md'}: file: is a broken symbolic link" in out
    assert f"{extra / 'deep' / 'back'}: folder: leads back to {extra}" in out
    first = collection / "engineering" / "code-reviewer.md"
    assert (
        f"{extra / 'code-reviewer.md'}: name: 'code-reviewer' is already declared by {first}, which is kept; "
        "this file is left out (fix: rename one of them)"
    ) in out
    assert out.startswith("backend-architect ") and "\nfine " in out


def test_several_folders_from_the_environment_and_claude_agents_by_default(tmp_path, collection):
    shipped = Path(__file__).resolve().parents[2] / "agents"
    both = cli(tmp_path, "--json", "agents", folders=[collection, shipped])
    assert {"code-reviewer", "ps-researcher"} <= {a["name"] for a in json.loads(both.stdout)["agents"]}
    flags = cli(tmp_path, "--agents-dir", str(shipped), "--agents-dir", str(collection), "--json", "agents")
    assert [f["folder"] for f in json.loads(flags.stdout)["folders"]] == [str(shipped), str(collection)]
    assert (
        json.loads(flags.stdout)["loaded"] == json.loads(both.stdout)["loaded"] == 17
    )  # 8 of the collection, 9 shipped (docbot's four with them)

    project = tmp_path / "project"
    shutil.copytree(collection, project / ".claude" / "agents")
    by_default = cli(tmp_path, "--json", "agents", cwd=project)  # no ./agents: ./.claude/agents
    report = json.loads(by_default.stdout)
    assert report["loaded"] == 8 and report["folders"] == [
        {"folder": ".claude/agents", "exists": True, "glob": None}
    ]

    missing = cli(tmp_path, "agents", folders=[tmp_path / "nowhere"])
    assert (
        missing.returncode == 0
        and missing.stdout == f"0 of 0 files loaded from {tmp_path / 'nowhere'} (does not exist)\n"
    )


def test_post_warns_when_only_agents_with_nothing_to_run_fit(tmp_path, collection):
    base = ["post", "--type", "REVIEW", "--ps-id", "ps-1", "--entry-id", "e-1", "--topic", "auth endpoint"]

    only_unrunnable = cli(tmp_path, "--json", *base, "--capability", "Code-Reviewer", folders=[collection])

    assert only_unrunnable.returncode == 0, only_unrunnable.stderr
    document = json.loads(only_unrunnable.stdout)
    jsonschema.validate(document, json.loads(SIGNAL_SCHEMA.read_text()))
    assert document["status"] == "POSTED" and document["target_capabilities"] == ["Code-Reviewer"]
    [warning] = document["warnings"]
    assert warning.startswith(f"only agents no worker can run fit {document['signal_id']} (code-reviewer): ")
    assert "the claude-code runner needs Claude Code" in warning
    assert f"blackboard: warning: {warning}" in only_unrunnable.stderr

    (collection / "runner.md").write_text(
        "---\nname: runner\ncapabilities: {code-reviewer: 0.9}\ncommand: exit 0\n---\n"
    )
    runnable_too = cli(tmp_path, "--json", *base, "--capability", "code-reviewer", folders=[collection])
    # a worker could run it: it waits for one, which none is yet (docs/control.md, "Work waits for its worker")
    [waiting] = json.loads(runnable_too.stdout)["warnings"]
    assert "is waiting for a worker that fits: code-reviewer" in waiting
    assert (
        "start one: blackboard worker --agent runner" in waiting and "only agents" not in runnable_too.stderr
    )


def test_signals_and_match_compare_capabilities_in_any_case(tmp_path, collection):
    posted = json.loads(
        cli(
            tmp_path,
            "--json",
            "post",
            "--type",
            "REVIEW",
            "--ps-id",
            "p",
            "--entry-id",
            "e-1",
            "--topic",
            "t",
            "--capability",
            "debug",
            folders=[collection],
        ).stdout
    )

    found = json.loads(
        cli(tmp_path, "--json", "signals", "--capability", "DEBUG", folders=[collection]).stdout
    )
    ranking = json.loads(cli(tmp_path, "--json", "match", posted["signal_id"], folders=[collection]).stdout)

    assert [s["signal_id"] for s in found] == [posted["signal_id"]]
    assert ranking[0] == {"agent": "debugger", "score": 1.0, "threshold": 0.8, "passes": True}


def test_a_worker_refuses_to_start_for_an_agent_whose_runner_cannot_start(tmp_path, collection):
    done = cli(tmp_path, "worker", "--agent", "code-reviewer", "--once", folders=[collection])

    assert done.returncode == 2
    assert "agent code-reviewer's runner" in done.stderr
    assert f"BLACKBOARD_CLAUDE={str(tmp_path / 'no-claude')!r} is not an executable" in done.stderr
    assert str(collection / "engineering" / "code-reviewer.md") in done.stderr


def test_an_agent_with_no_handler_is_runnable_by_claude_code_when_claude_is_there(tmp_path, collection):
    claude = tmp_path / "bin" / "claude"
    claude.parent.mkdir()
    claude.write_text("#!/bin/sh\nexit 0\n")
    claude.chmod(0o755)

    report = json.loads(
        cli(tmp_path, "--json", "agents", folders=[collection], env={"BLACKBOARD_CLAUDE": str(claude)}).stdout
    )
    text = cli(tmp_path, "agents", folders=[collection], env={"BLACKBOARD_CLAUDE": str(claude)}).stdout

    reviewer = next(a for a in report["agents"] if a["name"] == "code-reviewer")
    assert (reviewer["runnable"], reviewer["runner"], reviewer["missing"]) == (True, "claude-code", None)
    line = next(line for line in text.splitlines() if line.startswith("code-reviewer "))
    assert "runner claude-code" in line and "not runnable" not in line


def test_a_worker_without_the_runner_s_sdk_names_the_extra_to_install(tmp_path, collection):
    (collection / "writer.md").write_text("---\nname: writer\nrunner: openai\n---\nWrite.\n")
    hidden = tmp_path / "hide-openai"
    hidden.mkdir()
    (hidden / "openai.py").write_text("raise ImportError('hidden by the test')\n")
    (hidden / "sitecustomize.py").write_text(
        "import importlib.util, sys\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda name, *a: None if name == 'openai' else real(name, *a)\n"
    )

    done = cli(
        tmp_path,
        "worker",
        "--agent",
        "writer",
        "--once",
        folders=[collection],
        env={"PYTHONPATH": str(hidden)},
    )

    assert done.returncode == 2
    assert "the openai runner needs the openai Python SDK" in done.stderr
    assert "pip install 'agent-blackboard[openai]'" in done.stderr


PLUGIN_VALIDATOR = """---
name: plugin-validator
description: Use this agent when the user asks to "validate my plugin", "check plugin structure", or mentions \\
plugin validation. Also trigger proactively after user creates or modifies plugin components.

Examples:

<example>
Context: User finished creating a new plugin
user: "I've created my first plugin with commands and hooks"
assistant: "Great! Let me validate the plugin structure."
<commentary>
Plugin created, proactively validate to catch issues early.
</commentary>
assistant: "I'll use the plugin-validator agent to check the plugin."
</example>

model: inherit
color: yellow
tools: ["Read", "Grep", "Glob", "Bash"]
---

You are an expert plugin validator.
"""


def test_a_description_runs_on_through_its_unindented_examples_to_the_next_key_claude_code_knows(tmp_path):
    # as Claude Code's plugin-dev plugin wrote agents/plugin-validator.md: examples after a blank line, unindented
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "plugin-validator.md").write_text(PLUGIN_VALIDATOR.replace("\\\n", ""), encoding="utf-8")

    done = cli(tmp_path, "--json", "agents", folders=[folder])

    assert done.returncode == 0, done.stderr
    [agent] = json.loads(done.stdout)["agents"]
    assert agent["description"].startswith('Use this agent when the user asks to "validate my plugin"')
    assert "\nContext: User finished creating a new plugin\nuser: \"I've created" in agent["description"]
    assert agent["description"].endswith('check the plugin."\n</example>')
    assert (agent["model"], agent["tools"]) == ("inherit", ["Read", "Grep", "Glob", "Bash"])
    assert [w["fix"] for w in agent["warnings"]] == ["quote the description"]


@pytest.mark.parametrize("name", ["../evil", "team/lead", "back\\\\slash", "..", "."])
def test_a_name_a_path_could_be_built_from_is_left_out_naming_the_rule(tmp_path, name):
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "bad.md").write_text(f'---\nname: "{name}"\ncommand: "true"\n---\nbody\n', encoding="utf-8")
    (folder / "good.md").write_text('---\nname: Good-List\ncommand: "true"\n---\nbody\n', encoding="utf-8")

    done = cli(tmp_path, "--json", "agents", folders=[folder])

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [a["name"] for a in report["agents"]] == [
        "Good-List"
    ]  # outside the contract, but Claude Code loads it
    [left_out] = report["left_out"]
    assert left_out["file"].endswith("bad.md")
    assert any(
        "no slash or backslash" in p["message"] and "not . or .." in p["message"]
        for p in left_out["problems"]
    )
