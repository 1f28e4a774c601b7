"""The Python API's calls on flows (docs/flows.md): run a flow's steps on a board, see how it stands (or wait
for it to end), cancel it, retry its failed steps; each the CLI command of the same name."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from blackboard.application.flows.commands import CancelFlow, GetFlow, RetryFlow, RunFlow, WaitForFlow
from blackboard.application.flows.queries import until_ended
from blackboard.domain.flows import progress
from blackboard.infrastructure import documents
from blackboard.infrastructure.api.base import Base, request
from blackboard.infrastructure.documents import Flow, Signals


class FlowCalls(Base):
    def flow_run(
        self,
        flow: str | os.PathLike[str] | Mapping[str, Any],
        *,
        blackboard_id: str,
        flow_id: str | None = None,
        posted_by: str | None = None,
        correlation_id: str | None = None,
    ) -> Flow:
        """`blackboard flow run FILE --blackboard ID`: every step of the flow posted in one transaction (all
        or none), each after the steps it names. `flow`: a flow file's path, or what its front matter holds
        as a mapping (`name`, `description`, `steps`, and `body`). InvalidInput naming each problem
        (`steps[1].after`), nothing written; Refused when `flow_id` is already on the board."""
        from blackboard.infrastructure.agents.flow_files import flow_of, read_flow_file

        spec = flow_of(flow, "flow") if isinstance(flow, Mapping) else read_flow_file(os.fspath(flow))
        command = request(
            RunFlow,
            blackboard_id=blackboard_id,
            flow=spec,
            flow_id=flow_id,
            posted_by=posted_by,
            correlation_id=correlation_id,
        )
        posted = self._parts.service.run_flow(command)
        return self._flow(progress(posted[0].flow_id or "", command.blackboard_id, posted))

    def flow_status(
        self, flow_id: str, *, blackboard_id: str, wait: bool = False, timeout: float | None = None
    ) -> Flow:
        """`blackboard flow status FLOW --blackboard ID`: the flow step by step. `wait`: once no step is open
        (check `state`: unlike the CLI's exit 3, an ending other than completed is returned, not raised);
        TimedOut after `timeout` seconds. NotFound for no such flow."""
        if not wait:
            query = request(GetFlow, blackboard_id=blackboard_id, flow_id=flow_id)
            return self._flow(self._parts.flows.flow(query))
        waited = request(WaitForFlow, blackboard_id=blackboard_id, flow_id=flow_id, timeout=timeout)
        return self._flow(until_ended(self._parts.flows, self._parts.watcher, waited))

    def cancel_flow(
        self, flow_id: str, *, blackboard_id: str, reason: str | None = None, by: str | None = None
    ) -> Signals:
        """`blackboard cancel --flow FLOW --blackboard ID`: every open step of the flow is CANCELLED, with
        what waits on them; the signals cancelled ([] when none was open)."""
        command = request(
            CancelFlow, blackboard_id=blackboard_id, flow_id=flow_id, reason=reason, cancelled_by=by
        )
        return Signals([documents.signal(s) for s in self._parts.service.cancel_flow(command)])

    def retry_flow(self, flow_id: str, *, blackboard_id: str, posted_by: str | None = None) -> Signals:
        """`blackboard retry --flow FLOW --blackboard ID`: each step that ended FAILED or EXPIRED posted
        again, in step order, after the retries of the steps it comes after; Refused when none did."""
        command = request(RetryFlow, blackboard_id=blackboard_id, flow_id=flow_id, posted_by=posted_by)
        return Signals(documents.signals_now(self._parts.service.retry_flow(command), self._parts.queries))

    def _flow(self, shown: Any) -> Flow:
        waiting = self._parts.queries.waiting_for_workers([s.signal for s in shown.steps])
        return documents.flow(shown, waiting)
