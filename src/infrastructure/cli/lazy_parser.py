"""Commands whose parsers are built only when they are chosen: a CLI call builds one command's grammar.

Building all 30-odd command parsers with their 190 options costs every call about 20 ms of CPU, for one
command. `LazyCommands` (the top-level subparsers action of the parser `main` builds) keeps what a
command's grammar is made of (its `add_parser` arguments and every call made on the parser it returned)
and builds that parser when the command is parsed or asked for its help. The top-level help lists the
commands from their summaries as before; the parser `build_parser()` gives the tests and the shell's
completion is built whole, and tests/unit/test_lazy_parser.py holds both to the same help and the same
parse of every command.
"""

from __future__ import annotations

import argparse
from typing import Any


class _Recorded:
    """A stand-in for a parser, a group or a subparsers action: what was called on it, to replay."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any], _Recorded]] = []

    def __getattr__(self, method: str) -> Any:
        if method.startswith("__"):
            raise AttributeError(method)

        def record(*args: Any, **kwargs: Any) -> _Recorded:
            made = _Recorded()
            self.calls.append((method, args, kwargs, made))
            return made

        return record

    def replay(self, target: Any) -> None:
        for method, args, kwargs, made in self.calls:
            made.replay(getattr(target, method)(*args, **kwargs))


class _Pending:
    def __init__(self, kwargs: dict[str, Any], recorded: _Recorded) -> None:
        self.kwargs, self.recorded = kwargs, recorded


class _Parsers(dict):  # type: ignore[type-arg]
    """name -> parser, each built on its first lookup; membership and the names need no building."""

    def __init__(self, build: Any) -> None:
        super().__init__()
        self._build = build

    def __getitem__(self, name: str) -> Any:
        value = super().__getitem__(name)
        if isinstance(value, _Pending):
            value = self._build(value)
            super().__setitem__(name, value)
        return value


class LazyCommands(argparse._SubParsersAction):  # type: ignore[type-arg]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._name_parser_map = self.choices = _Parsers(self._built)

    def add_parser(self, name: str, **kwargs: Any) -> Any:  # type: ignore[override]
        """argparse's add_parser, the parser itself left for later."""
        if kwargs.get("prog") is None:
            kwargs["prog"] = f"{self._prog_prefix} {name}"
        if name in self._name_parser_map:
            raise argparse.ArgumentError(self, f"conflicting subparser: {name}")
        if "help" in kwargs:
            self._choices_actions.append(self._ChoicesPseudoAction(name, (), kwargs.pop("help")))
        recorded = _Recorded()
        dict.__setitem__(self._name_parser_map, name, _Pending(kwargs, recorded))
        return recorded

    def _built(self, pending: _Pending) -> Any:
        parser = self._parser_class(**pending.kwargs)
        pending.recorded.replay(parser)
        return parser
