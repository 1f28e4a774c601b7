"""The recorder thread: stores the handlers' outcomes as they become ready, one command per board and batch."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from blackboard.application.commands import CompleteSignal, FailSignal, RecordOutcomes
from blackboard.application.ports import StoreUnavailable
from blackboard.application.service import BlackboardService
from blackboard.domain.errors import BlackboardError, InvalidInput
from blackboard.domain.signals import AgentSignal

logger = logging.getLogger("blackboard.worker")  # the whole worker logs under one name, which users filter on


@dataclass(frozen=True, slots=True)
class Done:
    """A handler's outcome, as the command that stores it, waiting for the recorder."""

    claimed: AgentSignal
    command: CompleteSignal | FailSignal
    took: float


class Recorder:
    """Stores every outcome that is ready at that moment in one command per board, so a busy worker
    writes one transaction per batch, not one per signal. While one batch is being stored the next one
    gathers, so the batches grow with the load. `recorded` hears of every batch once it is stored
    (or given up on), from the recorder's thread."""

    def __init__(
        self,
        service: BlackboardService,
        agent_id: str,
        cancel: threading.Event,
        recorded: Callable[[list[Done]], None],
    ) -> None:
        self._service = service
        self._agent_id = agent_id
        self._cancel = cancel  # set: stop retrying through an outage (the claims will expire)
        self._recorded = recorded
        self._ready: list[Done] = []
        self._ready_changed = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._record_outcomes, name="recorder", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def hand_over(self, done: Done) -> None:
        with self._ready_changed:
            self._ready.append(done)
            self._ready_changed.notify()

    def close(self) -> None:
        """Store what is still ready, then end the thread."""
        with self._ready_changed:
            self._closing = True
            self._ready_changed.notify_all()
        self._thread.join()

    def _record_outcomes(self) -> None:
        while True:
            with self._ready_changed:
                while not self._ready and not self._closing:
                    self._ready_changed.wait()
                if not self._ready:
                    return
                batch, self._ready = self._ready, []
            try:
                self._store_batch(batch)
            except Exception:
                logger.exception("could not record %d outcome(s)", len(batch))
            self._recorded(batch)

    def _store_batch(self, batch: list[Done]) -> None:
        by_board: dict[str, list[Done]] = {}
        for done in batch:
            by_board.setdefault(done.claimed.blackboard_id, []).append(done)
        for board_id, items in by_board.items():
            self._store(board_id, items)

    def _store(self, board_id: str, items: list[Done], first: bool = True) -> None:
        command = RecordOutcomes(
            blackboard_id=board_id, agent_id=self._agent_id, outcomes=tuple(d.command for d in items)
        )
        outages: list[StoreUnavailable] = []
        results = self._through_outages(command, outages)
        if results is None:
            return
        refused: list[Done] = []
        for done, result in zip(items, results, strict=True):
            if first and isinstance(result, InvalidInput):  # larger than the log carries: failed, saying why
                refused.append(
                    replace(done, command=_failed(done.command, f"handler output refused: {result}"))
                )
                continue
            if outages and isinstance(result, BlackboardError) and self._stored_before(done):
                logger.info("%s was stored before the database went away", done.claimed.signal_id)
                continue
            _log_outcome(done, result)
        if refused:
            self._store(board_id, refused, first=False)

    def _stored_before(self, done: Done) -> bool:
        """A retry after an outage is refused when the first try was stored but its acknowledgement
        was lost: the completion then happened, but nobody in this process heard of it. Tell them now,
        so its knowledge items still land (landing is idempotent)."""
        command = done.command
        if not isinstance(command, CompleteSignal):
            return False
        try:
            return self._service.redeliver_completion(
                done.claimed.blackboard_id, command.signal_id, self._agent_id, command.token
            )
        except Exception:
            logger.exception("could not check whether %s was stored", command.signal_id)
            return False

    def _through_outages(
        self, command: RecordOutcomes, outages: list[StoreUnavailable]
    ) -> list[AgentSignal | BlackboardError] | None:
        """Record, through database outages (each one kept in `outages`), until stored or refused;
        None if the worker was cancelled."""
        for attempt in range(1, 1000):
            try:
                return self._service.record_outcomes(command)
            except StoreUnavailable as down:
                outages.append(down)
                logger.warning("could not record %d outcome(s) (%s); retrying", len(command.outcomes), down)
                if self._cancel.wait(min(5.0, 0.25 * 2**attempt)):
                    return None
        return None


def _failed(command: CompleteSignal | FailSignal, error: str) -> FailSignal:
    """The outcome's signal failed with `error` instead, by the same claim, with what its run cost."""
    return FailSignal(
        signal_id=command.signal_id,
        agent_id=command.agent_id,
        error=error,
        blackboard_id=command.blackboard_id,
        token=command.token,
        usage=command.usage,
        attempt=command.attempt,
        stalled=command.stalled if isinstance(command, FailSignal) else None,
    )


def _log_outcome(done: Done, result: AgentSignal | BlackboardError) -> None:
    sid, command = done.claimed.signal_id, done.command
    if isinstance(result, BlackboardError) and getattr(result, "status", None) == "CANCELLED":
        logger.info("%s was cancelled; its outcome is not recorded (what its run spent is charged)", sid)
    elif isinstance(result, BlackboardError):  # the claim is no longer ours (it expired meanwhile)
        logger.warning("could not record the outcome of %s: %s", sid, result)
    elif isinstance(command, CompleteSignal):
        logger.info(
            "completed %s in %.2fs: %s",
            sid,
            done.took,
            command.artifact_path or f"{len(command.knowledge_items)} knowledge item(s)",
        )
    else:
        logger.info("failed %s after %.2fs: %s", sid, done.took, command.error)
