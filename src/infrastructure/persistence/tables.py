"""The tables: the event log, the signal and entry read models and their checkpoints, live workers, and the
processes driving solve runs.

Core `Table`s rather than ORM classes: every statement here is Core, and importing
`sqlalchemy.orm` would cost each CLI call about a tenth of a second for nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    DDL,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Dialect,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    and_,
    event,
    false,
    text,
    true,
)
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import TypeDecorator

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
metadata = MetaData(naming_convention=NAMING)

# SQLite only makes INTEGER PRIMARY KEY an alias of the rowid (autoincrementing); PostgreSQL gets BIGINT.
Position = BigInteger().with_variant(Integer(), "sqlite")


class Moment(TypeDecorator[datetime]):
    """A timezone-aware instant, stored in UTC; SQLite, which keeps no zone, gives it back as UTC."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are refused: every stored time must carry its zone")
        return value.astimezone(UTC)  # SQLite's DATETIME keeps the wall time and drops the zone

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# One fact per row. `position` is the global commit order; (stream_id, version) is the optimistic lock.
EVENTS = Table(
    "events",
    metadata,
    Column("position", Position, primary_key=True, autoincrement=True),
    Column("event_id", String(36), nullable=False, unique=True),
    Column(
        "stream_id", String(401), nullable=False
    ),  # a board (200), or a board, \x1f and an entry key (200)
    Column("version", Integer, nullable=False),
    Column("event_type", String(100), nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("data", Text, nullable=False),
    Column("metadata", Text, nullable=False),
    Column("occurred_at", Moment, nullable=False),
    Column("recorded_at", Moment, nullable=False),
    UniqueConstraint("stream_id", "version"),
)

# The read model of one signal (design §11.1, plus board, dependencies and result).
SIGNALS = Table(
    "blackboard_signals",
    metadata,
    Column("signal_id", String(12), primary_key=True),
    Column("blackboard_id", String(200), nullable=False),
    Column("signal_type", String(20), nullable=False),
    Column("payload_json", Text, nullable=False),
    Column("target_capabilities", Text, nullable=False),  # JSON array, also in signal_capabilities
    Column("posted_by", String(200), nullable=False),
    Column("claimed_by", String(200)),
    Column("status", String(12), nullable=False),
    Column("created_at", Moment, nullable=False),
    Column("claimed_at", Moment),
    Column("completed_at", Moment),
    Column("result_json", Text),
    Column("version", Integer, nullable=False),
    Column("after_json", Text, nullable=False),  # JSON array of upstream signal ids
    Column("waiting_json", Text, nullable=False),  # JSON array of upstreams not yet completed
    Column("waiting", Integer, nullable=False),  # len(waiting_json), so "claimable" is indexable
    Column("claimable_since", Moment),
    Column("dedupe_key", String(200)),
    Column("retry_of", String(12)),
    Column("claim_token", String(100)),
    Column("renewed_at", Moment),
    Column("keys_json", Text),  # {"read": [...], "write": [...]}: key permissions; NULL when it has none
    Column("budget_usd", Float),  # what a runner's run may spend; NULL: no budget of its own
    Column("usage_json", Text),  # SignalUsage of a runner's run, with its completion or failure; else NULL
    Column("priority", Integer, nullable=False, server_default="2"),  # 0 (P0, most urgent) to 4
    Column(
        "not_before", Moment
    ),  # not claimable before then (`post --not-before`, a retry's wait); NULL: at once
    Column("attempt", Integer, nullable=False, server_default="1"),  # the attempt under way, or the next
    Column("max_attempts", Integer),  # `post --max-attempts`; NULL: the claimer's retry policy decides
    Column("attempts_json", Text),  # the attempts that failed and were retried; NULL: none
    Column(
        "gate", Boolean, nullable=False, server_default=false()
    ),  # a person decides it, no agent claims it
    # its own timeout (`post --timeout`): a gate's from when it opens, another signal's post timeout; NULL:
    # none (a gate waits for a person, another signal for the default post timeout, off unless set)
    Column("timeout_s", Float),
    Column("expires_at", Moment),  # POSTED with its own timeout: claimable_since + timeout_s, for the sweep
    Column("decided_by", String(200)),  # who approved or rejected the gate, or cancelled the signal
    Column("decision_note", Text),  # the approval's note, or the rejection's reason
    Column("concurrency_key", String(200)),  # its claimer's concurrency key (domain/limits.py); else NULL
    # what its claim reserved of the board's budget (domain/reservations.py), counted while it is CLAIMED;
    # NULL: nothing of that kind
    Column("reserved_usd", Float),
    Column("reserved_tokens", BigInteger),
    # its AgentSignalPosted's event_id (migration 0017): a tracer reads the post's metadata by the events'
    # unique index (infrastructure/tracing/otel.py); NULL on a row an older release posted beside this one
    Column("post_event_id", String(36)),
    # the N of its payload's entry id `e-N`, kept apart so the board's highest is read on an index: a post that
    # leaves its entry id out takes that plus one (migration 0021); NULL past 64 bits, and on rows an older
    # release wrote beside this one
    Column("entry_number", BigInteger),
    # the flow it is a step of and its step's id (`blackboard flow run`, migration 0022); NULL: no flow
    Column("flow_id", String(100)),
    Column("step_id", String(64)),
    # the attempts whose refused run was charged (AgentSignalRunCharged, migration 0023), a JSON array of
    # their numbers: each is charged once; NULL: none (and on rows an older release wrote beside this one)
    Column("charged_attempts_json", Text),
    # its payload's labels (`post --label`, migration 0024), a JSON array of them, that `--label` filters read;
    # NULL: none (and on rows an older release wrote beside this one)
    Column("labels_json", Text),
    # the attempts whose run stalled (AgentSignalStalled, migration 0028), a JSON array of {attempt, actor,
    # seconds_idle, at}, and how many: what `status` and /metrics count per board (NULL, 0: none; and on rows
    # an older release wrote beside this one)
    Column("stalls_json", Text),
    Column("stalls", Integer, nullable=False, server_default="0"),
    # the runner its claim's run is run by (AgentSignalClaimed.runner, migration 0029), which a nudge needs;
    # NULL: a handler's run, a claim by hand, or none; and how many nudges its runs were sent
    Column("claim_runner", String(40)),
    Column("nudges", Integer, nullable=False, server_default="0"),
    Index(
        "ix_blackboard_signals_open", "status", "waiting", "priority", "created_at", "signal_id"
    ),  # the candidates' order: the most urgent, then the oldest
    Index("ix_blackboard_signals_board", "blackboard_id", "created_at"),
    Index("ix_blackboard_signals_type", "signal_type", "created_at"),
    Index("ix_blackboard_signals_key", "blackboard_id", "dedupe_key"),  # a post's idempotency check
    Index("ix_blackboard_signals_entry", "blackboard_id", "entry_number"),  # the board's highest e-N
    Index("ix_blackboard_signals_retry_of", "retry_of"),  # a retry's chain
    Index("ix_blackboard_signals_flow", "blackboard_id", "flow_id"),  # a flow's signals
    Index("ix_blackboard_signals_concurrency", "concurrency_key", "status"),  # claimed under a key, counted
    # the signals that stalled, which `status` and /metrics count per board: only those rows (migration 0028)
    Index(
        "ix_blackboard_signals_stalled",
        "blackboard_id",
        sqlite_where=text("stalls > 0"),
        postgresql_where=text("stalls > 0"),
    ),
    # a board's open claims, whose reservations a claim totals: only CLAIMED rows are in it (migration 0018)
    Index(
        "ix_blackboard_signals_claimed",
        "blackboard_id",
        sqlite_where=text("status = 'CLAIMED'"),
        postgresql_where=text("status = 'CLAIMED'"),
    ),
)


def claimable_where() -> ColumnElement[bool]:
    """The domain's claimability (AgentSignal.is_claimable: POSTED, waiting for no upstream, not a gate) as a
    condition on SIGNALS, for the read model's selections that must stay SQL: the rule's one SQL form, on
    the columns ix_blackboard_signals_open leads with (`waiting` is the count of `waiting_json`)."""
    return and_(SIGNALS.c.status == "POSTED", SIGNALS.c.waiting == 0, SIGNALS.c.gate.is_(false()))


def open_gate_where() -> ColumnElement[bool]:
    """The domain's open gate (AgentSignal.is_open_gate: a gate POSTED, waiting for no upstream) on SIGNALS."""
    return and_(SIGNALS.c.status == "POSTED", SIGNALS.c.waiting == 0, SIGNALS.c.gate.is_(true()))


# A board's budget (`blackboard budget`), as its last BoardBudgetSet left it; NULL: no limit of that kind.
BOARD_BUDGETS = Table(
    "board_budgets",
    metadata,
    Column("blackboard_id", String(200), primary_key=True),
    Column("usd", Float),
    Column("tokens", BigInteger),
    # what its runs spent has reached it: workers leave its signals out of their candidates (kept by the fold)
    Column("reached", Boolean, nullable=False, server_default=false()),
    # what its runs spent (priced runs' USD; input and output tokens), kept by the fold with `reached`: a
    # claim reads it with the budget, whatever the number of runs (migration 0018)
    Column("spent_usd", Float, nullable=False, server_default="0"),
    Column("spent_tokens", BigInteger, nullable=False, server_default="0"),
)

# A rate limit's window (domain/rates.py), one row per key, shared by every agent naming the key on every
# board and host: what room it had left when last changed (`at`), what a call is expected to cost, and
# until when a 429 closed it. Not a projection of the log: it is the limit's own state (migration 0025).
RATE_WINDOWS = Table(
    "blackboard_rate_windows",
    metadata,
    Column("key", String(200), primary_key=True),
    Column("requests", Float, nullable=False),
    Column("tokens", Float, nullable=False),
    Column("per_call", Float, nullable=False, server_default="0"),
    Column("at", Moment, nullable=False),
    Column("closed_until", Moment),
    Column("requests_per_minute", Integer),  # the limit it was last changed under: the read side judges by it
    Column("tokens_per_minute", BigInteger),
)

# One runner's run, as its completion or failure recorded it: what `summary` and `status` total per
# board and agent with GROUP BYs, whatever the length of the log.
SIGNAL_USAGE = Table(
    "signal_usage",
    metadata,
    Column("signal_id", String(12), primary_key=True),
    Column("blackboard_id", String(200), nullable=False),
    Column("agent", String(200), nullable=False),  # who completed or failed it
    Column("runner", String(40), nullable=False),
    Column("model", String(200)),
    Column("input_tokens", BigInteger, nullable=False),
    Column("output_tokens", BigInteger, nullable=False),
    Column("cost_usd", Float),  # NULL: neither reported nor priced
    Column("turns", Integer, nullable=False),
    Column("duration_ms", BigInteger, nullable=False),
    Index("ix_signal_usage_board", "blackboard_id", "agent"),
)

# One run of a `solve` controller (its decision's runner), as the solve run's event recorded it: counted with
# the board's runs by `summary`, `status`, `/metrics` and the budget (migration 0018), the controller as agent.
SOLVE_USAGE = Table(
    "solve_usage",
    metadata,
    Column(
        "event_id", String(36), primary_key=True
    ),  # the SolveStepPosted, -DecisionFailed, -Solved, -Synthesized
    Column("blackboard_id", String(200), nullable=False),
    Column("agent", String(200), nullable=False),  # the controller
    Column("runner", String(40), nullable=False),
    Column("model", String(200)),
    Column("input_tokens", BigInteger, nullable=False),
    Column("output_tokens", BigInteger, nullable=False),
    Column("cost_usd", Float),  # NULL: neither reported nor priced
    Column("turns", Integer, nullable=False),
    Column("duration_ms", BigInteger, nullable=False),
    Index("ix_solve_usage_board", "blackboard_id", "agent"),
)

# One target capability of a signal: the index behind "open signals for these capabilities".
CAPABILITIES = Table(
    "signal_capabilities",
    metadata,
    Column("signal_id", String(12), primary_key=True),
    Column("capability", String(200), primary_key=True),
    Index("ix_signal_capabilities_capability", "capability", "signal_id"),
)

# `signal_id` comes after `upstream_id`: lets a completion find its dependants.
DEPENDENCIES = Table(
    "signal_dependencies",
    metadata,
    Column("signal_id", String(12), primary_key=True),
    Column("upstream_id", String(12), primary_key=True),
    Index("ix_signal_dependencies_upstream", "upstream_id"),
)

# The last global position a projection has folded in.
CHECKPOINTS = Table(
    "projection_checkpoints",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("position", Position, nullable=False),
)

# Entry keys sort and match byte by byte on PostgreSQL too (`entries` is in key order, `--prefix` a LIKE),
# as in SQLite and in a replay, whatever the database's own collation.
KeyText = String(200).with_variant(String(200, collation="C"), "postgresql")

# The read model of one entry key: its current version's columns (what `entries` filters on) and
# its whole state (current version and open conflict candidates) as JSON.
ENTRIES = Table(
    "blackboard_entries",
    metadata,
    Column("blackboard_id", String(200), primary_key=True),
    Column("key", KeyText, primary_key=True),
    Column("version", Integer, nullable=False),  # the key's stream version: the last recorded write
    Column("current_version", Integer, nullable=False),
    Column("author", String(200), nullable=False),
    Column("entry_type", String(20), nullable=False),
    Column("section", String(200), nullable=False),
    Column("role", String(200), nullable=False),
    Column("label", String(200), nullable=False),
    Column("signal_id", String(12)),
    Column("position", Position, nullable=False),  # of the current version's event
    Column("candidates", Integer, nullable=False),  # open conflict candidates; 0 when not in conflict
    Column("state_json", Text, nullable=False),
    Index("ix_blackboard_entries_author", "blackboard_id", "author", "key"),  # entries --author
)

# One topic an entry's current version was published to: the index behind `entries --topic`.
ENTRY_TOPICS = Table(
    "entry_topics",
    metadata,
    Column("blackboard_id", String(200), primary_key=True),
    Column("topic", String(200), primary_key=True),
    Column("key", KeyText, primary_key=True),
    Index("ix_entry_topics_key", "blackboard_id", "key"),  # rewriting a key's topics
)

# The search index over entries (migration 0015; knowledge/search.py) is each database's own full-text
# engine, not a model: `alembic check` leaves it out, and `create_all` (the tests' quick schema) adds it.
ENTRY_SEARCH_DDL = {
    "sqlite": (
        "CREATE TABLE entry_search_text (id INTEGER PRIMARY KEY, blackboard_id VARCHAR(200) NOT NULL,"
        " key VARCHAR(200) NOT NULL, words TEXT NOT NULL, UNIQUE (blackboard_id, key))",
        "CREATE VIRTUAL TABLE entry_search USING fts5(words, content='entry_search_text', content_rowid='id',"
        " tokenize='unicode61 remove_diacritics 0')",
    ),
    "postgresql": (
        'CREATE TABLE entry_search (blackboard_id VARCHAR(200) NOT NULL, key VARCHAR(200) COLLATE "C" NOT NULL,'
        " vector TSVECTOR NOT NULL, CONSTRAINT pk_entry_search PRIMARY KEY (blackboard_id, key))",
        "CREATE INDEX ix_entry_search_vector ON entry_search USING gin (vector)",
    ),
}
for _name, _statements in ENTRY_SEARCH_DDL.items():
    for _statement in _statements:
        event.listen(metadata, "after_create", DDL(_statement).execute_if(dialect=_name))
event.listen(metadata, "before_drop", DDL("DROP TABLE IF EXISTS entry_search"))
event.listen(metadata, "before_drop", DDL("DROP TABLE IF EXISTS entry_search_text"))

# Live workers (docs/agents.md: "Live workers"): one row per worker process, kept fresh by its beats.
# Not the event log: a beat is no fact about a board. What the expiry rule and `status` read.
WORKERS = Table(
    "worker_presence",
    metadata,
    Column("worker_id", String(300), primary_key=True),  # `<agent>/<uuid>`: public, no claim token
    Column("agent_id", String(200), nullable=False),
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("started_at", Moment, nullable=False),
    Column("last_beat_at", Moment, nullable=False),
    Column("beat_seconds", Float, nullable=False),  # its own beat interval: how long until it is stale
    Column("boards_json", Text, nullable=False),  # JSON array of the boards it serves; [] = every board
    Column("capabilities_json", Text, nullable=False),  # JSON [{type, score}]: what it claims with
    Column("threshold", Float, nullable=False),  # the threshold it claims with, resolved
    Column("running_json", Text, nullable=False),  # JSON [[signal_id, blackboard_id], ...]
    Column("stopped_at", Moment),  # set when it stopped; NULL while it runs (or died)
)

# The processes driving solve runs (docs/agents.md, "The controller: solve"): one row per run, kept fresh by
# its process's beats as a worker's is; `solve --status` calls a running run whose row is stale `orphaned`.
SOLVE_PROCESSES = Table(
    "solve_processes",
    metadata,
    Column("blackboard_id", String(200), primary_key=True),
    Column("run_id", String(200), primary_key=True),
    Column("holder", String(64), nullable=False),  # the driving process's token: a resume takes the row over
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("started_at", Moment, nullable=False),
    Column("last_beat_at", Moment, nullable=False),
    Column("beat_seconds", Float, nullable=False),
    Column("stopped_at", Moment),  # set when its process ended on its own; NULL while it runs (or died)
)

# A run's output as it comes (application/output.py, docs/persistence.md "Run output"): the lines a worker
# keeps while it runs a signal, for `show --follow` on any host. Not events: bulky, bounded per run, dropped
# after OUTPUT_KEPT.
RUN_OUTPUT = Table(
    "run_output",
    metadata,
    Column("signal_id", String(12), primary_key=True),
    Column("attempt", Integer, primary_key=True),
    Column("sequence", Integer, primary_key=True),  # from 1 in its attempt, as its worker numbered them
    Column("at", Moment, nullable=False),
    Column("stream", String(16), nullable=False),  # transcript, stdout, stderr or notice
    Column("text", Text, nullable=False),
    Index("ix_run_output_at", "at"),  # what a worker's start drops
)


# Gates that call a person (docs/webhooks.md): one row per announcement of a gate (opened, approved, rejected,
# timed out, cancelled) and URL of BLACKBOARD_WEBHOOKS; the body kept as sent, so every try sends the same bytes
# (the secret signs them when sent, never stored). Not the event log: a delivery is no fact about a board.
WEBHOOK_DELIVERIES = Table(
    "webhook_deliveries",
    metadata,
    Column("delivery_id", Position, primary_key=True, autoincrement=True),
    Column("blackboard_id", String(200), nullable=False),
    Column("signal_id", String(12), nullable=False),
    Column("event", String(40), nullable=False),  # gate.opened, gate.approved, ... (domain/webhooks.py)
    Column("url", String(2000), nullable=False),
    Column("body", Text, nullable=False),  # the JSON body, as sent
    Column("status", String(12), nullable=False),  # pending, delivered, given up
    Column("attempts", Integer, nullable=False),  # tries so far (a try taken counts, answered or not)
    Column("last_status", Integer),  # the receiver's HTTP status at the last try; NULL: no answer
    Column("last_error", Text),  # why the last try failed; NULL once delivered
    Column("created_at", Moment, nullable=False),
    Column("last_try_at", Moment),
    Column(
        "next_try_at", Moment
    ),  # when it is due (or its taker's lease ends); NULL once delivered or given up
    Column(
        "gate_open", Boolean, nullable=False
    ),  # a gate.opened row whose gate's end is still to be announced
    UniqueConstraint("signal_id", "event", "url"),
    Index("ix_webhook_deliveries_due", "status", "next_try_at"),
    Index("ix_webhook_deliveries_board", "blackboard_id", "delivery_id"),
    Index("ix_webhook_deliveries_gate_open", "gate_open"),
)

# Which releases may run side by side on this database (migration 0014; persistence/schema.py
# `record_versions`): per revision, who applied it and the oldest release that may still run against it.
SCHEMA_VERSIONS = Table(
    "blackboard_schema_versions",
    metadata,
    Column("revision", String(32), primary_key=True),
    Column("written_by", String(64), nullable=False),
    Column("oldest_reader", String(64), nullable=False),
    Column("applied_at", Moment, nullable=False),
)

# Per event type and schema version, the first release that wrote it: what a reader too old for an
# event names as the release to upgrade to.
EVENT_SCHEMAS = Table(
    "blackboard_event_schemas",
    metadata,
    Column("event_type", String(100), primary_key=True),
    Column("schema_version", Integer, primary_key=True),
    Column("written_by", String(64), nullable=False),
)

# LangGraph checkpoints (migration 0016; persistence/checkpoints.py folds them from the threads' streams):
# the ones reads see, one row each, the newest of a thread's namespace found through the primary key
# (checkpoint ids grow with time), whatever the length of the thread's history. A prune or a deletion
# removes rows; the log keeps every checkpoint.
CHECKPOINT_ROWS = Table(
    "blackboard_checkpoints",
    metadata,
    Column("blackboard_id", String(200), primary_key=True),
    Column("thread_id", Text, primary_key=True),
    Column("checkpoint_ns", Text, primary_key=True),
    Column("checkpoint_id", Text, primary_key=True),
    Column("parent_checkpoint_id", Text),
    Column("run_id", Text),  # the metadata's, for delete_for_runs
    Column("checkpoint_type", Text, nullable=False),  # the serializer's type tag, and its bytes
    Column("checkpoint_data", LargeBinary, nullable=False),
    Column("metadata_json", Text),  # the metadata as JSON, or (not JSON) the serializer's type and bytes
    Column("metadata_type", Text),
    Column("metadata_data", LargeBinary),
    Column("position", Position, nullable=False),  # the CheckpointSaved event's place in the log
    Index("ix_blackboard_checkpoints_run", "blackboard_id", "run_id"),
)

# Each checkpoint's pending writes, by (task_id, idx) as LangGraph keys them.
CHECKPOINT_WRITES = Table(
    "blackboard_checkpoint_writes",
    metadata,
    Column("blackboard_id", String(200), primary_key=True),
    Column("thread_id", Text, primary_key=True),
    Column("checkpoint_ns", Text, primary_key=True),
    Column("checkpoint_id", Text, primary_key=True),
    Column("task_id", Text, primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("task_path", Text, nullable=False),
    Column("channel", Text, nullable=False),
    Column("value_type", Text, nullable=False),
    Column("value_data", LargeBinary, nullable=False),
)
