"""The `claude-code` runner: Claude Code headless (`claude -p`), the agent file as Claude Code reads it, the
board attached as an MCP server bound to the claim (docs/agents.md).

- The agent: `--agents FILE --agent NAME`, FILE holding the file's body as the prompt, its `tools` (with
  the board's, `mcp__blackboard`), its `model` unless `inherit` or absent, and its other keys as written,
  so Claude Code gives them their meaning (`permissionMode`, `disallowedTools` ...).
- The board: `blackboard mcp --agent NAME --signal SIG` in an `--mcp-config` FILE (`--strict-mcp-config`:
  no other server); the claim's token reaches it in the environment (BLACKBOARD_CLAIM_TOKEN), never on a
  command line.
- Permissions: a `--settings` FILE allowing the file's tools and the board's, default mode `dontAsk`
  (anything else is refused, nobody is asked), widened by the worker's --permission-mode / --allow-tool or
  the file's `permissionMode`.
- The prompt on standard input as a user message (`--input-format stream-json`), which stays open for the
  nudges a person sends while it runs (each a user message: Claude Code gives it to the model with its next
  request, mid-turn too) until its result comes, then closes, so it ends as it would on its prompt alone
  (a nudge it took just before its result is answered first, in a turn more: the last result is the run's);
  `--output-format stream-json --verbose` on standard output: each line is
  kept as the run's transcript, and the last one, the result, is the outcome. claude_output.py reads it,
  to its end whatever it holds, under the run's control (the claim renewed, the timeout and a stop kept)
  until the pipes close, after Claude Code's exit too.
- `--bare` when ANTHROPIC_API_KEY is set (no hooks, plugins or CLAUDE.md of the machine; the key is the
  only credential); without it, the signed-in Claude Code of the worker's user runs as usual.
- The session: `--session-id` the attempt's own (application.runners.session_of); a later attempt continues
  the latest earlier one it can reach (`--resume ID --fork-session`, sessions.py), told to go on from there,
  else starts afresh; the run's usage says which (`resumed_from`) and counts this attempt's cost alone.
The three FILEs live in a private temporary folder, removed after the run. A stop kills the whole process
tree (Claude Code, the board's server, anything a tool started) before the outcome is recorded.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from blackboard.application.runners import EarlierRun, Nudge, RunControl, Runner, RunOutcome, RunRequest
from blackboard.infrastructure.keeper.marks import AGENT, identity, marks
from blackboard.infrastructure.runners import catalog
from blackboard.infrastructure.runners.claude_output import ClaudeOutput
from blackboard.infrastructure.runners.lines import MAX_LINE
from blackboard.infrastructure.runners.processes import STOP_GRACE, kill_tree
from blackboard.infrastructure.runners.prompt import resumed_prompt
from blackboard.infrastructure.runners.reported import Reading, json_text
from blackboard.infrastructure.runners.sessions import Resume, SessionFiles
from blackboard.infrastructure.runners.transcript import Transcript
from blackboard.infrastructure.runners.usage import Tally

POLL = 0.05  # seconds between looks at the control while Claude Code runs
DRAIN_GRACE = 5.0  # seconds its output may go on after it exited with its result (its pipes' last lines)
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
        sessions = SessionFiles(environment(request))
        resume = sessions.resume(earlier_runs(request)) if request.session_id else None
        if resume is not None:  # its conversation holds the signal already: it is told to go on
            request = dataclasses.replace(request, prompt=resumed_prompt(request, resume.session_id))
        with tempfile.TemporaryDirectory(prefix="blackboard-run-") as private:  # mode 0700: the user's alone
            argv = [executable, *arguments(request, Path(private), resume)]
            return Session(request, argv, sessions, resume).run(control)


class Session:
    """One `claude -p` process: its output read as it comes (to its end, under the run's control), its end
    turned into an outcome."""

    def __init__(
        self,
        request: RunRequest,
        argv: list[str],
        sessions: SessionFiles | None = None,
        resume: Resume | None = None,
    ) -> None:
        self.request = request
        self.argv = argv
        self.sessions = sessions or SessionFiles({})
        self.tally = Tally(ClaudeCodeRunner.name, model_for(request), session_id=request.session_id)
        if resume is not None:
            self.tally.resumed_from, self.tally.resumed_cost = resume.session_id, resume.spent_usd
        self.transcript = Transcript(request.transcript_path, request.output)
        self.output = ClaudeOutput(self.transcript, self.tally)
        self.inbox: queue.SimpleQueue[Nudge | None] = queue.SimpleQueue()  # for the feeder; None: close
        self.closing = False  # its standard input is (to be) closed: nothing more is fed

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
            )
        except OSError as exc:
            return self.ended(False, error=f"could not start Claude Code ({self.argv[0]}): {exc}")
        control.started(process.pid)  # the worker's keeper ends the tree if the worker dies first
        self.output.progressed = control.progressed  # each line it prints: progress (a stall stops it)
        # the output's readers, which the run waits for; the prompt's feeder is not (what it could not write
        # was not read: the exit says why)
        threading.Thread(target=self._feed, args=(process,), daemon=True).start()
        readers = [
            threading.Thread(target=self.output.read, args=(process.stdout,), daemon=True),
            threading.Thread(target=self.output.read_stderr, args=(process.stderr,), daemon=True),
        ]
        for reader in readers:
            reader.start()
        try:
            reason = self._watch(process, readers, control)
        except BaseException:  # whatever went wrong here, the run does not go on unwatched
            kill_tree(process, marks=run_marks(self.request))
            raise
        finally:
            self.inbox.put(None)  # the feeder ends, if it had not
        if reason is not None:
            return self.ended(False, error=reason)
        return self.outcome(process.returncode)

    def _watch(
        self, process: subprocess.Popen[bytes], readers: list[threading.Thread], control: RunControl
    ) -> str | None:
        """Until Claude Code has ended and its output is read to its end, looking at `control` (which renews
        the claim) all along, the drain after its exit included; the reason it was stopped, or None. Once it
        has exited with its result read, what still holds its pipes after DRAIN_GRACE is something it left
        behind: that is stopped, and the run ends."""
        exited_at: float | None = None
        while True:
            self.sessions.keep(self.request.session_id)  # shared as it grows: a worker may die any time
            self._pass_on(control)
            if process.poll() is not None:
                exited_at = exited_at or time.monotonic()
                if not any(reader.is_alive() for reader in readers):
                    return None
                if self.output.result is not None and time.monotonic() - exited_at > DRAIN_GRACE:
                    kill_tree(process, marks=run_marks(self.request))  # its stragglers; their pipes close
                    _join(readers, STOP_GRACE)
                    return None
            reason = control.wait(POLL)
            if reason is not None:
                grace = STOP_GRACE if process.poll() is None else 0.0
                kill_tree(process, grace=grace, marks=run_marks(self.request))
                _join(
                    readers, STOP_GRACE
                )  # before anything is recorded: nothing the run sends afterwards lands
                return reason

    def outcome(self, returncode: int) -> RunOutcome:
        result, limits = self.output.result, self.request.limits
        if result is None:
            cut = (
                f"; {self.output.cut_lines} line(s) of its output were over {MAX_LINE} bytes and were not read"
                if self.output.cut_lines
                else ""
            )
            return self.ended(
                False,
                error=f"Claude Code exited {returncode} without a result{cut}: {self.output.said_on_stderr()[-2000:]}",
            )
        read = Reading("Claude Code's result", self.transcript.warning)
        subtype = result.get("subtype")
        if subtype == "success" and not result.get("is_error"):
            return self.ended(True, answer=read.text(result.get("result"), "result").strip())
        if subtype == "error_max_turns":
            return self.ended(
                False, error=f"max_turns reached: {limits.max_turns} turn(s) without a final answer"
            )
        if subtype == "error_max_budget_usd":
            spent = self.tally.own_share(read.dollars(result.get("total_cost_usd"), "total_cost_usd") or 0.0)
            budget = f" of ${limits.max_budget_usd:g}" if limits.max_budget_usd is not None else ""
            return self.ended(False, error=f"budget spent: ${spent:.4f}{budget} before the final answer")
        errors = result.get("errors")
        listed = "; ".join(map(read_text, errors)) if isinstance(errors, list) else read_text(errors)
        detail = read_text(result.get("result")) or listed or read_text(subtype) or "no detail"
        status = result.get("api_error_status")
        said = f" (API status {read_text(status)[:20]})" if status else ""
        return self.ended(False, error=f"Claude Code reported an error{said}: {detail[:2000]}")

    def ended(self, succeeded: bool, answer: str = "", error: str | None = None) -> RunOutcome:
        self.sessions.keep(self.request.session_id, now=True)
        self.output.count()
        self.transcript.close()
        return RunOutcome(succeeded, self.tally.usage(self.request.transcript_path), answer, error)

    def _pass_on(self, control: RunControl) -> None:
        """The nudges sent since the last look, to the feeder; once the result came, the input closes."""
        if self.closing:
            return
        for nudge in control.nudges():
            self.inbox.put(nudge)
        if self.output.result is not None:
            self.closing = True
            self.inbox.put(None)

    def _feed(self, process: subprocess.Popen[bytes]) -> None:
        """The prompt, then each nudge as it comes, as stream-json user messages, until told to close (or the
        pipe is gone: it ended or was stopped, and its exit says why)."""
        assert process.stdin is not None
        try:
            process.stdin.write(user_message(self.request.prompt))
            process.stdin.flush()
            while (nudge := self.inbox.get()) is not None:
                process.stdin.write(user_message(nudge.message))
                process.stdin.flush()
                self.transcript.record("nudge", by=nudge.by, text=nudge.text)
        except (BrokenPipeError, OSError, ValueError):
            pass
        finally:
            try:
                process.stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass


def user_message(text: str) -> bytes:
    """One line of `--input-format stream-json`: a user message with this text."""
    line = json.dumps({"type": "user", "message": {"role": "user", "content": text}}, ensure_ascii=False)
    return (line + "\n").encode("utf-8", errors="replace")


def _join(threads: list[threading.Thread], seconds: float) -> None:
    until = time.monotonic() + seconds
    for thread in threads:
        thread.join(timeout=max(0.0, until - time.monotonic()))


def read_text(value: object) -> str:
    """A value of Claude Code's result as a failure's message says it: text as it is, anything else as JSON."""
    return value if isinstance(value, str) else "" if value is None else json_text(value)


def model_for(request: RunRequest) -> str | None:
    """The file's model unless absent or `inherit`; then the worker's --model / BLACKBOARD_MODEL, if any."""
    model = (request.agent.model or "").strip()
    return model if model not in NOT_A_MODEL else request.model


def arguments(request: RunRequest, private: Path, resume: Resume | None = None) -> list[str]:
    """`claude`'s arguments; the three files they name written into `private`. Options that take lists are
    written `--option=value`, so none of them swallows the next argument. `resume`: the earlier session it
    continues (its budget is this attempt's: Claude Code counts the session's earlier cost against it)."""
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
        "--input-format=stream-json",  # the prompt and the nudges as user messages
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
        spent = resume.spent_usd if resume is not None else 0.0
        argv.append(f"--max-budget-usd={request.limits.max_budget_usd + spent:g}")
    if request.session_id is None:
        return argv
    if resume is not None and resume.session_id == request.session_id:
        return [*argv, f"--resume={resume.session_id}"]  # this attempt's own session: it goes on under its id
    if resume is not None:
        argv += [f"--resume={resume.session_id}", "--fork-session"]
    return [*argv, f"--session-id={request.session_id}"]


def earlier_runs(request: RunRequest) -> tuple[EarlierRun, ...]:
    """The runs whose session this one may continue, the latest first: this attempt's own, should it have run
    before (Claude Code refuses a `--session-id` it has already), then the earlier attempts'."""
    assert request.session_id is not None
    return (EarlierRun(request.attempt, request.session_id, request.transcript_path), *request.earlier)


def environment(request: RunRequest) -> dict[str, str]:
    """The worker's own environment (ANTHROPIC_*, proxies, CLAUDE_CODE_* ...), the settings the board's
    server needs, and the run's identity (infrastructure/keeper/identity.py): its agent, signal, board and the claim's
    token, which reaches that server this way only. A run with no claim (solve's controller) is its agent's."""
    if not request.signal_id:
        return {**os.environ, **request.board_env, AGENT: request.agent.name}
    run = identity(request.agent.name, request.signal_id, request.token, request.blackboard_id)
    return {**os.environ, **request.board_env, **run}


def run_marks(request: RunRequest) -> dict[str, str]:
    """What the run's processes carry, for a stop to find those that left its process group."""
    return marks(request.signal_id, request.token) if request.signal_id else {}
