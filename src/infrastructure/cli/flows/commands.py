"""`blackboard flow run FILE` and `flow status FLOW`, and what `cancel --flow` and `retry --flow` print: a flow
step by step (docs/flows.md)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from dependency_injector.wiring import Provide, inject
from pydantic import ValidationError

from blackboard.application.flows.commands import CancelFlow, GetFlow, RetryFlow, RunFlow, WaitForFlow
from blackboard.application.flows.queries import until_ended
from blackboard.domain.errors import InvalidInput
from blackboard.domain.flows import FlowProgress, progress
from blackboard.domain.signals import AgentSignal, SignalStatus
from blackboard.infrastructure import documents
from blackboard.infrastructure.cli import OPTIONS, render
from blackboard.infrastructure.cli.commands import EndedBadly
from blackboard.infrastructure.cli.render import Output
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.errors.input import invalid_input
from blackboard.infrastructure.interfaces.waiting import WORKER_THAT_FITS

Lazy = Callable[[], Any]


@inject
def flow_run(
    args: argparse.Namespace,
    service: Lazy = Provide[Container.service.provider],
    queries: Lazy = Provide[Container.queries.provider],
) -> Output | None:
    from blackboard.infrastructure.agents.flow_files import read_flow_file

    spec = read_flow_file(args.file)
    command = RunFlow(
        blackboard_id=args.blackboard,
        flow=spec,
        flow_id=args.flow_id,
        **({} if args.posted_by is None else {"posted_by": args.posted_by}),
        correlation_id=args.correlation_id,
    )
    posted = service().run_flow(command)
    shown = progress(posted[0].flow_id or "", command.blackboard_id, posted)
    if args.quiet:  # `FLOW=$(blackboard flow run -q ...)`: the id alone, whatever the output format
        print(shown.flow_id)
        return None
    return flow_output(shown, queries(), f"flow {shown.flow_id} run on {shown.blackboard_id}: ")


@inject
def flow_status(
    args: argparse.Namespace,
    flows: Lazy = Provide[Container.flows.provider],
    queries: Lazy = Provide[Container.queries.provider],
    watcher: Lazy = Provide[Container.watcher.provider],
) -> Output | None:
    if args.timeout is not None and not args.wait:
        raise InvalidInput("--timeout", "goes with --wait: how long to wait for the flow to end")
    if args.quiet and args.step is None:
        raise InvalidInput("--quiet", "goes with --step: it prints that step's signal id")
    given = {"blackboard_id": args.blackboard, "flow_id": args.flow_id}
    if not args.wait:
        shown = flows().flow(command(GetFlow, {"flow_id": "FLOW"}, **given))
    else:
        timeout = {} if args.timeout is None else {"timeout": args.timeout}
        shown = until_ended(flows(), watcher(), command(WaitForFlow, {"flow_id": "FLOW"}, **given, **timeout))
    if args.step is not None:
        return _step(shown, args.step, args.quiet, queries())
    output = flow_output(shown, queries())
    if args.wait and shown.state != "completed":
        raise EndedBadly(output, "flow", shown.state)
    return output


def _step(shown: FlowProgress, step_id: str, quiet: bool, queries: Any) -> Output | None:
    """`--step`: that step's latest signal, as `show` prints it; `-q`, its id alone."""
    step = next((s for s in shown.steps if s.step_id == step_id), None)
    if step is None:
        known = ", ".join(s.step_id for s in shown.steps)
        raise InvalidInput("--step", f"flow {shown.flow_id} has no step {step_id}; its steps are {known}")
    if quiet:
        print(step.signal.signal_id)
        return None
    return render.signal(step.signal, None, queries.waiting_for_workers([step.signal]))


def flow_output(shown: FlowProgress, queries: Any, head: str = "") -> Output:
    """The flow's document, and its text: a line for the flow, a line for each step."""
    waiting = queries.waiting_for_workers([s.signal for s in shown.steps])
    document = documents.jsonable(documents.flow(shown, waiting))
    return Output(document, flow_text(shown, waiting, head))


def flow_text(shown: FlowProgress, waiting: set[str] | frozenset[str] = frozenset(), head: str = "") -> str:
    counts = ", ".join(f"{n} {status.lower()}" for status, n in shown.counts.items())
    lines = [f"{head or f'flow {shown.flow_id} on {shown.blackboard_id}: '}{shown.state} ({counts})"]
    width = max(len(s.step_id) for s in shown.steps)
    for step in shown.steps:
        s = step.signal
        lines.append(
            f"  {step.step_id:<{width}}  {s.signal_id}  {s.status:<9}  {_why(step.signal, step.waiting_for, waiting)}"
            + (f" ({step.tries} tries)" if step.tries > 1 else "")
        )
    return "\n".join(lines)


def _why(s: AgentSignal, upstream_steps: Sequence[str], waiting: set[str] | frozenset[str]) -> str:
    """What the step is at: who holds or held it, what it waits for, or why it ended."""
    if s.status is SignalStatus.POSTED:
        if upstream_steps:
            return f"waits for {', '.join(upstream_steps)}"
        if s.gate:
            return "a gate: waits for a person (blackboard approve / reject)"
        if s.signal_id in waiting:
            return f"waiting for {WORKER_THAT_FITS} ({', '.join(s.target_capabilities)})"
        return f"claimable ({', '.join(s.target_capabilities)})"
    if s.status is SignalStatus.CLAIMED:
        return f"by {s.claimed_by}"
    if s.status is SignalStatus.COMPLETED:
        return f"approved by {s.decided_by}" if s.gate and s.decided_by else f"by {s.claimed_by}"
    return s.result.error if s.result and s.result.error else ""


def command(model: Any, names: dict[str, str], **given: Any) -> Any:
    """`model(**given)`, a refused value named as the user typed it (`names` over the CLI's OPTIONS)."""
    try:
        return model(**given)
    except ValidationError as exc:
        raise invalid_input(exc, {**OPTIONS, **names}) from None


def cancel_flow(args: argparse.Namespace, service: Any, reason: dict[str, str]) -> Output:
    """`cancel --flow FLOW --blackboard ID`: every open step of the flow, and what waits on them."""
    if args.signal_id is not None or args.correlation_id is not None:
        raise InvalidInput("--flow", "give a signal, a correlation id or a flow to cancel, not several")
    given = {"blackboard_id": _board(args), "flow_id": args.flow, "cancelled_by": args.by, **reason}
    cancelled = service.cancel_flow(command(CancelFlow, {"flow_id": "--flow"}, **given))
    return render.signals(cancelled, empty=f"nothing to cancel: no step of {args.flow} is open")


def retry_flow(args: argparse.Namespace, service: Any, queries: Any) -> Output:
    """`retry --flow FLOW --blackboard ID`: the flow's failed and expired steps, posted again."""
    if args.flow is None:
        raise InvalidInput("SIG", "give the signal to retry, or --flow FLOW --blackboard ID")
    if args.signal_id is not None:
        raise InvalidInput("--flow", "give a signal or a flow to retry, not both")
    given = {"blackboard_id": _board(args), "flow_id": args.flow, "posted_by": args.posted_by}
    retried = service.retry_flow(command(RetryFlow, {"flow_id": "--flow"}, **given))
    return render.signals(retried, waiting=queries.waiting_for_workers(retried))


def _board(args: argparse.Namespace) -> str:
    if args.blackboard is None:
        raise InvalidInput("--blackboard", "is required with --flow: the flow's board")
    return str(args.blackboard)
