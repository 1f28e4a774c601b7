"""What every call of the Python API shares: the application built once by the one container from the
CLI's settings, a request model's refusal turned into InvalidInput naming the argument, and closing."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TypeVar

from pydantic import BaseModel, ValidationError

from blackboard.application.json_values import MAX_DEPTH, check_json
from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.api.errors import Closed
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.errors.input import invalid_input
from blackboard.infrastructure.interfaces.names import ALIASES, accepted, arguments

M = TypeVar("M", bound=BaseModel)

# Request model fields, as the API's arguments name them (the others are spelled alike): interfaces/names.py.
ARGUMENTS = arguments()  # a command field -> the argument a call names it by, where they differ


@dataclass(frozen=True, slots=True)
class Parts:
    """The application's pieces, each built once, in the constructing thread: dependency-injector's
    Singleton does not guard its first build against two threads, so no call builds anything."""

    engine: Any
    service: Any
    queries: Any
    watcher: Any
    store: Any
    notifier: Any
    registry: Any
    knowledge: Any
    knowledge_queries: Any
    config: Any
    solver: Any
    status: Any
    read_model: Any
    projector: Any  # catches the read model up with the log (LangGraph's saver reads its checkpoint rows)
    solve_processes: Any  # the processes driving solve runs
    clock: Any
    flows: Any  # how flows stand (application/flows/queries.py)
    authority: Any  # the table applied to the caller: LangGraph's saver asks it before each write
    webhooks: Any = (
        None  # the courier announcing gates (docs/webhooks.md); None unless BLACKBOARD_WEBHOOKS is set
    )

    @classmethod
    def build(cls, container: Any) -> Parts:
        engine = (
            container.engine()
        )  # opens (creates, upgrades) the database first: an unreachable one fails here
        try:
            return cls(
                engine,
                container.service(),
                container.queries(),
                container.watcher(),
                container.event_store(),
                container.notifier(),
                container.agent_registry(),
                container.knowledge(),
                container.knowledge_queries(),
                container.config(),
                container.solver(),
                container.status(),
                container.read_model(),
                container.projector(),
                container.solve_processes(),
                container.clock(),
                container.flows(),
                container.authority(),
                container.webhooks() if container.config().webhooks else None,
            )
        except BaseException:
            engine.dispose()
            raise


class Base:
    """Opening and closing; the calls themselves are in SignalCalls and KnowledgeCalls."""

    def __init__(
        self, url: str | None = None, *, agents_dir: str | os.PathLike[str] | None = None, **settings: Any
    ) -> None:
        """`url` and `agents_dir` as `--db` and `--agents-dir`; each beats its environment variable
        (BLACKBOARD_DB, ...), which beats the default, as for the CLI. `settings` set any other field
        of `BlackboardSettings` by name (`claim_timeout=600`, `sqlite_synchronous="NORMAL"`)."""
        from blackboard.infrastructure.composition.settings import configured

        config = configured(
            {"db": url, "agents_dir": None if agents_dir is None else os.fspath(agents_dir)}, settings
        )
        self._built: Parts | None = Parts.build(Container(config=config))
        self._closing = threading.Lock()

    @property
    def _parts(self) -> Parts:
        parts = self._built
        if parts is None:
            raise Closed()
        return parts

    def close(self) -> None:
        """Close the database connections (and a PostgreSQL listener). Idempotent; a call after it
        raises Closed."""
        with self._closing:
            parts, self._built = self._built, None
        if parts is not None:
            if parts.webhooks is not None:  # the rounds its calls asked for, at most the timeout and a second
                parts.webhooks.stop()
            close = getattr(parts.notifier, "close", None)  # PostgreSQL's listening connection
            if close is not None:
                close()
            parts.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def request(model: type[M], as_given: dict[str, Any] | None = None, **given: Any) -> M:
    """The request model of a call from its arguments (None: not given, the model's default applies;
    `as_given` are passed even when None, a JSON null); a broken rule is InvalidInput naming the
    argument and the rule, before anything is written."""
    try:
        return model(
            **{name: value for name, value in given.items() if value is not None}, **(as_given or {})
        )
    except ValidationError as exc:
        raise invalid_input(exc, ARGUMENTS) from None


def former_names(command: str, given: Mapping[str, Any], **public: Any) -> dict[str, Any]:
    """A call's `public` arguments, with what it gave by a former name (`given`: interfaces/names.py, ALIASES) in
    their place, the same meaning; a name that is neither is the TypeError Python raises for it."""
    known = {old for old in ALIASES.get(command, {}) if not old.startswith("--")}
    for name in given:
        if name not in known:
            raise TypeError(f"{command}() got an unexpected keyword argument {name!r}")
    return accepted(command, {**public, **given})


def as_json(value: Any, field: str) -> Any:
    """`value` as the store will hold it (JSON: a tuple becomes a list, a dict's int keys strings), so the
    document a call returns is the one a later read gives; what JSON cannot hold (NaN, a set) is refused
    as the CLI refuses it, and so is a value nested too deep to encode (the models check the
    32-level rule of json_values.py on what comes back)."""
    check_json(value, field)  # the models' own rule and words first (nan, 64 bits, depth, NUL)
    try:
        return json.loads(json.dumps(value, allow_nan=False, ensure_ascii=False))
    except RecursionError:
        raise InvalidInput(field, f"must nest at most {MAX_DEPTH} levels of arrays and objects") from None
    except (TypeError, ValueError) as exc:
        raise InvalidInput(field, f"must be JSON: {exc}") from None


def names(items: Iterable[str] | str | None, field: str) -> tuple[str, ...]:
    """A list or tuple of names (a lone string is one name, not its letters; None, none); each name's
    own rules are the request model's."""
    if items is None:
        return ()
    if isinstance(items, str):
        return (items,)
    try:
        return tuple(items)
    except TypeError:
        raise InvalidInput(field, f"must be a list of strings, got {type(items).__name__}") from None
