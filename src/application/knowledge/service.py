"""KnowledgeService: writing and resolving entries, each key held on its own, and a completion's
knowledge landing on the board as entries."""

from __future__ import annotations

import copy
import logging
import time
from datetime import timedelta

from blackboard.application.authority import Authority
from blackboard.application.callers import Act, Caller
from blackboard.application.commands import command_metadata
from blackboard.application.entry_values import check_knowledge_items
from blackboard.application.errors import NotPermitted, StoreUnavailable
from blackboard.application.knowledge.commands import ResolveEntry, WriteEntry
from blackboard.application.knowledge.ports import EntryTransaction
from blackboard.application.ports import Clock, EventPublisher, UnitOfWork
from blackboard.domain.errors import InvalidInput, SignalNotFound
from blackboard.domain.events import AgentSignalCompleted, BlackboardEvent, EntryCandidateKept
from blackboard.domain.knowledge import permissions as key_permissions
from blackboard.domain.knowledge import rules as entry_rules
from blackboard.domain.knowledge.entries import Entry, EntryNotFound, KeyInConflict, StaleVersion

logger = logging.getLogger(__name__)
RUNS_WRITE_UNDER_THEIR_OWN = "a run writes under its own signal only"
LANDING_ATTEMPTS = 12  # about 40 s of retries: a server restart or a failover, not a long outage


def result_key(signal_id: str, n: int) -> str:
    """Where a completion's n-th knowledge item (from 1) lands: `<signal_id>/knowledge/<n>`."""
    return f"{signal_id}/knowledge/{n}"


class KnowledgeService:
    """Write side of entries: each command holds one key (its own stream), loads the key's state,
    decides with the domain's rules, commits once, then tells subscribers."""

    def __init__(
        self,
        uow: UnitOfWork,
        publisher: EventPublisher,
        clock: Clock,
        claim_timeout: timedelta | None = None,
        authority: Authority | None = None,
    ) -> None:
        self._authority = authority or Authority()  # who may do what (application/callers.py)
        self._uow = uow
        self._publisher = publisher
        self._clock = clock
        self._claim_timeout = claim_timeout  # a claim older than this is lost (None: leases are not checked)

    def write(self, cmd: WriteEntry) -> Entry:
        """The key after the write. A write kept as a candidate is recorded, then raises KeyInConflict
        (a refusal of the value, not of the record); a stale `replaces` records nothing. A write naming
        a signal with key permissions is checked against them in the write's own transaction
        (KeyPermissionDenied, nothing recorded)."""
        return self._write(cmd, checked=True)

    def acting(self, caller: Caller) -> KnowledgeService:
        """This service for one caller, whoever the process is: an MCP session's."""
        clone = copy.copy(self)
        clone._authority = self._authority.acting(caller)
        return clone

    def _write(self, cmd: WriteEntry, checked: bool) -> Entry:
        caller = None
        if checked:  # a completion's items land as its claimer's: the completion was its permission
            caller = self._authority.check(Act.WRITE, f"write {cmd.key}")
            self._authority.reach(cmd.blackboard_id)
            cmd = self._authority.named(caller, cmd, "author", f"write {cmd.key}")
            if caller.holds_a_claim and cmd.signal_id not in (None, caller.signal_id):
                raise NotPermitted(
                    caller.who, f"write {cmd.key} under {cmd.signal_id}", RUNS_WRITE_UNDER_THEIR_OWN
                )
        extra = {"signal_id": cmd.signal_id, "token_given": cmd.token is not None} if cmd.signal_id else {}
        metadata = command_metadata(cmd, cmd.author, **extra)
        with self._uow.entry(cmd.blackboard_id, cmd.key) as tx:
            if caller is not None and caller.holds_a_claim:
                self._check_run_write(tx, caller, cmd.key, cmd.blackboard_id, f"write {cmd.key}")
            elif checked:
                self._check_write(tx, cmd)
            entry = tx.load()
            event = entry_rules.write(
                entry, cmd.blackboard_id, cmd.key, cmd.content(), self._clock.now(), cmd.replaces
            )
            recorded = tx.commit([event], metadata)
        after = entry_rules.evolve(entry, event, recorded[0].position)
        self._publisher.publish([event])
        if isinstance(event, EntryCandidateKept):
            raise KeyInConflict(after, event.version)
        return after

    def _check_write(self, tx: EntryTransaction, cmd: WriteEntry) -> None:
        """Under the board's hold until the commit: the claims checked are the claims the write lands
        under. A signal named with key lists decides alone; otherwise the author's own key-restricted
        claims on the board bind it (permissions.bound_write)."""
        now, timeout = self._clock.now(), self._claim_timeout or timedelta.max
        if cmd.signal_id is not None:
            signal = tx.signal(cmd.signal_id)
            if signal is None:
                raise SignalNotFound(cmd.signal_id, cmd.blackboard_id)
            if key_permissions.restricts(signal):
                key_permissions.check(signal, "write", cmd.key, cmd.author, cmd.token, now, timeout)
                return
        key_permissions.bound_write(tx.claims_of(cmd.author), cmd.key, cmd.author, now, timeout)

    def _check_run_write(self, tx: EntryTransaction, caller: Caller, key: str, board: str, verb: str) -> None:
        """A run writes (and resolves) under its own claim, checked under the hold until the commit: live,
        and within its write keys when it has any; a claim with none leaves the write to the rule of the
        author's claims (permissions.bound_write). Its write keys are its board's: elsewhere, nothing."""
        now, timeout = self._clock.now(), self._claim_timeout or timedelta.max
        agent = str(caller.agent)
        stored = tx.signal(str(caller.signal_id)) if caller.board in (None, board) else None
        held = self._authority.held(caller, verb, stored)  # another board's signal: read, not held
        if not key_permissions.restricts(held):
            key_permissions.bound_write(tx.claims_of(agent), key, agent, now, timeout)
        elif held.blackboard_id != board:
            why = f"its write keys are keys of board {held.blackboard_id}, not {board}"
            raise key_permissions.KeyPermissionDenied(held.signal_id, key, "write", why)
        else:
            key_permissions.check(held, "write", key, agent, caller.token, now, timeout)

    def resolve(self, cmd: ResolveEntry) -> Entry:
        caller = self._authority.check(Act.WRITE, f"resolve {cmd.key}")
        self._authority.reach(cmd.blackboard_id)
        cmd = self._authority.named(caller, cmd, "author", f"resolve {cmd.key}")
        metadata = command_metadata(cmd, cmd.author)
        with self._uow.entry(cmd.blackboard_id, cmd.key) as tx:
            if caller.holds_a_claim:
                self._check_run_write(tx, caller, cmd.key, cmd.blackboard_id, f"resolve {cmd.key}")
            else:  # a resolve writes the key: the resolver's key-restricted claims bind it as they bind a write
                key_permissions.bound_write(
                    tx.claims_of(cmd.author),
                    cmd.key,
                    cmd.author,
                    self._clock.now(),
                    self._claim_timeout or timedelta.max,
                )
            entry = tx.load()
            if entry is None:
                raise EntryNotFound(cmd.blackboard_id, cmd.key)
            event = entry_rules.resolve(
                entry, cmd.author, cmd.rationale, self._clock.now(), cmd.pick, cmd.value, cmd.topics
            )
            recorded = tx.commit([event], metadata)
        self._publisher.publish([event])
        return entry_rules.evolve(entry, event, recorded[0].position)

    def land_results(self, event: BlackboardEvent) -> None:
        """Subscriber of AgentSignalCompleted: each knowledge item becomes a `finding` entry linked to
        the signal and authored by its claimer. Each key is written only if it was never written
        (compare-and-set at 0), so delivering one completion twice lands its items once."""
        if not isinstance(event, AgentSignalCompleted):
            return
        try:
            check_knowledge_items(event.result.knowledge_items)
        except InvalidInput as refused:  # recorded before completions were held to the rule (or imported)
            logger.warning("%s's knowledge items do not land, none of them: %s", event.signal_id, refused)
            return
        for n, item in enumerate(event.result.knowledge_items, start=1):
            cmd = WriteEntry(
                blackboard_id=event.blackboard_id,
                key=result_key(event.signal_id, n),
                value=item,
                author=event.completed_by,
                entry_type="finding",
                signal_id=event.signal_id,
                replaces=0,
                correlation_id=event.event_id,
            )
            for attempt in range(
                LANDING_ATTEMPTS
            ):  # the completion is stored: an outage must not lose its items
                try:
                    # the claim has just ended: the completion itself is the claimer's permission
                    self._write(cmd, checked=False)
                    break
                except StaleVersion:
                    logger.info("%s already holds %s's item %d", cmd.key, event.signal_id, n)
                    break
                except StoreUnavailable as down:
                    if attempt == LANDING_ATTEMPTS - 1:
                        raise
                    logger.warning(
                        "landing %s's item %d: database unavailable (%s); retrying", event.signal_id, n, down
                    )
                    time.sleep(min(5.0, 0.25 * 2**attempt))
