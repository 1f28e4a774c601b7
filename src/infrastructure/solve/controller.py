"""`solve`'s controller: an agent file (the packaged `controller.md`, or one of the agents folder) run by its
runner once per iteration, with no claim and no board session: everything it reads is in its prompt, and
its final answer is the decision. Each run's transcript is kept beside the workers' (artifacts/transcripts).

A controller file with a `command` runs that instead (a program reading the prompt on standard input and
printing the decision): a rule-based controller, which needs no model."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from blackboard.application.runners import (
    AgentBrief,
    BoardTools,
    Permissions,
    RunControl,
    RunLimits,
    RunRequest,
    ToolAnswer,
    ToolSpec,
)
from blackboard.application.solve.solver import ControllerAgent, ControllerAnswer
from blackboard.domain.errors import InvalidInput
from blackboard.domain.signals import SignalUsage
from blackboard.infrastructure.agents.lenient import OWNED
from blackboard.infrastructure.agents.parsing import AgentDefinition, AgentFileInvalid, read_agent_file
from blackboard.infrastructure.composition.prices import unpriced_model
from blackboard.infrastructure.keeper.client import Keeper
from blackboard.infrastructure.keeper.lease import Lease
from blackboard.infrastructure.runners import catalog, runner_for
from blackboard.infrastructure.runners.processes import kill_tree

PACKAGED = Path(__file__).resolve().parent.parent / "agents" / "controller.md"
TIMEOUT = 600.0  # seconds one decision may take, for a controller file that names no timeout
KEEPER_GRACE = 60.0  # seconds past a decision's timeout after which the keeper ends it, the solve stalled
OURS = OWNED - {"name"}  # the agent file's keys the blackboard acts on: not handed to Claude Code


def controller_definition(named: str | None, find: object) -> AgentDefinition:
    """The controller: `named` as an agent of the folder (`find(name)`), or a path to an agent file; the
    packaged one when None. An unknown name, or a file that does not read, is bad input naming --controller."""
    if named is None:
        return read_agent_file(PACKAGED)
    found = find(named)  # type: ignore[operator]
    if found is not None:
        return found
    path = Path(named)
    if path.suffix == ".md" and path.is_file():
        try:
            return read_agent_file(path)
        except (AgentFileInvalid, OSError) as exc:
            raise InvalidInput("--controller", f"{path} is not a readable agent file: {exc}") from None
    raise InvalidInput(
        "--controller",
        f"must name an agent of the agents folder or an agent .md file, got {named!r} "
        "(without it, the packaged controller runs)",
    )


class NoBoard(BoardTools):
    """The controller has no board tools: its prompt holds the board, its answer is the decision."""

    def specs(self) -> list[ToolSpec]:
        return []

    def call(self, name: str, arguments: Mapping[str, object]) -> ToolAnswer:
        return ToolAnswer(f"no tool {name}: the controller answers with one JSON decision", True)

    def close(self) -> None:
        pass


class Deadline(RunControl):
    """A decision's run stops at its timeout; nothing else stops it (an interrupt ends the whole solve). A
    process it starts is told to `held` (the solve's keeper: its tree ends with the solve, however it ends)."""

    def __init__(self, seconds: float, held: Callable[[int], None] = lambda pid: None) -> None:
        self._seconds = seconds
        self._until = time.monotonic() + seconds
        self._never = threading.Event()
        self._held = held

    def started(self, pid: int) -> None:
        self._held(pid)

    def stop_reason(self) -> str | None:
        if time.monotonic() >= self._until:
            return f"timed out after {self._seconds:g}s (the controller's timeout)"
        return None

    def wait(self, seconds: float) -> str | None:
        self._never.wait(max(0.0, min(seconds, self._until - time.monotonic())))
        return self.stop_reason()


class RunnerController(ControllerAgent):
    def __init__(
        self,
        definition: AgentDefinition,
        blackboard_id: str,
        runner: str | None,
        model: str | None,
        workdir: Path,
        transcripts: Path,
        permissions: Permissions,
        board_env: Mapping[str, str],
    ) -> None:
        self._definition = definition
        self._board = blackboard_id
        self.name = definition.name
        own = "command" if definition.command else definition.runner_name or catalog.DEFAULT_RUNNER
        self.runner = runner or own  # --runner, else the file's command, else its runner
        self.model = model
        self._workdir, self._transcripts = workdir, transcripts
        self._permissions, self._board_env = permissions, dict(board_env)
        self._keeper: Keeper | None = None  # started with the first decision that runs a process
        # the model its runner would call and cannot price (a USD budget refuses it: Solver.check_priced)
        self.unpriced = (
            None if self.runner == "command" else unpriced_model(self.runner, definition.model, model)
        )

    def missing(self) -> str | None:
        if (
            self.runner == catalog.DEFAULT_RUNNER
            and self._definition.entrypoint
            and not self._definition.command
        ):
            return "a controller runs a command or a runner, not an entrypoint"
        return None if self.runner == "command" else catalog.missing(self.runner)

    def decide(self, run_id: str, iteration: int, prompt: str) -> ControllerAnswer:
        if self.runner == "command":
            return self._command(prompt)
        agent = self._definition
        request = RunRequest(
            agent=AgentBrief(
                name=agent.name,
                description=agent.description,
                instructions=agent.instructions,
                tools=agent.tools,
                model=agent.model,
                settings={k: v for k, v in agent.extra.items() if k not in OURS},
            ),
            signal_id="",  # no claim: the runner attaches no board
            blackboard_id=self._board,
            prompt=prompt,
            token="",
            limits=RunLimits(
                timeout=agent.timeout or TIMEOUT,
                max_turns=agent.max_turns,
                max_budget_usd=agent.max_budget_usd,
            ),
            workdir=str(self._workdir),
            transcript_path=str(self._transcripts / f"{run_id}-{iteration}.jsonl"),
            model=self.model,
            permissions=self._permissions,
            board_env=self._board_env,
            tools=NoBoard(),
        )
        decision = f"{run_id}-{iteration}"
        try:
            control = Deadline(
                request.limits.timeout, lambda pid: self._hold(decision, pid, request.limits.timeout)
            )
            outcome = runner_for(self.runner).run(request, control)
        except Exception as exc:  # noqa: BLE001 - a runner's bug is a failed decision, never the run's end
            return ControllerAnswer(
                False, "", SignalUsage(runner=self.runner), f"{type(exc).__name__}: {exc}"
            )
        finally:
            self._release(decision)
        return ControllerAnswer(outcome.succeeded, outcome.answer, outcome.usage, outcome.error)

    def close(self) -> None:
        """The solve ends: its keeper too, ending what a decision still runs (nothing, after a decision ended)."""
        if self._keeper is not None:
            self._keeper.close()
            self._keeper = None

    def _hold(self, decision: str, pid: int, timeout: float) -> None:
        """A decision's process (in a session of its own) started: the solve's keeper ends its tree if the solve
        dies first (killed: the keeper's pipe ends), or its timeout and a grace pass with the solve stalled."""
        if self._keeper is None:
            self._keeper = Keeper()
            self._keeper.start()
        self._keeper.hold(decision, pid, {}, Lease.starting_now(timeout + KEEPER_GRACE))

    def _release(self, decision: str) -> None:
        if self._keeper is not None:
            self._keeper.ended(decision)

    def _command(self, prompt: str) -> ControllerAnswer:
        """The file's command, through the shell, in the file's folder, as a handler runs: the prompt on
        standard input, the decision on standard output (UTF-8: other bytes are a failed run, not a crash)."""
        agent, started = self._definition, time.monotonic()
        timeout = agent.timeout or TIMEOUT
        try:
            process = subprocess.Popen(
                str(agent.command),
                shell=True,
                cwd=agent.path.resolve().parent,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, **self._board_env},
                start_new_session=True,  # its own group: its whole tree ends with the decision or the solve
            )
        except OSError as exc:
            return ControllerAnswer(False, "", self._usage(started), f"could not start its command: {exc}")
        decision = f"command-{process.pid}"
        self._hold(decision, process.pid, timeout)
        try:
            stdout_bytes, stderr_bytes = process.communicate(
                prompt.encode("utf-8", "backslashreplace"), timeout=timeout
            )
        except subprocess.TimeoutExpired:
            kill_tree(process)
            error = f"timed out after {timeout:g}s (the controller's timeout)"
            return ControllerAnswer(False, "", self._usage(started), error)
        except BaseException:  # an interrupt (Ctrl-C, SIGTERM): the decision ends with the solve
            kill_tree(process)
            raise
        finally:
            self._release(decision)
        done = subprocess.CompletedProcess(process.args, process.returncode, stdout_bytes, stderr_bytes)
        try:
            stdout = done.stdout.decode("utf-8")
        except UnicodeDecodeError as bad:
            said = done.stdout.decode("utf-8", "replace")
            error = f"its output is not UTF-8 text (byte {done.stdout[bad.start]:#04x} at offset {bad.start})"
            return ControllerAnswer(False, said, self._usage(started), error)
        if done.returncode != 0:
            said = " ".join(done.stderr.decode("utf-8", "replace").split())[-500:] or "(no stderr)"
            return ControllerAnswer(
                False, stdout, self._usage(started), f"its command exited {done.returncode}: {said}"
            )
        return ControllerAnswer(True, stdout, self._usage(started))

    def _usage(self, started: float) -> SignalUsage:
        return SignalUsage(runner="command", duration_ms=int((time.monotonic() - started) * 1000))
