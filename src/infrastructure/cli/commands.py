"""One function per command: argv values in, a use case called, an Output back. No business rules here."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from dependency_injector.wiring import Provide, inject

from blackboard.application.commands import (
    CancelSignal,
    CancelSignals,
    ClaimSignal,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    GetSignalById,
    PostSignal,
    RetrySignal,
    WaitForSignal,
    WatchSignals,
)
from blackboard.domain.errors import InvalidInput, RuleViolation
from blackboard.domain.signals import SignalStatus
from blackboard.infrastructure import documents
from blackboard.infrastructure.agents.outcome import checked_artifact
from blackboard.infrastructure.cli import render, typed
from blackboard.infrastructure.cli.json_input import parse_json
from blackboard.infrastructure.cli.render import Output
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import BlackboardSettings, worker_options
from blackboard.infrastructure.interfaces.when import parse_duration, parse_when

if TYPE_CHECKING:
    from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry

Lazy = Callable[[], Any]  # a provider: called only once the input has been validated


class EndedBadly(RuleViolation):
    """A wait found what it waited for ended otherwise than COMPLETED (`wait`: the signal FAILED, EXPIRED,
    UNCLAIMED or CANCELLED; `flow status --wait`: a step not COMPLETED): exit 3, with what ended printed."""

    def __init__(self, output: Output, what: str, ended: str) -> None:
        super().__init__(f"the {what} ended {ended}")
        self.output = output


@inject
def post(
    args: argparse.Namespace,
    service: Lazy = Provide[Container.service.provider],
    registry: Lazy = Provide[Container.agent_registry.provider],
    queries: Lazy = Provide[Container.queries.provider],
) -> Output | None:
    command = PostSignal(
        signal_type=args.signal_type,
        ps_id=args.ps_id,
        entry_id=args.entry_id,
        topic=args.topic,
        prompt=args.prompt,
        context=_json_object(args.context, "--context"),
        target_capabilities=tuple(args.capabilities),
        **({} if args.posted_by is None else {"posted_by": args.posted_by}),  # left out: the model's default
        blackboard_id=args.blackboard,
        after=tuple(args.after),
        dedupe_key=args.key,
        correlation_id=args.correlation_id,
        read_keys=tuple(args.read_keys),
        write_keys=tuple(args.write_keys),
        budget_usd=args.budget_usd,
        **({} if args.priority is None else {"priority": args.priority}),
        not_before=None if args.not_before is None else parse_when(args.not_before, _now(), "--not-before"),
        max_attempts=args.max_attempts,
        gate=args.gate,
        timeout_s=None
        if args.timeout_s is None
        else parse_duration(args.timeout_s, typed(args, "timeout_s")),
        labels=tuple(args.labels),
    )
    posted = service().post_signal(command)
    data = documents.jsonable(documents.posted(posted, registry(), queries()))
    for warning in data.get("warnings", ()):  # in the JSON document, and said on stderr
        print(f"blackboard: warning: {warning}", file=sys.stderr)
    if args.quiet:  # `SIG=$(blackboard post -q ...)`: the id alone, whatever the output format
        _print_id(posted)
        return None
    return Output(data, render.signal_text(posted, None, data.get("waiting")))


@inject
def claim(args: argparse.Namespace, service: Lazy = Provide[Container.service.provider]) -> Output:
    command = ClaimSignal(signal_id=args.signal_id, agent_id=args.agent, token=args.token)
    return render.signal(service().claim_signal(command))


@inject
def complete(
    args: argparse.Namespace,
    service: Lazy = Provide[Container.service.provider],
    config: BlackboardSettings = Provide[Container.config],
) -> Output:
    command = CompleteSignal(
        signal_id=args.signal_id,
        agent_id=args.agent,
        artifact_path=args.artifact_path,
        knowledge_items=tuple(args.knowledge_items),
        token=args.token,
    )
    checked_artifact(command.artifact_path, config.artifacts_dir, typed(args, "artifact_path"))
    return render.signal(service().complete_signal(command))


@inject
def fail(
    args: argparse.Namespace,
    service: Lazy = Provide[Container.service.provider],
    queries: Lazy = Provide[Container.queries.provider],
) -> Output:
    command = FailSignal(
        signal_id=args.signal_id,
        agent_id=args.agent,
        error=args.error,
        token=args.token,
        retry_after=args.retry_after,
    )
    return _as_shown(service().fail_signal(command), queries())  # with attempts left it is POSTED again


@inject
def retry(
    args: argparse.Namespace,
    service: Lazy = Provide[Container.service.provider],
    queries: Lazy = Provide[Container.queries.provider],
) -> Output | None:
    if args.flow is not None or args.signal_id is None:
        from blackboard.infrastructure.cli.flows.commands import retry_flow

        return retry_flow(args, service(), queries())
    command = RetrySignal(signal_id=args.signal_id, posted_by=args.posted_by, blackboard_id=args.blackboard)
    retried = service().retry_signal(command)
    if args.quiet:  # `NEW=$(blackboard retry -q SIG)`, as `post -q`
        _print_id(retried)
        return None
    return _as_shown(retried, queries())


def _print_id(signal: Any) -> None:
    """`-q`: the new signal's id alone on stdout, whatever the output format; on stderr, that it ended at
    once (UNCLAIMED: no agent fits it; EXPIRED: an upstream had ended badly), which the id alone would hide."""
    if signal.status in (SignalStatus.UNCLAIMED, SignalStatus.EXPIRED):
        why = signal.result.error if signal.result and signal.result.error else "no reason given"
        print(
            f"blackboard: warning: {signal.signal_id} ended {signal.status} at once: {why}", file=sys.stderr
        )
    print(signal.signal_id)


def _as_shown(signal: Any, queries: Any) -> Output:
    """A signal a command left POSTED, as `show` prints it: waiting for a worker that fits, if none is live."""
    return render.signal(signal, None, queries.waiting_for_workers([signal]))


@inject
def cancel(args: argparse.Namespace, service: Lazy = Provide[Container.service.provider]) -> Output:
    reason = {} if args.reason is None else {"reason": args.reason}
    if args.flow is not None:
        from blackboard.infrastructure.cli.flows.commands import cancel_flow

        return cancel_flow(args, service(), reason)
    if args.signal_id is not None:
        if args.blackboard is not None or args.correlation_id is not None:
            raise InvalidInput(
                "SIG", "give a signal, or --blackboard/--correlation-id to cancel in bulk, not both"
            )
        command = CancelSignal(signal_id=args.signal_id, cancelled_by=args.by, **reason)
        return render.signal(service().cancel_signal(command))
    if args.blackboard is None and args.correlation_id is None:
        raise InvalidInput("SIG", "give the signal to cancel, or --blackboard ID or --correlation-id ID")
    bulk = CancelSignals(
        blackboard_id=args.blackboard,
        posted_with=args.correlation_id,
        correlation_id=args.correlation_id,
        cancelled_by=args.by,
        **reason,
    )
    return render.signals(service().cancel_signals(bulk), empty="nothing to cancel")


WEBHOOK_VARIABLES = ("BLACKBOARD_WEBHOOKS", "BLACKBOARD_WEBHOOK_SECRET")  # read into the settings already


@inject
def worker(
    args: argparse.Namespace,
    config: BlackboardSettings = Provide[Container.config],
    new_worker: Lazy = Provide[Container.worker.provider],
    container: Container = Provide[Container],
) -> Output:
    import dataclasses
    import logging

    from blackboard.infrastructure.cli.runner_options import run_options
    from blackboard.infrastructure.mcp.binding import tools_factory  # bound board tools: model API runners'

    options = dataclasses.replace(
        worker_options(config, args.agent, args.once, args.board), run=run_options(args, config)
    )
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format=f"%(asctime)s.%(msecs)03d {args.agent.replace('%', '%%')}[%(process)d] %(message)s",
        datefmt="%H:%M:%S",
    )
    from blackboard.application.callers import Act, refusal
    from blackboard.infrastructure.keeper import identity

    caller = identity.process_caller()
    if (refused := refusal(caller, Act.CLAIM, f"run a worker of {args.agent}")) is not None:
        raise refused  # a worker started inside an agent's run could claim nothing: say so now (exit 3)
    # an entrypoint runs in this process: it (and what it starts) reaches the board as a command's does
    os.environ.update(options.handler_env)
    for private in WEBHOOK_VARIABLES:  # the worker announces gates itself: its runs never see the secret
        os.environ.pop(private, None)
    # the worker claims and records as whoever started it; what else runs in its process, or below it, is a run
    service = container.service().acting(caller)
    with identity.hosting(args.agent):
        running = new_worker(options=options, board_tools=tools_factory(container), service=service)
        running.install_signal_handlers()
        if config.webhooks and (courier := container.webhooks()) is not None:
            courier.start()  # announces gates while the worker runs (docs/webhooks.md), off its claim loop
        running.run()
    return Output(
        {"agent": args.agent, "handled": running.handled},
        f"worker {args.agent} handled {running.handled} signal(s)",
    )


@inject
def match(args: argparse.Namespace, queries: Lazy = Provide[Container.queries.provider]) -> Output:
    query = GetSignalById(signal_id=args.signal_id)
    return render.ranking(args.signal_id, queries().match(query))


@inject
def agents(
    args: argparse.Namespace,
    registry: FrontmatterAgentRegistry = Provide[Container.agent_registry],
    config: BlackboardSettings = Provide[Container.config],
) -> Output:
    from blackboard.infrastructure.cli.agents_report import report

    if config.json:  # the text lists them; a script reading JSON from stdout hears of them here too
        for problem in registry.problems():
            print(f"blackboard: warning: {problem}", file=sys.stderr)
    return report(registry)


@inject
def watch(
    args: argparse.Namespace,
    watcher: Lazy = Provide[Container.watcher.provider],
    store: Lazy = Provide[Container.event_store.provider],
) -> Output:
    if args.topic is not None and args.labels:
        raise InvalidInput("--label", "goes with --type: signals carry labels, entries do not")
    if args.topic is not None:  # entries: the knowledge side, imported (and wired) only for it
        from blackboard.infrastructure.cli.knowledge.commands import watch_topic

        return watch_topic(args)
    if not args.signal_types:
        raise InvalidInput(
            "--type", "is required: give --type T to watch signals, or --topic T to watch entries"
        )
    if args.follow:
        raise InvalidInput("--follow", "goes with --topic: a signal watch prints one signal and its position")
    query = WatchSignals(
        signal_types=tuple(args.signal_types),
        blackboard_id=args.blackboard,
        labels=tuple(args.labels),
        **_given(since=args.since, timeout=args.timeout),
    )
    if args.since is None:  # from now, taken before waiting
        query = query.model_copy(update={"since": store().last_position()})
    found, position = watcher().watch(query, query.timeout)
    # the completion's position: a caller looping with --since it misses nothing, not even a completion
    # that landed while it was printing
    print(f"position {position}", file=sys.stderr)
    return Output(documents.jsonable(documents.watched(found, position)), render.signal_text(found))


@inject
def wait(args: argparse.Namespace, watcher: Lazy = Provide[Container.watcher.provider]) -> Output:
    query = WaitForSignal(signal_id=args.signal_id, **_given(timeout=args.timeout))
    ended = watcher().wait_for_signal(query.signal_id, query.timeout)
    if ended.status is not SignalStatus.COMPLETED:
        raise EndedBadly(render.signal(ended), "signal", ended.status)
    return render.signal(ended)


@inject
def expire(args: argparse.Namespace, service: Lazy = Provide[Container.service.provider]) -> Output:
    return render.signals(service().expire_signals(ExpireSignals()), empty="nothing to expire")


@inject
def db_upgrade(args: argparse.Namespace, engine: Lazy = Provide[Container.engine.provider]) -> Output:
    from blackboard.infrastructure.persistence.schema import current_revision

    revision = current_revision(engine())  # opening the engine upgraded it
    return Output({"revision": revision}, f"schema at revision {revision}")


@inject
def projection_rebuild(
    args: argparse.Namespace, projector: Lazy = Provide[Container.projector.provider]
) -> Output:
    rebuilder = projector()
    if sys.stderr.isatty():
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("replaying events", total=None)
            folded = rebuilder.rebuild(
                args.resume, lambda done, last: bar.update(task, completed=done, total=last)
            )
    else:
        folded = rebuilder.rebuild(args.resume)
    return Output({"events": folded}, f"read model rebuilt: {folded} events replayed")


def _now() -> datetime:
    return datetime.now(UTC)


def _json_object(raw: str | None, option: str) -> Any:
    """The JSON given (the command model says it must be an object, in the words it says it everywhere)."""
    return {} if raw is None else parse_json(raw, option)


def _given(**options: Any) -> dict[str, Any]:
    """The options given (None: left out, the model's default applies), as the command model takes them."""
    return {name: value for name, value in options.items() if value is not None}
