"""The `claude-code` runner: Claude Code headless (`claude -p`), the agent file as Claude Code reads it, the
board attached as an MCP server bound to the claim (contracts/runners.md).

- The agent: `--agents FILE --agent NAME`, FILE holding the file's body as the prompt, its `tools` (with
  the board's, `mcp__blackboard`), its `model` unless `inherit` or absent, and its other keys as written,
  so Claude Code gives them their meaning (`permissionMode`, `disallowedTools` ...).
- The board: `blackboard mcp --agent NAME --signal SIG` in an `--mcp-config` FILE (`--strict-mcp-config`:
  no other server); the claim's token reaches it in the environment (BLACKBOARD_CLAIM_TOKEN), never on a
  command line.
- Permissions: a `--settings` FILE allowing the file's tools and the board's, default mode `dontAsk`
  (anything else is refused, nobody is asked), widened by the worker's --permission-mode / --allow-tool or
  the file's `permissionMode`.
- The prompt on standard input; `--output-format stream-json --verbose` on standard output: each line is
  kept as the run's transcript, and the last one, the result, is the outcome.
- `--bare` when ANTHROPIC_API_KEY is set (no hooks, plugins or CLAUDE.md of the machine; the key is the
  only credential); without it, the signed-in Claude Code of the worker's user runs as usual.
The three FILEs live in a private temporary folder, removed after the run. A stop kills the whole process
tree (Claude Code, the board's server, anything a tool started) before the outcome is recorded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from collections import deque
from pathlib import Path
from typing import Any

from blackboard.application.runners import RunControl, Runner, RunOutcome, RunRequest
from blackboard.infrastructure.identity import AGENT, run_environment
from blackboard.infrastructure.runners import catalog
from blackboard.infrastructure.runners.processes import STOP_GRACE, kill_tree
from blackboard.infrastructure.runners.transcript import Transcript
from blackboard.infrastructure.runners.usage import Tally

POLL = 0.05  # seconds between looks at the control while Claude Code runs
STDERR_LINES = 40  # of Claude Code's stderr kept for a failure's message
BOARD_SERVER = "blackboard"  # the MCP server's name: its tools are mcp__blackboard__*
CLAIM_TOKEN = "BLACKBOARD_CLAIM_TOKEN"
MCP_MAIN = "import sys; from blackboard.infrastructure.cli import main; sys.exit(main())"
NOT_A_MODEL = frozenset({"inherit", ""})


class ClaudeCodeRunner(Runner):
    name = "claude-code"

    def missing(self) -> str | None:
        return catalog.missing(self.name)

    def run(self, request: RunRequest, control: RunControl) -> RunOutcome:
        executable = catalog.claude_executable()
        if executable is None:
            return RunOutcome(False, Tally(self.name).usage(), error=str(catalog.missing(self.name)))
        with tempfile.TemporaryDirectory(prefix="blackboard-run-") as private:  # mode 0700: the user's alone
            argv = [executable, *arguments(request, Path(private))]
            return Session(request, argv).run(control)


class Session:
    """One `claude -p` process: its output read as it comes, its end turned into an outcome."""

    def __init__(self, request: RunRequest, argv: list[str]) -> None:
        self.request = request
        self.argv = argv
        self.tally = Tally(ClaudeCodeRunner.name, model_for(request))
        self.transcript = Transcript(request.transcript_path)
        self.result: dict[str, Any] | None = None
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._answers: dict[str, dict[str, Any]] = {}  # assistant message id -> its usage, as streamed so far

    def run(self, control: RunControl) -> RunOutcome:
        try:
            process = subprocess.Popen(
                self.argv,
                cwd=self.request.workdir,
                env=environment(self.request),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group: a stop ends the whole tree
                text=True,
                encoding="utf-8",
                errors="replace",
            )
        except OSError as exc:
            return self.ended(False, error=f"could not start Claude Code ({self.argv[0]}): {exc}")
        readers = [
            threading.Thread(target=self._feed, args=(process,), daemon=True),
            threading.Thread(target=self._read, args=(process,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(process,), daemon=True),
        ]
        for reader in readers:
            reader.start()
        try:
            while process.poll() is None:
                reason = control.wait(POLL)
                if reason is not None and process.poll() is None:
                    kill_tree(
                        process, grace=STOP_GRACE
                    )  # before anything is recorded: nothing the run sends afterwards lands
                    for reader in readers:
                        reader.join(timeout=5)
                    return self.ended(False, error=reason)
        except BaseException:
            kill_tree(process)  # whatever went wrong here, the run does not go on unwatched
            raise
        for reader in readers:
            reader.join(timeout=5)
        return self.outcome(process.returncode)

    def outcome(self, returncode: int) -> RunOutcome:
        result, limits = self.result, self.request.limits
        if result is None:
            said = " | ".join(line.strip() for line in self.stderr if line.strip()) or "(no stderr)"
            return self.ended(
                False, error=f"Claude Code exited {returncode} without a result: {said[-2000:]}"
            )
        subtype = result.get("subtype")
        if subtype == "success" and not result.get("is_error"):
            return self.ended(True, answer=str(result.get("result") or "").strip())
        if subtype == "error_max_turns":
            return self.ended(
                False, error=f"max_turns reached: {limits.max_turns} turn(s) without a final answer"
            )
        if subtype == "error_max_budget_usd":
            spent = result.get("total_cost_usd") or 0.0
            return self.ended(
                False,
                error=f"budget spent: ${spent:.4f} of ${limits.max_budget_usd:g} before the final answer",
            )
        detail = result.get("result") or "; ".join(map(str, result.get("errors") or ())) or subtype
        status = f" (API status {result['api_error_status']})" if result.get("api_error_status") else ""
        return self.ended(False, error=f"Claude Code reported an error{status}: {str(detail)[:2000]}")

    def ended(self, succeeded: bool, answer: str = "", error: str | None = None) -> RunOutcome:
        self._count()
        self.transcript.close()
        return RunOutcome(succeeded, self.tally.usage(self.request.transcript_path), answer, error)

    def _count(self) -> None:
        """The usage: the result's when there is one (Claude Code's own count and cost), else what the
        streamed answers said so far (a stopped run), priced from the table."""
        if self.result is not None:
            usage = self.result.get("usage") or {}
            self.tally.input_tokens = sum(
                int(usage.get(k) or 0)
                for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            )
            self.tally.output_tokens = int(usage.get("output_tokens") or 0)
            self.tally.turns = int(self.result.get("num_turns") or 0)
            self.tally.reported_cost = self.result.get("total_cost_usd")
            self.tally.session_id = self.result.get("session_id") or self.tally.session_id
            models = list(self.result.get("modelUsage") or {})
            self.tally.model = models[0] if len(models) == 1 else self.tally.model
            return
        self.tally.priced()
        for usage in self._answers.values():
            self.tally.add(
                int(usage.get("input_tokens") or 0),
                int(usage.get("output_tokens") or 0),
                int(usage.get("cache_creation_input_tokens") or 0),
                int(usage.get("cache_read_input_tokens") or 0),
            )

    # -- the process's pipes, each on its own thread -------------------------------------------------
    def _feed(self, process: subprocess.Popen[str]) -> None:
        try:
            assert process.stdin is not None
            process.stdin.write(self.request.prompt)
            process.stdin.close()
        except (BrokenPipeError, OSError, ValueError):
            pass  # it ended (or was stopped) before it read its prompt: its exit says why

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            self.transcript.line(line)
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(message, dict):
                self._note(message)

    def _note(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "system" and message.get("subtype") == "init":
            self.tally.session_id = message.get("session_id")
            self.tally.model = message.get("model") or self.tally.model
        elif kind == "assistant":
            said = message.get("message") or {}
            if said.get("id") and isinstance(said.get("usage"), dict):
                self._answers[said["id"]] = said["usage"]
        elif kind == "result":
            self.result = message

    def _read_stderr(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        for line in process.stderr:
            self.stderr.append(line)


def model_for(request: RunRequest) -> str | None:
    """The file's model unless absent or `inherit`; then the worker's --model / BLACKBOARD_MODEL, if any."""
    model = (request.agent.model or "").strip()
    return model if model not in NOT_A_MODEL else request.model


def arguments(request: RunRequest, private: Path) -> list[str]:
    """`claude`'s arguments; the three files they name written into `private`. Options that take lists are
    written `--option=value`, so none of them swallows the next argument."""
    agent = request.agent
    definition: dict[str, Any] = {
        **{k: v for k, v in agent.settings.items() if isinstance(k, str)},
        "description": agent.description or agent.name,
        "prompt": agent.instructions,
    }
    board = (
        [f"mcp__{BOARD_SERVER}"] if request.signal_id else []
    )  # no signal: a run with no board (solve's controller)
    if agent.tools:  # no `tools`: Claude Code's default set, the board's included
        definition["tools"] = [*agent.tools, *board]
    file_model = (agent.model or "").strip()
    if file_model not in NOT_A_MODEL:
        definition["model"] = file_model
    else:
        definition.pop("model", None)
    server = {
        "type": "stdio",
        "command": sys.executable,  # the same installation as the worker's
        "args": ["-c", MCP_MAIN, "mcp", "--agent", agent.name, "--signal", request.signal_id],
    }
    mode = request.permissions.mode or str(agent.settings.get("permissionMode") or "dontAsk")
    allowed = [*agent.tools, *request.permissions.allowed_tools, *board]
    settings = {"permissions": {"allow": list(dict.fromkeys(allowed)), "defaultMode": mode}}
    files = {
        "agents.json": {agent.name: definition},
        "mcp.json": {"mcpServers": {BOARD_SERVER: server} if board else {}},
        "settings.json": settings,
    }
    for name, content in files.items():
        (private / name).write_text(json.dumps(content, default=str), encoding="utf-8")
    argv = ["-p"]
    if os.environ.get("ANTHROPIC_API_KEY"):
        argv.append("--bare")
    argv += [
        "--output-format",
        "stream-json",
        "--verbose",
        f"--agents={private / 'agents.json'}",
        "--agent",
        agent.name,
        f"--mcp-config={private / 'mcp.json'}",
        "--strict-mcp-config",
        f"--settings={private / 'settings.json'}",
        f"--permission-mode={mode}",
    ]
    if file_model in NOT_A_MODEL and request.model:
        argv.append(f"--model={request.model}")
    if request.limits.max_turns is not None:
        argv.append(f"--max-turns={request.limits.max_turns}")
    if request.limits.max_budget_usd is not None:
        argv.append(f"--max-budget-usd={request.limits.max_budget_usd:g}")
    return argv


def environment(request: RunRequest) -> dict[str, str]:
    """The worker's own environment (ANTHROPIC_*, proxies, CLAUDE_CODE_* ...), the settings the board's
    server needs, and the run's identity (infrastructure/identity.py): its agent, signal, board and the claim's
    token, which reaches that server this way only. A run with no claim (solve's controller) is its agent's."""
    if not request.signal_id:
        return {**os.environ, **request.board_env, AGENT: request.agent.name}
    run = run_environment(request.agent.name, request.signal_id, request.token, request.blackboard_id)
    return {**os.environ, **request.board_env, **run}
