"""BlackboardService: the use cases UC-001..004 over the ports."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar
from uuid import uuid4

from blackboard.application.commands import (
    ClaimSignal,
    ClaimSignals,
    Command,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    PostSignal,
    RecordOutcomes,
    RenewClaim,
    RetrySignal,
)
from blackboard.application.errors import Contention
from blackboard.application.ports import (
    AgentRegistry,
    Clock,
    ConcurrencyConflict,
    EventPublisher,
    EventStore,
    IdGenerator,
    Recorded,
    SignalReadModel,
    SnapshotStore,
)
from blackboard.application.projection import Projector
from blackboard.application.repository import BlackboardRepository
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.capabilities import DEFAULT_THRESHOLD, AgentProfile, rank
from blackboard.domain.errors import AgentNotFound, BlackboardError, SignalNotFound
from blackboard.domain.signals import AgentSignal, SignalPayload, SignalResult, SignalStatus

logger = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Settings:
    claim_threshold: float = DEFAULT_THRESHOLD
    post_timeout: timedelta = timedelta(seconds=30)
    claim_timeout: timedelta = timedelta(seconds=300)
    max_attempts: int = 50  # reload-and-decide rounds before a conflict is given up
    snapshot_every: int = 500  # fewest events between two snapshots of a board


@dataclass(slots=True)
class Claims:
    """What a batch claim took, and why each signal it passed over could not be taken."""

    claimed: list[AgentSignal] = field(default_factory=list)
    skipped: dict[str, BlackboardError] = field(default_factory=dict)


class BlackboardService:
    """Write side: each command loads a board, decides, appends once, then lets side effects follow."""

    def __init__(
        self,
        store: EventStore,
        read_model: SignalReadModel,
        registry: AgentRegistry,
        publisher: EventPublisher,
        clock: Clock,
        ids: IdGenerator,
        settings: Settings | None = None,
        snapshots: SnapshotStore | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self._store = store
        self._boards = BlackboardRepository(store, snapshots, self.settings.snapshot_every)
        self._projector = Projector(store, read_model)
        self._read_model = read_model
        self._registry = registry
        self._publisher = publisher
        self._clock = clock
        self._ids = ids
        self._boards_of: dict[str, str] = {}  # signal -> board: a signal never changes board

    # UC-001
    def post_signal(self, cmd: PostSignal) -> AgentSignal:
        payload = SignalPayload(
            ps_id=cmd.ps_id, entry_id=cmd.entry_id, topic=cmd.topic, prompt=cmd.prompt, context=cmd.context
        )

        def decide(board: BlackboardAggregate) -> AgentSignal:
            now = self._clock.now()
            signal = board.post_signal(
                signal_id=self._unused_signal_id(),
                signal_type=cmd.signal_type,
                payload=payload,
                posted_by=cmd.posted_by,
                at=now,
                target_capabilities=cmd.target_capabilities,
                after=cmd.after,
                dedupe_key=cmd.dedupe_key,
            )
            if board.has_pending_events and signal.status is SignalStatus.POSTED:
                if reason := self._nobody_can_take(signal):
                    signal = board.mark_unclaimed(signal.signal_id, reason, now)
            return signal

        return self._execute(cmd.board, decide, cmd, actor=cmd.posted_by)

    # UC-002
    def claim_signal(self, cmd: ClaimSignal) -> AgentSignal:
        agent = self._agent(cmd.agent_id)
        return self._execute(
            self._locate(cmd.signal_id, cmd.blackboard_id),
            lambda board: board.claim_signal(
                cmd.signal_id, agent, self._clock.now(), self.settings.claim_threshold, cmd.token
            ),
            cmd,
            actor=cmd.agent_id,
        )

    # UC-003
    def complete_signal(self, cmd: CompleteSignal) -> AgentSignal:
        result = SignalResult(artifact_path=cmd.artifact_path, knowledge_items=cmd.knowledge_items)
        return self._execute(
            self._locate(cmd.signal_id, cmd.blackboard_id),
            lambda board: board.complete_signal(cmd.signal_id, cmd.agent_id, result, self._clock.now(), cmd.token),
            cmd,
            actor=cmd.agent_id,
        )

    def fail_signal(self, cmd: FailSignal) -> AgentSignal:
        return self._execute(
            self._locate(cmd.signal_id, cmd.blackboard_id),
            lambda board: board.fail_signal(cmd.signal_id, cmd.agent_id, cmd.error, self._clock.now(), cmd.token),
            cmd,
            actor=cmd.agent_id,
        )

    def claim_signals(self, cmd: ClaimSignals) -> Claims:
        """Claim up to `cmd.limit` of the signals, in order, in one append. A signal that cannot be
        claimed any more is skipped (and said why), so workers racing for the same oldest signals
        each take the next free ones. The board is held while deciding: no lost races to retry."""
        agent = self._agent(cmd.agent_id)

        def decide(board: BlackboardAggregate) -> Claims:
            now, claims = self._clock.now(), Claims()
            for signal_id in cmd.signal_ids:
                if len(claims.claimed) >= cmd.limit:
                    break
                try:
                    claims.claimed.append(
                        board.claim_signal(signal_id, agent, now, self.settings.claim_threshold, cmd.token)
                    )
                except BlackboardError as refused:  # taken or changed meanwhile: the next one
                    claims.skipped[signal_id] = refused
            return claims

        return self._execute(cmd.blackboard_id, decide, cmd, actor=cmd.agent_id, hold=True)

    def record_outcomes(self, cmd: RecordOutcomes) -> list[AgentSignal | BlackboardError]:
        """Complete or fail each signal, in one append; per outcome, the signal as stored or the
        reason it was refused (a claim that expired or went to someone else meanwhile)."""

        def decide(board: BlackboardAggregate) -> list[AgentSignal | BlackboardError]:
            now, results = self._clock.now(), []
            for outcome in cmd.outcomes:
                try:
                    if isinstance(outcome, CompleteSignal):
                        result = SignalResult(
                            artifact_path=outcome.artifact_path, knowledge_items=outcome.knowledge_items
                        )
                        results.append(board.complete_signal(
                            outcome.signal_id, outcome.agent_id, result, now, outcome.token
                        ))
                    else:
                        results.append(board.fail_signal(
                            outcome.signal_id, outcome.agent_id, outcome.error, now, outcome.token
                        ))
                except BlackboardError as refused:
                    results.append(refused)
            return results

        return self._execute(cmd.blackboard_id, decide, cmd, actor=cmd.agent_id, hold=True)

    def renew_claim(self, cmd: RenewClaim) -> AgentSignal:
        return self._execute(
            self._locate(cmd.signal_id, cmd.blackboard_id),
            lambda board: board.renew_claim(cmd.signal_id, cmd.agent_id, self._clock.now(), cmd.token),
            cmd,
            actor=cmd.agent_id,
        )

    def retry_signal(self, cmd: RetrySignal) -> AgentSignal:
        """A new signal for the work of a FAILED or EXPIRED one; UNCLAIMED at once if nobody can take it."""

        def decide(board: BlackboardAggregate) -> AgentSignal:
            now = self._clock.now()
            signal = board.retry_signal(cmd.signal_id, self._unused_signal_id(), cmd.posted_by, now)
            if signal.status is SignalStatus.POSTED and (reason := self._nobody_can_take(signal)):
                signal = board.mark_unclaimed(signal.signal_id, reason, now)
            return signal

        return self._execute(self._locate(cmd.signal_id, cmd.blackboard_id), decide, cmd, actor=cmd.posted_by)

    def expire_signals(self, cmd: ExpireSignals) -> list[AgentSignal]:
        """Expire what is past its timeout; returns every signal this call ended."""
        self._projector.catch_up()
        ended: list[AgentSignal] = []
        for board_id in self._read_model.live_boards(cmd.blackboard_id):
            ended += self._execute(
                board_id,
                lambda board: board.expire_overdue(
                    self._clock.now(), self.settings.post_timeout, self.settings.claim_timeout
                ),
                cmd,
                actor="expiry-sweeper",
            )
        return ended

    # ----------------------------------------------------------------- helpers
    def _unused_signal_id(self) -> str:
        """Ids have 32 random bits, so collisions happen on large boards: draw again until unused."""
        while True:
            signal_id = self._ids.new_signal_id()
            if self._read_model.get(signal_id) is None:
                return signal_id

    def _agent(self, agent_id: str) -> AgentProfile:
        agent = self._registry.get(agent_id)
        if agent is None:
            raise AgentNotFound(agent_id)
        return agent

    def _locate(self, signal_id: str, blackboard_id: str | None) -> str:
        if blackboard_id:
            return blackboard_id
        if (known := self._boards_of.get(signal_id)) is not None:
            return known
        signal = self._read_model.get(signal_id)
        if signal is None:
            self._projector.catch_up()  # another writer may have posted it a moment ago
            signal = self._read_model.get(signal_id)
        if signal is None:
            raise SignalNotFound(signal_id)
        if len(self._boards_of) > 100_000:
            self._boards_of.clear()
        self._boards_of[signal_id] = signal.blackboard_id
        return signal.blackboard_id

    def _nobody_can_take(self, signal: AgentSignal) -> str | None:
        ranking = rank(signal, self._registry.get_all(), self.settings.claim_threshold)
        if any(v.passes for v in ranking):
            return None
        wanted = ", ".join(signal.target_capabilities)
        best = f"; best was {ranking[0].agent.agent_id} at {ranking[0].score:.2f}" if ranking and ranking[0].score else ""
        return f"no registered agent scores above its threshold for {wanted}{best}"

    def _execute(
        self,
        blackboard_id: str,
        decide: Callable[[BlackboardAggregate], T],
        cmd: Command,
        actor: str,
        hold: bool = False,
    ) -> T:
        """Load, decide, append once; on a conflict reload and decide again with fresh state.
        With `hold`, the board is held from the first attempt (for writers that expect to race)."""
        causation_id = str(uuid4())  # this command; every event it stores carries it
        metadata: dict[str, Any] = {
            "actor": actor,
            "command": type(cmd).__name__,
            "causation_id": causation_id,
            "correlation_id": cmd.correlation_id or causation_id,
        }
        if hold:
            self._boards.refresh(blackboard_id)
        for attempt in range(self.settings.max_attempts):
            # The first attempt is optimistic; once it lost a race, hold the board while deciding,
            # so a busy board cannot starve a writer that keeps losing.
            try:
                with self._store.exclusive(blackboard_id) if attempt or hold else nullcontext():
                    outcome, recorded = self._attempt(blackboard_id, decide, metadata)
            except ConcurrencyConflict:
                logger.debug("conflict on %s; deciding again", blackboard_id)
                continue
            if recorded:
                self._after_commit(recorded)
            return outcome
        raise Contention(blackboard_id, self.settings.max_attempts)

    def _attempt(
        self, blackboard_id: str, decide: Callable[[BlackboardAggregate], T], metadata: dict[str, Any]
    ) -> tuple[T, list[Recorded]]:
        board = self._boards.get(blackboard_id)
        try:
            outcome = decide(board)
        except BlackboardError:
            self._boards.release(board)
            raise
        if not board.has_pending_events:
            self._boards.release(board)
            return outcome, []
        return outcome, self._boards.save(board, metadata)

    def _after_commit(self, recorded: Sequence[Recorded]) -> None:
        if not recorded[-1].projected:  # the store did not fold them itself (a rebuild is running)
            self._projector.catch_up(until=recorded[-1].position)
        self._publisher.publish([r.event for r in recorded])
