"""The worker as a whole: its claim loop, handler pool, supervisor, recorder and beat started and stopped together."""

from __future__ import annotations

import logging
import signal
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from blackboard.application.output import RunOutputStore
from blackboard.application.ports import Clock, EventStore, LogNotifier
from blackboard.application.ports.rates import RateWindows
from blackboard.application.presence import PresenceStore
from blackboard.application.queries import BlackboardQueries
from blackboard.application.runners import ToolsFactory
from blackboard.application.service import BlackboardService
from blackboard.domain.capabilities import AgentProfile
from blackboard.domain.errors import InvalidInput
from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure.agents.entrypoints import load_entrypoint
from blackboard.infrastructure.agents.parsing import AgentDefinition
from blackboard.infrastructure.keeper.client import Keeper
from blackboard.infrastructure.worker.beat import Heartbeat
from blackboard.infrastructure.worker.cancels import StopWatch
from blackboard.infrastructure.worker.handling import Handling
from blackboard.infrastructure.worker.held import HeldRuns
from blackboard.infrastructure.worker.loop import ClaimLoop
from blackboard.infrastructure.worker.nudges import NudgeInbox
from blackboard.infrastructure.worker.options import WorkerOptions
from blackboard.infrastructure.worker.output import OutputWriter
from blackboard.infrastructure.worker.recorder import Done, Recorder
from blackboard.infrastructure.worker.runs import Runs
from blackboard.infrastructure.worker.supervisor import Supervisor

logger = logging.getLogger("blackboard.worker")  # the whole worker logs under one name, which users filter on


class Worker:
    """An agent as a process: claims what it may take and runs the agent's handler on each, a `command`
    in a thread of the pool, an `entrypoint` on a lane under the supervisor; the recorder stores the outcomes."""

    def __init__(
        self,
        options: WorkerOptions,
        service: BlackboardService,
        queries: BlackboardQueries,
        agents: Callable[[str], AgentDefinition | None],
        everyone: Callable[[], list[AgentProfile]],
        store: EventStore,
        notifier: LogNotifier,
        threshold: float,
        presence: PresenceStore | None = None,
        clock: Clock | None = None,
        board_tools: ToolsFactory | None = None,
        output: RunOutputStore | None = None,
        rate_windows: RateWindows | None = None,
    ) -> None:
        """`board_tools`: the board's tools bound to a claim, for the agents a model API runner runs; `output`:
        where its runs' output is kept as it comes, for followers (`show --follow`); `rate_windows`: the rate
        limits' shared windows, which each model call of an agent with a rate limit takes its room from."""
        self._options = options
        # who this worker is, for everyone to see (`status`, the web view): no proof of anything. What proves
        # a claim is that claim's own token, a secret drawn for it alone (loop.new_token), never shown
        self.worker_id = f"{options.agent}/{uuid.uuid4()}"
        self._cancel = threading.Event()  # the grace period is over: stop the handlers still running
        self._handled = 0
        self._stopped_at: float | None = None
        slots = 1 if options.once else options.concurrency
        self._pool = ThreadPoolExecutor(
            max_workers=slots, thread_name_prefix="handler"
        )  # threads come with work
        self._recorder = Recorder(service, options.agent, self._cancel, self._recorded)
        # one process that ends this worker's runs if the worker dies or a claim lapses (started in `run`)
        self._keeper = Keeper()
        self._held = HeldRuns(options.claim_timeout, self._keeper)
        self._output = OutputWriter(output, clock.now if clock is not None else lambda: datetime.now(UTC))
        # a signal cancelled while it runs here: its run is stopped (the loop is built below)
        # a nudge for a run here waits for that run to ask (worker/nudges.py), found by the stop watch's looks
        self._nudges = NudgeInbox(store, lambda: self._loop.active())
        self._stops = StopWatch(queries, store, notifier, lambda: self._loop.claims(), self._nudges.seen)
        self._handling = Handling(
            service,
            queries,
            options.renew_every,
            self._cancel,
            self._recorder,
            options.artifacts_dir,
            options.handler_env,
            self._stops.reason,
            self._held,
            self._output,
        )
        self._lanes = Supervisor(self._handling, self._pool, self._cancel, options.renew_every)
        self._runs = Runs(
            self._handling,
            options.run,
            options.artifacts_dir,
            options.renew_every,
            self._cancel,
            board_tools,
            rate_windows,
            self._nudges.take,
        )
        self._loop = ClaimLoop(
            options,
            service,
            queries,
            store,
            notifier,
            agents,
            everyone,
            threshold,
            self._start,
            self.worker_id,
            self._runs.runner_of,
        )
        self._beat = (
            None
            if presence is None or clock is None
            else Heartbeat(
                presence,
                clock,
                self.worker_id,
                lambda: self._loop.definition().profile,
                threshold,
                (options.blackboard_id,) if options.blackboard_id else (),
                options.beat_every,
                self._loop.running_signals,
            )
        )

    @property
    def handled(self) -> int:
        return self._handled

    def stop(self, *_: Any) -> None:
        """Stop claiming; running handlers may finish within the grace period."""
        if not self._loop.stopping.is_set():
            self._stopped_at = time.monotonic()
            logger.info(
                "stopping: no new claims; %d handler(s) running, %gs to finish",
                self._loop.running,
                self._options.grace,
            )
        self._loop.stop()

    def install_signal_handlers(self) -> None:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)

    def run(self) -> int:
        """Work until stopped (or, with `once`, after at most one signal). Returns the exit code."""
        definition = self._loop.definition()
        if self._runs.runner_of(definition) is not None:
            check_runner(definition, self._runs.runner_of(definition), self._options.run.runner is not None)
        elif not definition.runnable:  # an unknown agent, or one with nothing to run, fails now
            raise InvalidInput(
                "command",
                (
                    f"agent {self._options.agent} is not runnable: it has no command or entrypoint in its file "
                    f"({definition.path}), so a worker has nothing to run for it "
                    "(add command: or entrypoint: to the file)"
                ),
            )
        if definition.entrypoint and self._runs.runner_of(definition) is None:
            load_entrypoint(definition)  # an entrypoint that does not import fails now too (exit 2)
        logger.info(
            "worker %s started (%s, concurrency %d)",
            self._options.agent,
            self.worker_id,
            self._options.concurrency,
        )
        self._keeper.start()  # from the main thread, which lives as long as the worker (its parent-death signal)
        self._output.start()
        self._recorder.start()
        self._stops.start()
        if self._beat is not None:
            self._beat.start()  # live from its first claim on: a signal that fits it waits for it
        try:
            self._loop.run()
        finally:
            self._drain()
            self._lanes.close()
            self._recorder.close()
            self._stops.close()
            self._pool.shutdown()
            self._output.close()
            if self._beat is not None:
                self._beat.stop()
            self._keeper.close()
        logger.info("worker %s stopped after %d signal(s)", self._options.agent, self._handled)
        return 0

    def _start(self, agent: AgentDefinition, claimed: AgentSignal) -> None:
        """From the claim loop: a claimed signal goes to its handler, or its runner."""
        self._held.hold(claimed)
        if self._runs.runner_of(agent) is not None:
            self._pool.submit(self._runs.run, agent, claimed)
        elif agent.entrypoint:
            self._lanes.start(agent, claimed)
        else:
            self._pool.submit(self._handling.run_command, agent, claimed)
        self._stops.started()
        if self._beat is not None:
            self._beat.changed()

    def _recorded(self, batch: list[Done]) -> None:
        """From the recorder's thread: these claims are settled, their slots free."""
        self._handled += len(batch)
        for done in batch:
            self._stops.forget(done.claimed.signal_id)
            self._nudges.forget(done.claimed.signal_id)
        self._loop.release(done.claimed.signal_id for done in batch)
        if self._beat is not None:
            self._beat.changed()

    def _drain(self) -> None:
        """Let running handlers finish; once stopped and past the grace period, stop them too
        (their signals fail with the reason), so no claim is left without an owner."""
        while self._loop.running:
            if self._stopped_at is not None and time.monotonic() >= self._stopped_at + self._options.grace:
                if not self._cancel.is_set():
                    logger.info("grace period over: stopping %d handler(s)", self._loop.running)
                self._cancel.set()
            self._loop.freed.wait(0.05)
            self._loop.freed.clear()


def check_runner(agent: AgentDefinition, runner: str | None, forced: bool) -> None:
    """A worker that cannot start its runner refuses to start (exit 2), saying what is missing and how to
    get it; one that can has it prepared now (its SDK imported), before the first claim."""
    from blackboard.infrastructure.runners import runner_for
    from blackboard.infrastructure.runners.catalog import missing

    lacking = missing(str(runner))
    if lacking is not None:
        whose = "--runner" if forced else f"agent {agent.name}'s runner ({agent.path})"
        raise InvalidInput("runner", f"{whose}: {lacking}")
    runner_for(str(runner)).prepare()
