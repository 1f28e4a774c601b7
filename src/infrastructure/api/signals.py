"""The Python API's calls on signals: the CLI's use cases, each returning the document it prints with `--json`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from blackboard.application.commands import (
    ApproveGate,
    CancelSignal,
    CancelSignals,
    ClaimSignal,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    FollowSignal,
    GetSignalById,
    ListSignals,
    NudgeSignal,
    PostSignal,
    ReadEvents,
    RejectGate,
    RetrySignal,
    SetBudget,
    WaitForSignal,
    WatchSignals,
)
from blackboard.application.output import Cursor
from blackboard.domain.errors import InvalidInput
from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure import documents
from blackboard.infrastructure.agents.outcome import checked_artifact
from blackboard.infrastructure.api.base import Base, as_json, former_names, names, request
from blackboard.infrastructure.documents import (
    Agents,
    BoardBudget,
    Events,
    OutputLine,
    Ranking,
    Signal,
    Signals,
    WatchedSignal,
)
from blackboard.infrastructure.interfaces.when import parse_duration, parse_when


class SignalCalls(Base):
    def post(
        self,
        signal_type: str | None = None,
        ps_id: str | None = None,
        entry_id: str | None = None,
        topic: str | None = None,
        *,
        prompt: str | None = None,
        context: Mapping[str, Any] | None = None,
        capabilities: Iterable[str] = (),
        posted_by: str | None = None,
        blackboard_id: str | None = None,
        after: Iterable[str] = (),
        key: str | None = None,
        read_keys: Iterable[str] = (),
        write_keys: Iterable[str] = (),
        correlation_id: str | None = None,
        budget_usd: float | None = None,
        priority: int | None = None,
        not_before: datetime | timedelta | str | None = None,
        max_attempts: int | None = None,
        gate: bool = False,
        timeout_s: timedelta | float | str | None = None,
        labels: Iterable[str] = (),
        **former: Any,
    ) -> Signal:
        """`blackboard post`: a unit of work on the board (`blackboard_id`, default the PS id; `ps_id`, default
        the board: one of the two is needed); `topic` is required; `entry_id` defaults to the board's next
        `e-N`; `signal_type` may be left out when `capabilities` says whom it is for (it is then RESEARCH);
        `budget_usd` bounds what a runner's run of it may spend; `priority` 0 (most urgent) to 4, default 2;
        `not_before` (a datetime, a timedelta from now, an ISO time or a duration such as "10m"): not claimable
        before then; `max_attempts`: how many attempts it gets, whoever claims it (default: the claiming
        agent's `retries`, else 1). `gate=True`: no agent claims it, a person approves or rejects it (`approve`,
        `reject`). `timeout_s` (a timedelta, seconds, or "2h"), its own timeout: a gate expires that long after
        it opens, else it waits; another signal once it has waited that long with no live worker that fits it,
        else it waits for one (unless the `post_timeout` setting is on). `key` dedupes: posting again with it
        on the same board returns the first signal. The former names of these (docs/cli.md, "Names and
        aliases") are accepted in `former`, with the same meaning. `labels`: labels to find it by (`signals`
        and `watch` filter by them)."""
        public = former_names("post", former, key=key, timeout_s=timeout_s)
        key, given = public["key"], public["timeout_s"]
        command = request(
            PostSignal,
            signal_type=signal_type,
            ps_id=ps_id,
            entry_id=entry_id,
            topic=topic,
            prompt=prompt,
            context=None if context is None else as_json(context, "context"),
            target_capabilities=names(capabilities, "capabilities"),
            posted_by=posted_by,
            blackboard_id=blackboard_id,
            after=names(after, "after"),
            dedupe_key=key,
            read_keys=names(read_keys, "read_keys"),
            write_keys=names(write_keys, "write_keys"),
            correlation_id=correlation_id,
            budget_usd=budget_usd,
            priority=priority,
            not_before=None
            if not_before is None
            else parse_when(not_before, datetime.now(UTC), "not_before"),
            max_attempts=max_attempts,
            gate=gate,
            timeout_s=None if given is None else parse_duration(given, "timeout_s"),
            labels=names(labels, "labels"),
        )
        posted = self._parts.service.post_signal(command)
        return documents.posted(posted, self._parts.registry, self._parts.queries)

    def claim(self, signal_id: str, *, agent: str, token: str | None = None) -> Signal:
        """`blackboard claim`: the agent takes the signal if its score is above its threshold."""
        command = request(ClaimSignal, signal_id=signal_id, agent_id=agent, token=token)
        return _signal(self._parts.service.claim_signal(command))

    def complete(
        self,
        signal_id: str,
        *,
        agent: str,
        artifact_path: str | None = None,
        knowledge_items: Iterable[str] = (),
        token: str | None = None,
    ) -> Signal:
        """`blackboard complete`: the claimer hands back its result (its knowledge items land as entries)."""
        command = request(
            CompleteSignal,
            signal_id=signal_id,
            agent_id=agent,
            artifact_path=artifact_path,
            knowledge_items=names(knowledge_items, "knowledge_items"),
            token=token,
        )
        checked_artifact(command.artifact_path, self._parts.config.artifacts_dir, "artifact_path")
        return _signal(self._parts.service.complete_signal(command))

    def fail(
        self,
        signal_id: str,
        *,
        agent: str,
        error: str,
        token: str | None = None,
        retry_after: float | None = None,
    ) -> Signal:
        """`blackboard fail`: the claimer reports that it could not do the work; with attempts left the
        signal is POSTED again, after `retry_after` seconds if given, else the claimer's backoff."""
        command = request(
            FailSignal, signal_id=signal_id, agent_id=agent, error=error, token=token, retry_after=retry_after
        )
        return documents.signals_now([self._parts.service.fail_signal(command)], self._parts.queries)[0]

    def retry(self, signal_id: str, *, posted_by: str | None = None) -> Signal:
        """`blackboard retry`: a FAILED, EXPIRED or CANCELLED signal's work posted again, `retry_of` naming it."""
        command = request(RetrySignal, signal_id=signal_id, posted_by=posted_by)
        return documents.signals_now([self._parts.service.retry_signal(command)], self._parts.queries)[0]

    def cancel(
        self,
        signal_id: str,
        *,
        reason: str | None = None,
        by: str | None = None,
        correlation_id: str | None = None,
    ) -> Signal:
        """`blackboard cancel SIG`: CANCELLED, with every open signal waiting on it; a worker running it
        stops. RuleViolation once it is final."""
        command = request(
            CancelSignal, signal_id=signal_id, reason=reason, cancelled_by=by, correlation_id=correlation_id
        )
        return _signal(self._parts.service.cancel_signal(command))

    def approve(self, signal_id: str, *, by: str, note: str | None = None) -> Signal:
        """`blackboard approve SIG --by NAME`: a person approves an open gate; it is COMPLETED and what waits
        on it may run. Refused for a signal that is not an open gate."""
        command = request(ApproveGate, signal_id=signal_id, approved_by=by, note=note)
        return _signal(self._parts.service.approve_gate(command))

    def reject(self, signal_id: str, *, by: str, reason: str) -> Signal:
        """`blackboard reject SIG --by NAME --reason TEXT`: a person rejects an open gate; it is FAILED and
        what waits on it expires."""
        command = request(RejectGate, signal_id=signal_id, rejected_by=by, reason=reason)
        return _signal(self._parts.service.reject_gate(command))

    def nudge(self, signal_id: str, text: str, *, by: str) -> Signal:
        """`blackboard nudge SIG TEXT --by NAME`: a person's word to the agent running a CLAIMED signal, given
        to it at its next turn (docs/agents.md, "Nudges"). Refused (a RuleViolation, nothing written) for a
        signal that is not CLAIMED, or whose run is no runner's (a handler's takes no input)."""
        command = request(NudgeSignal, signal_id=signal_id, nudged_by=by, text=text)
        return _signal(self._parts.service.nudge_signal(command))

    def cancel_all(
        self,
        *,
        blackboard_id: str | None = None,
        posted_with: str | None = None,
        reason: str | None = None,
        by: str | None = None,
    ) -> Signals:
        """`blackboard cancel --blackboard ID` / `--correlation-id ID`: every open signal of the board, or
        posted with that correlation id (on that board, if given), and what waits on them."""
        command = request(
            CancelSignals,
            blackboard_id=blackboard_id,
            posted_with=posted_with,
            reason=reason,
            cancelled_by=by,
        )
        command = command.model_copy(update={"correlation_id": command.posted_with})  # checked as posted_with
        return Signals([documents.signal(s) for s in self._parts.service.cancel_signals(command)])

    def budget(
        self,
        blackboard_id: str,
        *,
        usd: float | None = None,
        tokens: int | None = None,
        by: str | None = None,
        reason: str | None = None,
    ) -> BoardBudget:
        """`blackboard budget BOARD`: with `usd` or `tokens`, the board's budget from now on (its signals
        wait once its runners have spent it; InvalidInput below what was already spent); the budget and
        what was spent, either way."""
        from blackboard.application.budgets import board_budget

        if usd is not None or tokens is not None:
            command = request(
                SetBudget, board=blackboard_id, usd=usd, tokens=tokens, set_by=by, reason=reason
            )
            self._parts.service.set_budget(command)
        shown = board_budget(self._parts.read_model, blackboard_id)
        return documents.board_budget(shown.blackboard_id, shown.budget, shown.spent, shown.reserved)

    def expire(self) -> Signals:
        """`blackboard expire`: signals past their timeouts moved to EXPIRED."""
        expired = self._parts.service.expire_signals(ExpireSignals())
        return Signals([documents.signal(s) for s in expired])

    def show(self, signal_id: str, *, at: int | None = None) -> Signal:
        """`blackboard show`: one signal, now or right after log position `at`."""
        found = self._parts.queries.get_signal(request(GetSignalById, signal_id=signal_id, at=at))
        return (
            documents.signal(found)
            if at is not None
            else documents.signals_now([found], self._parts.queries)[0]
        )

    def signals(
        self,
        *,
        status: str | None = None,
        signal_type: str | None = None,
        capability: str | Iterable[str] | None = None,
        blackboard_id: str | None = None,
        limit: int | None = None,
        at: int | None = None,
        labels: Iterable[str] = (),
    ) -> Signals:
        """`blackboard signals`: the read model, oldest first; `capability` one name or several (any of
        them, as a repeated `--capability`); `labels`: only signals carrying every one of them."""
        try:
            query = request(
                ListSignals,
                status=status,
                signal_type=signal_type,
                capabilities=names(capability, "capability"),
                blackboard_id=blackboard_id,
                limit=limit,
                at=at,
                labels=names(labels, "labels"),
            )
        except InvalidInput as bad:  # the argument's own name, as the call gave it
            field = bad.field.replace("capabilities", "capability", 1)
            raise InvalidInput(field, bad.rule) from None
        found = self._parts.queries.list_signals(query)
        return Signals(
            [documents.signal(s) for s in found]
            if at is not None
            else documents.signals_now(found, self._parts.queries)
        )

    def match(self, signal_id: str) -> Ranking:
        """`blackboard match`: the registry's agents ranked for the signal, best first."""
        ranked = self._parts.queries.match(request(GetSignalById, signal_id=signal_id))
        return Ranking(documents.ranking(ranked))

    def agents(self) -> Agents:
        """`blackboard agents`: every file the registry looked at, loaded or left out with the reason and the fix."""
        return documents.agents(self._parts.registry)

    def wait(self, signal_id: str, *, timeout: float | None = None) -> Signal:
        """`blackboard wait`: the signal once it is COMPLETED, FAILED, EXPIRED, UNCLAIMED or CANCELLED (check
        `status`: unlike the CLI's exit 3, an ending other than COMPLETED is returned, not raised);
        TimedOut after `timeout` seconds."""
        query = request(WaitForSignal, signal_id=signal_id, timeout=timeout)
        return _signal(self._parts.watcher.wait_for_signal(query.signal_id, query.timeout))

    def follow(
        self, signal_id: str, *, after: str | None = None, timeout: float | None = None
    ) -> Iterator[OutputLine | Signal]:
        """`blackboard show SIG --follow`, as an iterator: each line of the run's output as it comes (an
        `OutputLine`: `stream`, `text` as written, `line` readable, `cursor`), then the signal once it ended
        (the last item: check its `status`; an ending other than COMPLETED is returned, not raised, as
        `wait` returns it). `after`: a line's `cursor`, to go on after it. TimedOut after `timeout` seconds
        with the signal still open. Break out of the loop to stop."""
        query = request(
            FollowSignal, signal_id=signal_id, after=after, timeout=timeout
        )  # refused here, at once
        followed = self._parts.watcher.follow(query.signal_id, Cursor.parse(query.after), query.timeout)
        return (_signal(i) if isinstance(i, AgentSignal) else documents.output_line(i) for i in followed)

    def watch(
        self,
        signal_types: Iterable[str],
        *,
        blackboard_id: str | None = None,
        since: int | None = None,
        timeout: float | None = None,
        labels: Iterable[str] = (),
    ) -> WatchedSignal:
        """`blackboard watch --type`: the first signal of those types (carrying every one of `labels`) to
        complete after `since` (default: now), with the `position` to pass as `since` next time; TimedOut
        after `timeout` seconds."""
        query = request(
            WatchSignals,
            signal_types=names(signal_types, "signal_types"),
            blackboard_id=blackboard_id,
            labels=names(labels, "labels"),
            since=since,
            timeout=timeout,
        )
        if since is None:  # from now
            query = query.model_copy(update={"since": self._parts.store.last_position()})
        found, position = self._parts.watcher.watch(query, query.timeout)
        return documents.watched(found, position)

    def events(self, *, blackboard_id: str | None = None, since: int = 0, limit: int | None = None) -> Events:
        """`blackboard events`: the event log after position `since`, in order, with global positions."""
        query = request(ReadEvents, {"since": since}, limit=limit, blackboard_id=blackboard_id)
        return Events(
            documents.events(self._parts.queries.events(query.since, query.limit, query.blackboard_id))
        )

    def position(self) -> int:
        """The event log's last position now: a `since` from which a watch sees only what comes next."""
        return int(self._parts.store.last_position())


def _signal(item: Any) -> Signal:
    return documents.signal(item)
