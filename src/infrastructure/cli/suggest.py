"""argparse with two habits of a friendlier command line: "did you mean ...?" for a mistyped command,
choice or option (Python 3.11 has no `suggest_on_error`), and a `--version` that reads the installed
version only when asked (importlib.metadata costs every call ~70 ms)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any, NoReturn

_INVALID_CHOICE = re.compile(r"invalid choice: (['\"]?)(?P<value>.*?)\1 \(choose from")
_UNRECOGNIZED = "unrecognized arguments: "
_OWNER = "_unrecognized_by"  # the (sub)parser whose options an unrecognized argument was meant for


class SuggestingParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors end with the closest known word, when one is close.
    Its subparsers are of this class too (`add_subparsers` makes them of the parent's type)."""

    def parse_known_args(
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> tuple[Any, list[str]]:
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and not hasattr(namespace, _OWNER):  # the innermost subcommand's parser comes first
            setattr(namespace, _OWNER, self)
        return namespace, extras

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        namespace, extras = self.parse_known_args(args, namespace)
        owner = vars(namespace).pop(_OWNER, self)
        if extras:
            owner.error(_UNRECOGNIZED + " ".join(extras))
        return namespace

    def error(self, message: str) -> NoReturn:
        super().error(message + self._suggestion(message))

    def _suggestion(self, message: str) -> str:
        if found := _INVALID_CHOICE.search(message):
            typed, known = found["value"], [str(c) for a in self._actions if a.choices for c in a.choices]
        elif message.startswith(_UNRECOGNIZED) and message.removeprefix(_UNRECOGNIZED).split():
            typed = message.removeprefix(_UNRECOGNIZED).split()[0].split("=")[0]
            known = (
                [  # a former name (interfaces/names.py, ALIASES) is accepted, never suggested
                    o
                    for o, action in self._option_string_actions.items()
                    if o.startswith("--") and action.help is not argparse.SUPPRESS
                ]
                if typed.startswith("-")
                else []
            )
        else:
            return ""
        import difflib  # only for a usage error

        close = difflib.get_close_matches(typed, known, n=3, cutoff=0.7)
        return f"; did you mean {' or '.join(close)}?" if close else ""


class LazyVersion(argparse.Action):
    """`--version`: prints `blackboard X.Y.Z` (the installed distribution's) and exits 0."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(
            option_strings,
            dest,
            nargs=0,
            default=argparse.SUPPRESS,
            help="print the version and exit",
            **kwargs,
        )

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        from importlib.metadata import PackageNotFoundError, version

        try:  # what `blackboard.__version__` says (the top package imports the Python API, which the CLI may not)
            installed = version("agent-blackboard")
        except PackageNotFoundError:  # a source tree that was never installed
            installed = "0.0.0"
        print(f"{parser.prog} {installed}")  # on stdout, as argparse's own version action
        parser.exit()
