"""How flows stand, read from the signal read model (never a replay): one flow step by step (`flow status`),
or every flow of the boards counted by status (`status`, `/metrics`)."""

from __future__ import annotations

import copy
import time
from typing import TYPE_CHECKING

from blackboard.application.errors import WaitTimedOut
from blackboard.application.flows.commands import GetFlow, WaitForFlow
from blackboard.application.ports import EventStore, SignalReadModel
from blackboard.application.projection import Projector
from blackboard.domain.flows import FlowCounts, FlowNotFound, FlowProgress, progress

if TYPE_CHECKING:
    from blackboard.application.authority import Authority
    from blackboard.application.callers import Caller
    from blackboard.application.watching import Watcher


class FlowQueries:
    def __init__(
        self, store: EventStore, read_model: SignalReadModel, authority: Authority | None = None
    ) -> None:
        self._read_model = read_model
        self._projector = Projector(store, read_model)
        self._authority = authority  # a caller confined to a board sees no other board's flows (reach)

    def acting(self, caller: Caller) -> FlowQueries:
        """These queries for one caller, whoever the process is: an MCP session's."""
        clone = copy.copy(self)
        if self._authority is not None:
            clone._authority = self._authority.acting(caller)
        return clone

    def _reach(self, blackboard_id: str | None) -> str | None:
        return blackboard_id if self._authority is None else self._authority.reach(blackboard_id)

    def flow(self, query: GetFlow, catch_up: bool = True) -> FlowProgress:
        """The flow's steps in order, each at its latest signal; FlowNotFound (exit 4) for no such flow."""
        board = self._reach(query.blackboard_id) or query.blackboard_id
        if catch_up:
            self._projector.catch_up()
        signals = self._read_model.flow_signals(board, query.flow_id)
        if not signals:
            raise FlowNotFound(query.flow_id, board)
        return progress(query.flow_id, board, signals)

    def flows(self, blackboard_id: str | None = None, catch_up: bool = True) -> list[FlowCounts]:
        """Every flow of the boards (or of the one named), its steps counted by status; by board, newest first."""
        board = self._reach(blackboard_id)
        if catch_up:
            self._projector.catch_up()
        return self._read_model.flow_counts(board)


def until_ended(flows: FlowQueries, watcher: Watcher, query: WaitForFlow) -> FlowProgress:
    """The flow once no step of it is open (POSTED or CLAIMED), waiting for its last open step in turn (a
    step's end, or a retry's new steps, may leave others open: it looks again). WaitTimedOut, naming the
    flow, once `query.timeout` seconds have passed first."""
    until = None if query.timeout is None else time.monotonic() + query.timeout
    while True:
        shown = flows.flow(query)
        open_ = [s for s in shown.steps if not s.status.is_final]
        if not open_:
            return shown
        left = None if until is None else until - time.monotonic()
        try:
            if left is not None and left <= 0:
                raise WaitTimedOut("", 0)
            watcher.wait_for_signal(open_[-1].signal.signal_id, left)
        except WaitTimedOut:
            raise WaitTimedOut(f"flow {query.flow_id} to end", query.timeout or 0) from None
