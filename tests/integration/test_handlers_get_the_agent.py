"""Handlers get their agent: the instructions (the file's body), model and tools reach a command on stdin
and an entrypoint as an argument; the README's LLM example sends the body as the system prompt; the
example agent ps-writer calls a model through the anthropic SDK (here a local stand-in for the API)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from blackboard.infrastructure.agents import AgentDefinition, FrontmatterAgentRegistry
from blackboard.infrastructure.agents.handler import call_entrypoint_here, run_handler
from tests.cli_server import run_blackboard

ROOT = Path(__file__).resolve().parents[2]
BODY = "You review code.\n\nBe specific: name the file and the line."
HEAD = (
    "name: {name}\ndescription: Reviews code. Examples: <example>Context: a diff</example>\n"
    "tools: Read, Grep\nmodel: opus\n"
)
DUMP = 'import json, sys; print(json.dumps({"knowledge_items": [json.dumps(json.load(sys.stdin)["agent"])]}))'
EXPECTED_AGENT = {
    "name": "reviewer",
    "description": "Reviews code. Examples: <example>Context: a diff</example>",
    "instructions": BODY,
    "model": "opus",
    "tools": ["Read", "Grep"],
}


class Board:
    def __init__(self, tmp_path: Path, agents: Path) -> None:
        self.env = {
            **os.environ,
            "BLACKBOARD_DB": f"sqlite:///{tmp_path / 'b.db'}",
            "BLACKBOARD_JSON": "",
            "BLACKBOARD_AGENTS_DIR": str(agents),
            "BLACKBOARD_ARTIFACTS_DIR": str(tmp_path / "artifacts"),
        }
        self.cwd = tmp_path

    def cli(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        done = run_blackboard(list(args), {**self.env, **env}, self.cwd, timeout=120)  # forked warm
        # a worker's log holds the traceback of an entrypoint that raised (README: "A Python function instead")
        assert args[0] == "worker" or "Traceback" not in done.stderr, done.stderr
        return done

    def handled(self, agent: str, capability: str, **env: str) -> dict[str, Any]:
        """Post a signal for the capability, run one worker of the agent once, and return the signal."""
        posted = self.cli(
            "--json",
            "post",
            "--type",
            "SYNTHESIS",
            "--ps-id",
            "ps-1",
            "--entry-id",
            "e-1",
            "--topic",
            "release notes for 1.2",
            "--prompt",
            "Summarise the changes.",
            "--capability",
            capability,
        )
        signal_id = json.loads(posted.stdout)["signal_id"]
        worker = self.cli("worker", "--agent", agent, "--once", **env)
        assert worker.returncode == 0, worker.stderr
        return json.loads(self.cli("--json", "show", signal_id).stdout)


def agent_file(folder: Path, name: str, handler: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(f"---\n{HEAD.format(name=name)}{handler}\n---\n{BODY}\n", encoding="utf-8")
    return path


def test_a_command_reads_the_agent_s_instructions_model_and_tools_on_stdin(tmp_path):
    agents = tmp_path / "agents"
    (agents / "dump.py").parent.mkdir(parents=True)
    (agents / "dump.py").write_text(DUMP)
    agent_file(agents, "reviewer", f"command: {sys.executable} dump.py")

    done = Board(tmp_path, agents).handled("reviewer", "reviewer")

    assert done["status"] == "COMPLETED", done
    assert json.loads(done["result"]["knowledge_items"][0]) == EXPECTED_AGENT


ENTRYPOINTS = """
import json
def positional(document, agent):
    return json.dumps([agent, document["agent"] == agent])
def keyword(document, *, agent):
    return json.dumps([agent, document["agent"] == agent])
def one(document):
    return json.dumps([document["agent"], True])
"""


@pytest.mark.parametrize("function", ["positional", "keyword", "one"])
def test_an_entrypoint_gets_the_agent_as_an_argument_or_in_the_document(tmp_path, function):
    (tmp_path / "eph").mkdir()
    (tmp_path / "eph" / f"agent_{function}.py").write_text(ENTRYPOINTS)
    path = agent_file(tmp_path, "reviewer", f"entrypoint: eph.agent_{function}:{function}")
    definition = FrontmatterAgentRegistry(tmp_path).definition("reviewer")
    assert isinstance(definition, AgentDefinition) and definition.path == path

    outcome = call_entrypoint_here(definition, {"signal_id": "sig-00000001", "payload": {"topic": "t"}})

    assert outcome.succeeded, outcome.error
    assert json.loads(outcome.knowledge_items[0]) == [EXPECTED_AGENT, True]


def readme_llm_script() -> str:
    readme = (ROOT / "docs" / "agents.md").read_text()
    [script] = re.findall(r"```bash\n(#!/bin/sh\n# handlers/llm\.sh.*?)```", readme, flags=re.DOTALL)
    return script


def test_the_readme_s_llm_example_sends_the_agent_s_body_as_the_system_prompt(tmp_path):
    agents, bin_dir = tmp_path / "agents", tmp_path / "bin"
    (agents / "handlers").mkdir(parents=True)
    (agents / "handlers" / "llm.sh").write_text(readme_llm_script())
    bin_dir.mkdir()
    fake_llm = bin_dir / "llm"  # stands for the user's LLM client: echoes what it was given
    fake_llm.write_text(
        '#!/bin/sh\n[ "$1" = --system ] || exit 9\nprintf "SYSTEM<%s>\\nUSER<%s>\\n" "$2" "$(cat)"\n'
    )
    fake_llm.chmod(0o755)
    agent_file(agents, "reviewer", "command: sh handlers/llm.sh")
    definition = FrontmatterAgentRegistry(agents).definition("reviewer")
    document = {"signal_id": "sig-0000abcd", "payload": {"topic": "the login endpoint"}}

    artifacts = tmp_path / "artifacts"  # as a worker hands it over: absolute, outside the agents folder
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    outcome = run_handler(definition, document, {"PATH": path, "BLACKBOARD_ARTIFACTS_DIR": str(artifacts)})

    assert outcome.succeeded, outcome.error
    written = Path(outcome.artifact_path).read_text()
    assert written.startswith(f"SYSTEM<{BODY}>\nUSER<")
    assert '"topic": "the login endpoint"' in written and Path(outcome.artifact_path).parent == artifacts


# -- ps-writer: a real model through the anthropic SDK, against a local stand-in for the API -------------
class FakeMessagesAPI(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        type(self).requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
        reply = {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [{"type": "text", "text": "# Release 1.2 in one line\n\nEverything the inputs say."}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 9},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def fake_api() -> Iterator[str]:
    FakeMessagesAPI.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeMessagesAPI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture
def shipped(tmp_path: Path) -> Path:
    folder = tmp_path / "agents"
    shutil.copytree(ROOT / "agents", folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def test_ps_writer_calls_the_model_with_its_instructions_and_the_signal(tmp_path, shipped, fake_api):
    board = Board(tmp_path, shipped)

    done = board.handled("ps-writer", "writing", ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=fake_api)

    assert done["status"] == "COMPLETED", done
    assert done["result"]["knowledge_items"] == ["Release 1.2 in one line"]
    assert Path(done["result"]["artifact_path"]).read_text().startswith("# Release 1.2 in one line")
    [request] = FakeMessagesAPI.requests
    writer = FrontmatterAgentRegistry(shipped).definition("ps-writer")
    sent_key = request["headers"].get("x-api-key") or request["headers"].get(
        "Authorization", ""
    ).removeprefix("Bearer ")
    assert (request["path"], sent_key) == ("/v1/messages", "sk-test")
    assert request["body"]["model"] == writer.model == "claude-sonnet-4-5"
    assert request["body"]["system"] == writer.instructions and writer.instructions.startswith(
        "You are the writer"
    )
    [message] = request["body"]["messages"]
    assert message["role"] == "user" and "Topic: release notes for 1.2" in message["content"]
    assert "Request: Summarise the changes." in message["content"]


def test_ps_writer_without_a_key_fails_the_signal_saying_so_and_sends_nothing(tmp_path, shipped, fake_api):
    board = Board(tmp_path, shipped)

    done = board.handled("ps-writer", "WRITING", ANTHROPIC_API_KEY="", ANTHROPIC_BASE_URL=fake_api)

    assert done["status"] == "FAILED"
    assert done["result"]["error"].startswith("NoModel: no model to call: ANTHROPIC_API_KEY is not set")
    assert FakeMessagesAPI.requests == []


def test_ps_writer_does_not_take_the_demo_s_signals():
    registry = FrontmatterAgentRegistry(ROOT / "agents")
    writer = registry.definition("ps-writer")

    for kind in ("RESEARCH", "ANALYSIS", "REVIEW", "DECISION", "SYNTHESIS", "INVESTIGATION"):
        assert writer.profile.score_for_capability(kind) == 0.0, kind
