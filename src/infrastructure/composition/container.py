"""The composition root: the one place that names every adapter and builds the service from configuration.

Importing it is light on purpose (dependency-injector and the settings): every CLI call imports it before
it knows what it runs, so each provider builds through a function that imports its adapter when it is
first called, and a command pays only for the adapters it uses (`blackboard show` builds no service:
tests/integration/test_command_imports.py)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dependency_injector import containers, providers

from blackboard.infrastructure.composition.held import held_back
from blackboard.infrastructure.composition.settings import (
    BlackboardSettings,
    service_settings,
    store_settings,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from sqlalchemy import Engine

    from blackboard.application.authority import Authority
    from blackboard.application.dispatcher import EventDispatcher
    from blackboard.application.flows.queries import FlowQueries
    from blackboard.application.knowledge.queries import KnowledgeQueries
    from blackboard.application.knowledge.service import KnowledgeService
    from blackboard.application.output import RunOutputStore
    from blackboard.application.ports import (
        AgentRegistry,
        Clock,
        EventStore,
        IdGenerator,
        LogNotifier,
        SignalReadModel,
        Tracer,
        UnitOfWork,
    )
    from blackboard.application.presence import PresenceStore
    from blackboard.application.projection import Projector
    from blackboard.application.queries import BlackboardQueries
    from blackboard.application.service import BlackboardService, Settings
    from blackboard.application.solve.solver import SolveLog, SolveProcesses, Solver
    from blackboard.application.status import StatusQueries
    from blackboard.application.transfer import BoardTransfer
    from blackboard.application.watching import Watcher
    from blackboard.domain.events import BlackboardEvent
    from blackboard.domain.rates import RateLimit
    from blackboard.domain.signals import AgentSignal
    from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry
    from blackboard.infrastructure.composition.prices import PriceTable
    from blackboard.infrastructure.composition.rate_limits import RateLimitTable
    from blackboard.infrastructure.persistence.engine import StoreSettings
    from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
    from blackboard.infrastructure.persistence.knowledge.read_model import SqlEntryReadModel
    from blackboard.infrastructure.persistence.presence import SqlPresenceStore
    from blackboard.infrastructure.persistence.rate_windows import SqlRateWindows
    from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel
    from blackboard.infrastructure.persistence.run_output import SqlRunOutputStore
    from blackboard.infrastructure.persistence.unit_of_work import SqlUnitOfWork
    from blackboard.infrastructure.webhooks.courier import Courier
    from blackboard.infrastructure.worker import Worker, WorkerOptions


def agent_registry(
    agents_dir: str,
    default_threshold: float,
    artifacts_dir: str = "",
    prices: PriceTable | None = None,
    rate_limits: RateLimitTable | None = None,
) -> FrontmatterAgentRegistry:
    """Imported on first use: frontmatter and YAML cost a command that needs no agent ~40 ms. The
    artifacts folder is never read as agents (handlers write Markdown there). The configured prices are
    this process's from here on (infrastructure/composition/prices.py): the claims' decisions and the runners price
    with them; a file naming no model is decided with BLACKBOARD_MODEL's (a worker's --model: its own)."""
    from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry
    from blackboard.infrastructure.agents.scan import folders_from
    from blackboard.infrastructure.composition import prices as configured_prices

    if prices is not None:
        configured_prices.use(prices)
    artifacts = [Path(artifacts_dir).absolute()] if artifacts_dir else []
    return FrontmatterAgentRegistry(
        folders_from(agents_dir),
        default_threshold,
        artifacts,
        os.environ.get("BLACKBOARD_MODEL") or None,
        _rate_limits_by_model(rate_limits),
    )


def _rate_limits_by_model(table: RateLimitTable | None) -> dict[str, RateLimit]:
    """The configured rate limits per model, as the domain's (domain/rates.py)."""
    from blackboard.domain.rates import RateLimit

    return {
        model: RateLimit(
            key=limit.key,
            requests_per_minute=limit.requests_per_minute,
            tokens_per_minute=limit.tokens_per_minute,
        )
        for model, limit in (table.entries if table is not None else ())
    }


def build_worker(
    options: WorkerOptions,
    service: BlackboardService,
    queries: BlackboardQueries,
    agents: FrontmatterAgentRegistry,
    store: EventStore,
    notifier: LogNotifier,
    settings: Settings,
    presence: PresenceStore | None = None,
    clock: Clock | None = None,
    board_tools: Any = None,
    output: RunOutputStore | None = None,
    rate_windows: Any = None,
) -> Worker:
    """Imported on first use, like the registry: handlers, lanes and entrypoints serve no other command.
    `board_tools`: the board's tools bound to a claim (mcp/binding.py), for the model API runners."""
    from blackboard.infrastructure.worker import Worker

    agents.use_run_options(options.run.runner, options.run.model)  # its claims decided as it runs them
    return Worker(
        options,
        service,
        queries,
        agents.definition,
        agents.get_all,
        store,
        notifier,
        settings.claim_threshold,
        presence,
        clock,
        board_tools,
        output,
        rate_windows,
    )


def log_notifier(
    engine: Engine, store: SqlAlchemyEventStore, interval: float, dispatcher: EventDispatcher
) -> LogNotifier:
    """LISTEN/NOTIFY on PostgreSQL; polling the log on SQLite, which has no notifications. Either is
    told of what this process stores (a worker's own outcomes, a command of an embedding program),
    so its waiters need not wait for the next poll or notification."""
    from blackboard.infrastructure.persistence.dialect import dialect_of

    notifier = dialect_of(engine).notifier(engine, store, interval)
    dispatcher.register(None, notifier.appended)
    return notifier


def landing_dispatcher(
    uow: UnitOfWork,
    clock: Clock,
    webhooks: tuple[str, ...] = (),
    courier: Callable[[], Courier | None] | None = None,
) -> EventDispatcher:
    """The dispatcher, with a completion's knowledge items landing on the board as entries right
    after the completion commits (docs/architecture.md, "Results land on the board"), whichever
    process completes it: the CLI, a worker, an embedding program. With webhooks configured, a commit
    that may open or end a gate pokes the courier (docs/webhooks.md), built at the first such commit."""
    from blackboard.application.dispatcher import EventDispatcher
    from blackboard.domain.events import AgentSignalCompleted

    dispatcher = EventDispatcher()
    if webhooks and courier is not None:
        from blackboard.infrastructure.webhooks.courier import POKED_BY

        def poke(event: BlackboardEvent) -> None:
            made = courier()
            if made is not None:
                made.poke(event)

        for kind in POKED_BY:
            dispatcher.register(kind, poke)
    landing: list[KnowledgeService] = []

    def land(event: BlackboardEvent) -> None:
        if not (isinstance(event, AgentSignalCompleted) and event.result.knowledge_items):
            return
        if not landing:  # built at the first completion: other commands import none of the knowledge side
            landing.append(knowledge_service(uow, dispatcher, clock))
        landing[0].land_results(event)

    dispatcher.register(AgentSignalCompleted, land)
    return dispatcher


def webhook_courier(config: BlackboardSettings, engine: Engine, clock: Clock) -> Courier | None:
    """The courier announcing gates to BLACKBOARD_WEBHOOKS (docs/webhooks.md); None when none is configured."""
    if not config.webhooks or not config.webhook_secret:
        return None
    from blackboard.infrastructure.persistence.webhooks import SqlWebhookOutbox
    from blackboard.infrastructure.webhooks.courier import Courier, Setup

    setup = Setup(
        urls=config.webhooks,
        secret=config.webhook_secret,
        ui_url=config.ui_url,
        timeout=config.webhook_timeout,
        first_wait=config.webhook_retry,
        give_up_after=config.webhook_give_up,
    )
    return Courier(SqlWebhookOutbox(engine), setup, clock)


def knowledge_service(
    uow: UnitOfWork,
    publisher: EventDispatcher,
    clock: Clock,
    settings: Settings | None = None,
    authority: Authority | None = None,
) -> KnowledgeService:
    """Imported on first use, like the registry: a command on signals needs none of the knowledge side.
    `settings` give the claim timeout that key permissions check leases against."""
    from blackboard.application.knowledge.service import KnowledgeService

    return KnowledgeService(uow, publisher, clock, settings.claim_timeout if settings else None, authority)


def authority(signals: SignalReadModel, clock: Clock, settings: Settings) -> Authority:
    """Who may do what (application/callers.py), for whoever calls now: the run this process (or the
    entrypoint running in this context) belongs to, else a person (infrastructure/keeper/identity.py)."""
    from blackboard.application.authority import Authority
    from blackboard.infrastructure.keeper.identity import current_caller

    return Authority(current_caller, signals, clock, settings.claim_timeout)


def knowledge_queries(
    entries: SqlEntryReadModel,
    signals: SqlSignalReadModel,
    projector: Projector,
    clock: Clock | None = None,
    settings: Settings | None = None,
    authority: Authority | None = None,
) -> KnowledgeQueries:
    from blackboard.application.knowledge.queries import KnowledgeQueries

    timeout = settings.claim_timeout if settings else None
    return KnowledgeQueries(entries, signals, projector, clock, timeout, authority)


def board_transfer(
    store: EventStore, projector: Projector, settings: Settings, authority: Authority | None = None
) -> BoardTransfer:
    """Imported on first use: only export and import need it."""
    from blackboard.application.transfer import BoardTransfer
    from blackboard.infrastructure.persistence.spill import Spill

    return BoardTransfer(store, projector, settings.claim_timeout, Spill, authority)


def status_queries(
    signals: SqlSignalReadModel,
    entries: SqlEntryReadModel,
    projector: Projector,
    clock: Clock,
    settings: Settings,
    presence: PresenceStore | None = None,
    registry: Callable[[], FrontmatterAgentRegistry] | None = None,
    queries: Callable[[], BlackboardQueries] | None = None,
    rates: SqlRateWindows | None = None,
) -> StatusQueries:
    """Imported on first use: `status`, and the lists that check a board exists. `registry`: the agents'
    provider, read only when a live worker may fit a signal that waits (scored as a claim is)."""
    from blackboard.application.scoring import Scorer
    from blackboard.application.status import StatusQueries

    def scorer() -> Scorer:
        assert registry is not None
        return Scorer(registry())

    return StatusQueries(
        signals,
        entries,
        projector,
        clock,
        settings.claim_timeout,
        presence,
        scorer if registry is not None else None,
        settings.claim_threshold,
        _rate_limited(queries, registry, rates, clock, settings.claim_threshold)
        if queries is not None and registry is not None and rates is not None
        else None,
    )


def _rate_limited(
    queries: Callable[[], BlackboardQueries],
    registry: Callable[[], AgentRegistry],
    rates: SqlRateWindows,
    clock: Clock,
    threshold: float,
) -> Callable[[str | None], dict[str, dict[str, int]]]:
    """Per board, the signals each rate limit holds, as `next` plans them: one read of the windows, and the
    plan only when one of them has no room now."""

    def held(blackboard_id: str | None) -> dict[str, dict[str, int]]:
        from blackboard.application.ranking import Controller, rate_limited

        windows, now = rates.windows(), clock.now()
        if not any(w.holds(now) > 0 for w in windows):
            return {}
        plan = Controller(queries(), registry(), threshold, rates=lambda: windows).next(
            blackboard_id, None, now
        )
        return rate_limited(plan)

    return held


def solve_log(engine: Engine) -> SolveLog:
    """Imported on first use: only `solve` (and its Python API) read and write solve runs."""
    from blackboard.infrastructure.persistence.solve.log import SqlSolveLog

    return SqlSolveLog(engine)


def solve_processes(engine: Engine) -> SolveProcesses:
    """Imported on first use: the processes driving solve runs (`orphaned` in `solve --status`)."""
    from blackboard.infrastructure.persistence.solve.processes import SqlSolveProcesses

    return SqlSolveProcesses(engine)


def solver(
    service: BlackboardService,
    knowledge: KnowledgeService,
    queries: KnowledgeQueries,
    watcher: Watcher,
    signal_queries: BlackboardQueries,
    log: SolveLog,
    clock: Clock,
    processes: SolveProcesses,
    signals: SignalReadModel | None = None,
    registry: Callable[[], AgentRegistry] | None = None,
    config: BlackboardSettings | None = None,
) -> Solver:
    from blackboard.application.budgets import board_budget
    from blackboard.application.solve.prompt import controller_prompt
    from blackboard.application.solve.solver import Solver
    from blackboard.domain.limits import Budget

    made = Solver(
        service, knowledge, queries, watcher, signal_queries, log, clock, controller_prompt, processes
    )
    if signals is not None:  # the controller's runs are charged to the board: its budget stops the run
        made.over_budget = lambda board: board_budget(signals, board).reached
        made.usd_budget = lambda board: signals.budgets(board).get(board, Budget()).usd is not None
    if signals is not None and registry is not None and config is not None:
        made.step_held = _step_held(signal_queries, registry, config, signals, clock)
    return made


def _step_held(
    queries: BlackboardQueries,
    registry: Callable[[], AgentRegistry],
    config: BlackboardSettings,
    signals: SignalReadModel,
    clock: Clock,
) -> Callable[[AgentSignal], str | None]:
    """Why a solve step's board budget holds it back until it is raised (as `next` and `show` say it)."""
    from blackboard.application.budgets import budget_states
    from blackboard.application.ranking import budget_hold

    def held(signal: AgentSignal) -> str | None:
        now = clock.now()
        lapsed = now - timedelta(seconds=config.claim_timeout)
        found = budget_hold(
            queries,
            registry(),
            config.claim_threshold,
            lambda board: budget_states(signals, board, lapsed),
            signal.signal_id,
            signal.blackboard_id,
            now,
        )
        return found.reason if found is not None and found.lasting else None

    return held


def entry_read_model(engine: Engine) -> SqlEntryReadModel:
    from blackboard.infrastructure.persistence.knowledge.read_model import SqlEntryReadModel

    return SqlEntryReadModel(engine)


def event_store(engine: Engine) -> SqlAlchemyEventStore:
    from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore

    return SqlAlchemyEventStore(engine)


def read_model(engine: Engine) -> SqlSignalReadModel:
    from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel

    return SqlSignalReadModel(engine)


def unit_of_work(engine: Engine) -> SqlUnitOfWork:
    from blackboard.infrastructure.persistence.unit_of_work import SqlUnitOfWork

    return SqlUnitOfWork(engine)


def rate_windows(engine: Engine) -> SqlRateWindows:
    from blackboard.infrastructure.persistence.rate_windows import SqlRateWindows

    return SqlRateWindows(engine)


def presence_store(engine: Engine) -> SqlPresenceStore:
    from blackboard.infrastructure.persistence.presence import SqlPresenceStore

    return SqlPresenceStore(engine)


def run_output(engine: Engine) -> SqlRunOutputStore:
    from blackboard.infrastructure.persistence.run_output import SqlRunOutputStore

    return SqlRunOutputStore(engine)


def projector(
    store: EventStore, signals: SignalReadModel, page: int = 20_000, authority: Authority | None = None
) -> Projector:
    from blackboard.application.projection import Projector
    from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel

    if isinstance(signals, SqlSignalReadModel):  # the log and the rows in one database: the fast replay
        from blackboard.infrastructure.persistence.projector import ReplayingProjector

        # pages 4x larger by default: a page holds the projection against commands about as long as 5,000
        # did on the normal path (BLACKBOARD_PROJECTION_PAGE)
        return ReplayingProjector(store, signals, page_size=page, authority=authority)
    return Projector(store, signals, page_size=5000, authority=authority)


def system_clock() -> Clock:
    from blackboard.infrastructure.composition.clock import SystemClock

    return SystemClock()


def signal_ids() -> IdGenerator:
    from blackboard.infrastructure.composition.clock import RandomSignalIds

    return RandomSignalIds()


def blackboard_service(
    *args: Any, tracer: Tracer | None = None, authority: Authority | None = None
) -> BlackboardService:
    from blackboard.application.service import BlackboardService

    return BlackboardService(*args, tracer=tracer, authority=authority)


def tracer(store: SqlAlchemyEventStore) -> Tracer | None:
    """None (the service's own, which traces nothing) unless tracing is configured; then OpenTelemetry's,
    imported only then (infrastructure/tracing/switch.py)."""
    from blackboard.infrastructure.tracing.switch import configured_tracer

    return configured_tracer(store)


def blackboard_queries(*args: Any, authority: Authority | None = None) -> BlackboardQueries:
    from blackboard.application.queries import BlackboardQueries

    return BlackboardQueries(*args, authority=authority)


def flow_queries(
    store: EventStore, read_model: SignalReadModel, authority: Authority | None = None
) -> FlowQueries:
    """Imported on first use: `flow status`, `status`, `/metrics` and the flows' calls of the Python API."""
    from blackboard.application.flows.queries import FlowQueries

    return FlowQueries(store, read_model, authority)


def watcher(
    store: EventStore,
    queries: BlackboardQueries,
    notifier: LogNotifier,
    service: Callable[[], BlackboardService],
    clock: Clock,
    output: Callable[[], RunOutputStore] | None = None,
) -> Watcher:
    """`service`: the service's provider, built only when a wait reaches a deadline (a wait that ends with
    the log never builds it); `output`: the runs' output's, built when a follow first reads it."""
    from blackboard.application.watching import Watcher

    return Watcher(store, queries, notifier, service, clock, output)


def open_database(settings: StoreSettings) -> Engine:
    """The engine, with the schema created or upgraded when it is not current (one query when it is).

    A database that cannot be reached (or a lock file that cannot be opened) is StoreUnavailable, as
    the adapters say it; ensure_schema, in persistence/schema.py, would be the place to translate it."""
    import sqlite3

    from sqlalchemy.exc import DBAPIError

    from blackboard.application.errors import StoreUnavailable
    from blackboard.infrastructure.persistence.engine import make_engine
    from blackboard.infrastructure.persistence.schema import ensure_schema

    engine = None
    try:
        engine = make_engine(settings)  # SQLite: creates the database's folder
        ensure_schema(engine)
    except (DBAPIError, OSError, sqlite3.Error) as exc:  # sqlite3's own: persistence/sqlite.py use_wal
        if engine is not None:
            engine.dispose()
        raise StoreUnavailable(f"could not open the database: {getattr(exc, 'orig', exc)}") from exc
    return engine


class Container(containers.DeclarativeContainer):
    """The one composition root, used unchanged by every entry point: the CLI (which wires its command
    modules into it, cli/__init__.py), `blackboard mcp` (the CLI's instance), the Python API and the
    tests each build one instance from their BlackboardSettings (`Container(config=settings.load(...))`;
    the defaults without one) and take what they use from its providers; building it wires nothing and
    builds nothing. Tests override providers."""

    config = providers.Dependency(instance_of=BlackboardSettings, default=BlackboardSettings())

    store_settings = providers.Singleton(store_settings, config)
    engine = providers.Singleton(open_database, store_settings)
    event_store = providers.Singleton(event_store, engine)
    read_model = providers.Singleton(read_model, engine)
    unit_of_work = providers.Singleton(unit_of_work, engine)
    clock = providers.Singleton(system_clock)
    settings = providers.Singleton(service_settings, config)
    # who may do what, for whoever calls now (application/callers.py): every use case that writes asks it
    authority = providers.Singleton(authority, read_model, clock, settings)
    projector = providers.Singleton(
        projector, event_store, read_model, config.provided.projection_page, authority
    )
    agent_registry = providers.Singleton(
        agent_registry,
        agents_dir=config.provided.agents_dir,
        default_threshold=config.provided.claim_threshold,
        artifacts_dir=config.provided.artifacts_dir,
        prices=config.provided.prices,
        rate_limits=config.provided.rate_limits,
    )
    # gates that call a person (docs/webhooks.md): None unless BLACKBOARD_WEBHOOKS is set
    webhooks = providers.Singleton(webhook_courier, config, engine, clock)
    dispatcher = providers.Singleton(
        landing_dispatcher, unit_of_work, clock, config.provided.webhooks, webhooks.provider
    )
    ids = providers.Singleton(signal_ids)
    notifier = providers.Singleton(
        log_notifier, engine, event_store, config.provided.poll_interval, dispatcher
    )
    rate_windows = providers.Singleton(rate_windows, engine)  # rate limits' windows (domain/rates.py)
    presence = providers.Singleton(presence_store, engine)  # live workers: read by expiry and status
    # traces (docs/operate.md): a tracer that does nothing unless the otel extra is installed and OTEL_* set
    tracer = providers.Singleton(tracer, event_store)
    service = providers.Singleton(
        blackboard_service,
        unit_of_work,
        read_model,
        agent_registry,
        dispatcher,
        clock,
        ids,
        settings,
        projector,
        presence,
        event_store,
        tracer=tracer,
        authority=authority,
    )
    queries = providers.Singleton(
        blackboard_queries,
        event_store,
        read_model,
        agent_registry,
        config.provided.claim_threshold,
        clock,
        providers.Callable(lambda s: (s.post_timeout, s.claim_timeout), settings),
        presence,
        authority=authority,
    )
    held_back = providers.Singleton(
        held_back, config, queries, agent_registry.provider, read_model, rate_windows, clock
    )
    run_output = providers.Singleton(run_output, engine)  # runs' output as it comes: `show --follow`
    watcher = providers.Singleton(
        watcher, event_store, queries, notifier, service.provider, clock, run_output.provider
    )
    flows = providers.Singleton(flow_queries, event_store, read_model, authority)
    entry_read_model = providers.Singleton(entry_read_model, engine)
    knowledge = providers.Singleton(knowledge_service, unit_of_work, dispatcher, clock, settings, authority)
    knowledge_queries = providers.Singleton(
        knowledge_queries, entry_read_model, read_model, projector, clock, settings, authority
    )
    transfer = providers.Singleton(board_transfer, event_store, projector, settings, authority)
    solve_log = providers.Singleton(solve_log, engine)
    solve_processes = providers.Singleton(solve_processes, engine)
    solver = providers.Singleton(
        solver,
        service,
        knowledge,
        knowledge_queries,
        watcher,
        queries,
        solve_log,
        clock,
        solve_processes,
        read_model,
        agent_registry.provider,
        config,
    )
    status = providers.Singleton(
        status_queries,
        read_model,
        entry_read_model,
        projector,
        clock,
        settings,
        presence,
        agent_registry.provider,
        queries.provider,
        rate_windows,
    )
    # a worker's options come from the `worker` command's flags: give them per call, `worker(options=...)`;
    # not instance_of=WorkerOptions, which would import the worker with every command
    worker_options = providers.Dependency()
    worker = providers.Factory(
        build_worker,
        options=worker_options,
        service=service,
        queries=queries,
        agents=agent_registry,
        store=event_store,
        notifier=notifier,
        settings=settings,
        presence=presence,
        clock=clock,
        output=run_output,
        rate_windows=rate_windows,
    )
