"""Every knob of the blackboard, defined once: its flag or environment variable, default, rule and parser.

`load` takes each value from its flag if given, else from its environment variable, else the
default, and refuses a bad one naming the flag or the variable and the rule (InvalidInput, exit 2)
before anything is opened. The container builds the application's and the store's settings from
the result, the CLI reads it, and `worker_options` derives a worker's timings from it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from blackboard.application.bounds import MAX_SECONDS
from blackboard.domain.errors import InvalidInput
from blackboard.domain.thresholds import DEFAULT_THRESHOLD
from blackboard.infrastructure.composition import prices, rate_limits
from blackboard.infrastructure.composition.prices import PriceTable
from blackboard.infrastructure.composition.rate_limits import RateLimitTable
from blackboard.infrastructure.persistence import DEFAULT_URL, SYNCHRONOUS_MODES

if TYPE_CHECKING:
    from blackboard.application.service import Settings
    from blackboard.infrastructure.persistence.engine import StoreSettings
    from blackboard.infrastructure.worker import WorkerOptions

YES, NO = ("1", "true", "yes"), ("0", "false", "no")


def _yes_or_no(raw: Any) -> bool:
    text = str(raw).strip().lower()
    if text in YES or raw is True:
        return True
    if text in NO or raw is False:
        return False
    raise ValueError(raw)


@dataclass(frozen=True, slots=True)
class Knob:
    """How one setting is given and checked; the rule is what a refusal says the value must be."""

    rule: str
    check: Callable[[Any], bool]
    parse: Callable[[Any], Any]
    env: str | None = None  # None: not read from the environment
    flag: str | None = None  # None: no command-line option

    @property
    def source(self) -> str:
        return " or ".join(s for s in (self.flag, self.env) if s)


def _knob(
    default: Any,
    rule: str,
    check: Callable[[Any], bool],
    parse: Callable[[Any], Any],
    env: str | None = None,
    flag: str | None = None,
    repr: bool = True,
) -> Any:
    return field(default=default, metadata={"knob": Knob(rule, check, parse, env, flag)}, repr=repr)


MAX_COUNT = 10_000  # handlers at once, pooled connections
MIN_LINE, MAX_LINE = 1024, 1 << 30  # bytes of one line read by `blackboard mcp`


def _above_0(value: float) -> bool:
    return 0 < value <= MAX_SECONDS


def _off_or_above_0(value: float | None) -> bool:
    return value is None or _above_0(value)


def _0_or_more(value: float) -> bool:
    return 0 <= value <= MAX_SECONDS


def _count_above_0(value: int) -> bool:
    return 0 < value <= MAX_COUNT


def _count_0_or_more(value: int) -> bool:
    return 0 <= value <= MAX_COUNT


def _finite(raw: Any) -> float:
    value = float(raw)
    if not math.isfinite(value):
        raise ValueError(raw)
    return value


def _finite_or_off(raw: Any) -> float | None:
    """Seconds, or None (given in code: `Blackboard(post_timeout=None)`) for off."""
    return None if raw is None else _finite(raw)


def _whole(raw: Any) -> int:
    if isinstance(raw, float) or len(str(raw).strip()) > 20:
        raise ValueError(raw)
    return int(raw)


def _db_url(raw: Any) -> str:
    """A URL of a supported technology; checked here so a bad one names its flag or variable."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        backend = make_url(str(raw)).get_backend_name()
    except (ArgumentError, ValueError):
        raise ValueError(raw) from None
    if backend not in ("sqlite", "postgresql"):
        raise ValueError(raw)
    return str(raw)


def absolute_db(url: str) -> str:
    """The URL with a SQLite file's relative path made absolute against the working directory, so a
    process started in another folder (a worker's handler, an MCP client) reaches the same file;
    PostgreSQL URLs, in-memory databases and `file:` URIs as they are."""
    from sqlalchemy.engine import make_url

    made = make_url(url)
    database = made.database
    if (
        made.get_backend_name() != "sqlite"
        or not database
        or database == ":memory:"
        or database.startswith("file:")
        or os.path.isabs(database)
    ):
        return url
    return made.set(database=os.path.abspath(database)).render_as_string(hide_password=False)


def _any(value: Any) -> bool:
    return True


def _labels(raw: Any) -> tuple[str, ...]:
    """Signal labels separated by commas (spaces around them ignored), each as `post --label` takes it,
    at most as many as a signal may carry: what `/metrics` counts signals by (docs/web.md)."""
    import re  # the label's rule is the domain's; read only when the variable is set

    from blackboard.domain.signals import LABEL_PATTERN, MAX_LABEL, MAX_LABELS

    given = tuple(dict.fromkeys(p.strip() for p in (raw.split(",") if isinstance(raw, str) else raw)))
    labels = tuple(p for p in given if p)
    if len(labels) > MAX_LABELS or any(len(p) > MAX_LABEL or not re.match(LABEL_PATTERN, p) for p in labels):
        raise ValueError(raw)
    return labels


LABELS_RULE = (
    "signal labels separated by commas, at most 20, each 1..64 characters of a-z 0-9 . _ : / - "
    "starting with a letter or digit"
)
URL_RULE = "an http:// or https:// URL naming a host"
URLS_RULE = "http:// or https:// URLs naming a host, separated by commas, at most 20"


def _url(raw: Any) -> str:
    """An http(s) URL with a host, as given (spaces around it dropped)."""
    from urllib.parse import urlsplit

    text = str(raw).strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        raise ValueError(raw) from None
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in text):
        raise ValueError(raw)
    if len(text) > 2000 or any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise ValueError(raw)
    return text


def _urls(raw: Any) -> tuple[str, ...]:
    """BLACKBOARD_WEBHOOKS: URLs separated by commas (each once, in order; empty parts ignored)."""
    given = raw.split(",") if isinstance(raw, str) else list(raw)
    urls = tuple(dict.fromkeys(_url(p) for p in given if str(p).strip()))
    if len(urls) > 20:
        raise ValueError(raw)
    return urls


def _ui_url(raw: Any) -> str:
    """The web view's public address, without a trailing `/`: the routes are appended to it."""
    return _url(raw).rstrip("/")


SECONDS = f"seconds, above 0 and at most {MAX_SECONDS:g}"
SECONDS_0 = f"0 or more seconds, at most {MAX_SECONDS:g}"


@dataclass(frozen=True, slots=True)
class BlackboardSettings:
    """Every setting, valid by construction: a value that breaks its knob's rule is refused."""

    db: str = _knob(
        DEFAULT_URL,
        "an SQLAlchemy URL of SQLite or PostgreSQL (sqlite:///FILE, postgresql+psycopg://...)",
        bool,
        _db_url,
        "BLACKBOARD_DB",
        "--db",
    )
    # folders, os.pathsep between them (`--agents-dir` repeated joins them so); the default falls back to
    # ./.claude/agents when ./agents does not exist (agents/scan.py: folders_from)
    agents_dir: str = _knob(
        "./agents",
        f"one or more folders (separated by {os.pathsep!r})",
        bool,
        str,
        "BLACKBOARD_AGENTS_DIR",
        "--agents-dir",
    )
    json: bool = _knob(False, "1, true, yes, 0, false or no", _any, _yes_or_no, "BLACKBOARD_JSON", "--json")
    claim_threshold: float = _knob(
        DEFAULT_THRESHOLD,
        "a number from 0 to 1",
        lambda v: 0 <= v <= 1,
        _finite,
        "BLACKBOARD_CLAIM_THRESHOLD",
    )
    # None (off): a POSTED signal waits for a worker that fits however long, unless posted with --timeout-s;
    # set, seed 003's rule: it expires once it has waited this long with no live worker that fits it
    post_timeout: float | None = _knob(
        None, SECONDS, _off_or_above_0, _finite_or_off, "BLACKBOARD_POST_TIMEOUT"
    )
    claim_timeout: float = _knob(300.0, SECONDS, _above_0, _finite, "BLACKBOARD_CLAIM_TIMEOUT")
    sqlite_synchronous: str = _knob(
        "FULL",
        " or ".join(SYNCHRONOUS_MODES),
        lambda v: v in SYNCHRONOUS_MODES,
        lambda raw: str(raw).upper(),
        "BLACKBOARD_SQLITE_SYNCHRONOUS",
    )
    sqlite_busy_timeout: float = _knob(30.0, SECONDS, _above_0, _finite, "BLACKBOARD_SQLITE_BUSY_TIMEOUT")
    pool_size: int = _knob(
        5, f"a whole number from 1 to {MAX_COUNT}", _count_above_0, _whole, "BLACKBOARD_POOL_SIZE"
    )
    max_overflow: int = _knob(
        10, f"a whole number from 0 to {MAX_COUNT}", _count_0_or_more, _whole, "BLACKBOARD_MAX_OVERFLOW"
    )
    pool_timeout: float = _knob(30.0, SECONDS, _above_0, _finite, "BLACKBOARD_POOL_TIMEOUT")
    pool_pre_ping: bool = _knob(
        False, "1, true, yes, 0, false or no", _any, _yes_or_no, "BLACKBOARD_POOL_PRE_PING"
    )
    # where handlers write: ./artifacts of the working directory, never inside an agents folder (the scan
    # skips it wherever it is); made absolute when loaded, as `db` is, so handlers get one folder
    artifacts_dir: str = _knob("artifacts", "a folder", bool, str, "BLACKBOARD_ARTIFACTS_DIR")
    poll_interval: float = _knob(0.02, SECONDS, _above_0, _finite, "BLACKBOARD_POLL_INTERVAL")
    # events a rebuild or catch-up folds per transaction (the SQL read model's fast replay): bigger pages are
    # faster, smaller ones hold the projection against commands for less time and use less memory
    projection_page: int = _knob(
        20_000, "a whole number of events from 1 to 1000000", lambda v: 1 <= v <= 1_000_000, _whole,
        "BLACKBOARD_PROJECTION_PAGE",
    )  # fmt: skip
    # a worker's beat: how often it says it is live (docs/agents.md: "Live workers"); a solve's, for its run
    beat_interval: float = _knob(2.0, SECONDS, _above_0, _finite, "BLACKBOARD_BEAT_INTERVAL")
    # the longest line `blackboard mcp` reads (one JSON-RPC message); a longer one is refused, unread
    mcp_max_line: int = _knob(
        4 * 1024 * 1024,
        f"a whole number of bytes from {MIN_LINE} to {MAX_LINE}",
        lambda v: MIN_LINE <= v <= MAX_LINE,
        _whole,
        "BLACKBOARD_MCP_MAX_LINE",
    )
    # prices of models the runners' table lacks or prices otherwise (infrastructure/composition/prices.py): the worker,
    # the claim's decision (an unpriced model under a USD budget) and the runners read them alike
    prices: PriceTable = _knob(PriceTable(), prices.RULE, _any, prices.parse, "BLACKBOARD_PRICES")
    # rate limits per model (infrastructure/composition/rate_limits.py): the rate_limit of an agent whose file
    # names none, by the model its runner calls (docs/control.md, "Rate limits")
    rate_limits: RateLimitTable = _knob(
        RateLimitTable(), rate_limits.RULE, _any, rate_limits.parse, "BLACKBOARD_RATE_LIMITS"
    )
    # the signal labels `/metrics` counts signals by (`blackboard_signals{label=...}`): only these, so a
    # scrape's series stay bounded however many labels posts use
    metric_labels: tuple[str, ...] = _knob((), LABELS_RULE, _any, _labels, "BLACKBOARD_METRIC_LABELS")
    # gates that call a person (docs/webhooks.md): where a gate's opening and end are POSTed, signed with the secret
    webhooks: tuple[str, ...] = _knob((), URLS_RULE, _any, _urls, "BLACKBOARD_WEBHOOKS")
    # never shown: no rule refuses it (an empty variable counts as not set), and the settings' repr leaves it out
    webhook_secret: str | None = _knob(None, "any text", _any, str, "BLACKBOARD_WEBHOOK_SECRET", repr=False)
    # the web view's address as a person's browser reaches it: a webhook's approve and reject links start with it
    ui_url: str = _knob("http://127.0.0.1:8765", URL_RULE, _any, _ui_url, "BLACKBOARD_UI_URL")
    webhook_timeout: float = _knob(2.0, SECONDS, _above_0, _finite, "BLACKBOARD_WEBHOOK_TIMEOUT")
    webhook_retry: float = _knob(10.0, SECONDS, _above_0, _finite, "BLACKBOARD_WEBHOOK_RETRY")
    webhook_give_up: float = _knob(3600.0, SECONDS, _above_0, _finite, "BLACKBOARD_WEBHOOK_GIVE_UP")
    # set in code only (tests, embedding)
    echo: bool = _knob(False, "true or false", _any, bool)  # log every SQL statement
    # a worker's options (`blackboard worker`)
    concurrency: int = _knob(
        1, f"a whole number from 1 to {MAX_COUNT}", _count_above_0, _whole, flag="--concurrency"
    )
    grace: float = _knob(30.0, SECONDS_0, _0_or_more, _finite, flag="--grace")
    head_start: float = _knob(0.1, SECONDS_0, _0_or_more, _finite, flag="--head-start")

    def __post_init__(self) -> None:
        for name, knob in KNOBS.items():
            value = getattr(self, name)
            if not knob.check(value):
                raise InvalidInput(knob.source or name, f"must be {knob.rule}, got {_shown(value)}")
        if self.webhooks and not self.webhook_secret:  # every delivery is signed (docs/webhooks.md)
            raise InvalidInput(
                "BLACKBOARD_WEBHOOK_SECRET",
                "must be set when BLACKBOARD_WEBHOOKS is: it signs every delivery",
            )


KNOBS: dict[str, Knob] = {f.name: f.metadata["knob"] for f in fields(BlackboardSettings)}


def load(flags: Mapping[str, Any], env: Mapping[str, str] | None = None) -> BlackboardSettings:
    """Each setting from its flag if given (not None), else its environment variable, else its default."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    for name, knob in KNOBS.items():
        flag = flags.get(name) if knob.flag else None
        raw, source = (
            (flag, knob.flag) if flag is not None else (env.get(knob.env) if knob.env else None, knob.env)
        )
        if raw is None or (raw == "" and source == knob.env):  # an empty variable counts as not set
            continue
        try:
            value = knob.parse(raw)
        except ValueError:
            raise InvalidInput(str(source), f"must be {knob.rule}, got {_shown(raw)}") from None
        if not knob.check(value):
            raise InvalidInput(str(source), f"must be {knob.rule}, got {_shown(raw)}")
        values[name] = value
    return BlackboardSettings(**_anchored(values))


def _anchored(values: dict[str, Any]) -> dict[str, Any]:
    """The SQLite file and the artifacts folder, relative to the working directory, made absolute once
    when settings are read: what a worker hands its handlers then means the same in their folders."""
    given = {**_anchors(BlackboardSettings()), **values}
    return {
        **values,
        "db": absolute_db(given["db"]),
        "artifacts_dir": os.path.abspath(given["artifacts_dir"]),
    }


def _anchors(config: BlackboardSettings) -> dict[str, Any]:
    return {"db": config.db, "artifacts_dir": config.artifacts_dir}


def configured(
    flags: Mapping[str, Any], given: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> BlackboardSettings:
    """`load(flags, env)`, then the settings `given` by field name in code (an embedding program's), which
    beat both; an unknown name or a bad value is InvalidInput naming it and the rule."""
    config = load(flags, env)
    values: dict[str, Any] = {}
    for name, raw in given.items():
        knob = KNOBS.get(name)
        if knob is None:
            raise InvalidInput(name, f"is not a setting; the settings are {', '.join(KNOBS)}")
        try:
            values[name] = knob.parse(raw)
        except (TypeError, ValueError):
            raise InvalidInput(name, f"must be {knob.rule}, got {raw!r}") from None
        if not knob.check(values[name]):
            raise InvalidInput(name, f"must be {knob.rule}, got {raw!r}")
    return replace(config, **_anchored({**_anchors(config), **values}))


def store_settings(settings: BlackboardSettings) -> StoreSettings:
    """How the persistence adapters reach and tune the database."""
    from blackboard.infrastructure.persistence.engine import StoreSettings

    return StoreSettings(
        url=settings.db,
        synchronous=settings.sqlite_synchronous,
        busy_timeout=settings.sqlite_busy_timeout,
        pool_size=settings.pool_size,
        max_overflow=settings.max_overflow,
        pool_timeout=settings.pool_timeout,
        pool_pre_ping=settings.pool_pre_ping,
        echo=settings.echo,
    )


def service_settings(settings: BlackboardSettings) -> Settings:
    """The application's policy values: the claim threshold and the two timeouts."""
    from blackboard.application.service import Settings

    return Settings(
        claim_threshold=settings.claim_threshold,
        post_timeout=None if settings.post_timeout is None else timedelta(seconds=settings.post_timeout),
        claim_timeout=timedelta(seconds=settings.claim_timeout),
    )


def worker_options(
    settings: BlackboardSettings, agent: str, once: bool, blackboard_id: str | None
) -> WorkerOptions:
    """A worker's options: its flags, and the timings derived from the board's timeouts."""
    from blackboard.infrastructure.worker import (
        WorkerOptions,
    )  # the worker's imports cost a command that runs none

    artifacts = os.path.abspath(settings.artifacts_dir)
    return WorkerOptions(
        agent=agent,
        once=once,
        concurrency=settings.concurrency,
        blackboard_id=blackboard_id,
        grace=settings.grace,
        head_start=settings.head_start,
        artifacts_dir=artifacts,
        beat_every=settings.beat_interval,
        handler_env=handler_environment(settings),
        # expire what is overdue a few times per the shorter timeout, every 0.5 s to 10 s
        sweep_every=min(10.0, max(0.5, min(settings.post_timeout or math.inf, settings.claim_timeout) / 3)),
        # a running handler's claim is renewed every third of the claim timeout (docs/agents.md: "Leases")
        renew_every=max(0.5, settings.claim_timeout / 3),
        claim_timeout=settings.claim_timeout,
    )


def handler_environment(settings: BlackboardSettings) -> dict[str, str]:
    """What a worker hands its handlers so that `blackboard` (or the Python API) run by a handler, in the
    agent's folder, reaches the worker's board: its database as an absolute URL, its agents folders and
    its artifacts folder as absolute paths (a glob stays a glob, made absolute)."""
    from blackboard.infrastructure.agents.scan import folders_from

    folders = os.pathsep.join(os.path.abspath(f) for f in folders_from(settings.agents_dir))
    return {
        "BLACKBOARD_DB": absolute_db(settings.db),
        "BLACKBOARD_AGENTS_DIR": folders,
        "BLACKBOARD_ARTIFACTS_DIR": os.path.abspath(settings.artifacts_dir),
    }


def _shown(raw: Any) -> str:
    return repr(raw) if isinstance(raw, str) else format(raw, "g")


def board_environment(config: BlackboardSettings) -> tuple[tuple[str, str], ...]:
    """The worker's settings as the variables that give them, so a run's `blackboard mcp` opens the same
    store and agents with the same timeouts, however the worker was given them (flags or variables), and
    wherever the run works: relative paths are made absolute."""
    # how a command prints: not the board's; the webhooks are sent by the worker itself, never by its runs, and
    # a run never sees the secret that signs them
    skipped = {"json", "webhooks", "webhook_secret"}
    values = {
        name: _env_text(getattr(config, name))
        for name, knob in KNOBS.items()
        if knob.env and name not in skipped
    }
    values["agents_dir"] = os.pathsep.join(
        str(Path(folder).resolve()) for folder in config.agents_dir.split(os.pathsep) if folder
    )
    if config.db.startswith("sqlite:///") and not config.db.startswith("sqlite:////"):
        path, _, query = config.db.removeprefix("sqlite:///").partition("?")
        if path and path != ":memory:":
            values["db"] = f"sqlite:///{Path(path).resolve()}" + (f"?{query}" if query else "")
    return tuple((str(KNOBS[name].env), value) for name, value in values.items())


def _env_text(value: Any) -> str:
    if value is None:  # a setting that is off (the post timeout): an empty variable counts as not set
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, tuple):  # labels, as the variable separates them
        return ",".join(value)
    return str(value)
