"""Exit codes: the one table from error family to code, and what each code means.

`main` chooses every exit code here; the parser's help prints `MEANINGS`, and a test holds docs/cli.md's
"Exit codes" table to both. Light on purpose: the parser imports it before the arguments are known.
"""

from __future__ import annotations

import textwrap

from blackboard.application.errors import TimedOut, Unavailable
from blackboard.domain.errors import BlackboardError, InvalidInput, NotFound, RuleViolation

OK = 0
UNEXPECTED = 1  # an error of no family (a bug, a broken install), or a reader that went away
INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT

# Every family of BlackboardError and its code. An error belongs to exactly one family.
FAMILIES: dict[type[BlackboardError], int] = {
    Unavailable: 1,
    InvalidInput: 2,  # argparse's usage errors exit 2 too, and a command model's ValidationError is translated
    RuleViolation: 3,
    NotFound: 4,
    TimedOut: 5,
}

MEANINGS: dict[int, str] = {
    OK: "done",
    UNEXPECTED: "unavailable (the database unreachable or locked, a board too busy) or an unexpected error; "
    "one line on stderr",
    2: "bad input: usage, or a value that fails validation; nothing is written",
    3: "refused by the state machine (already claimed, not the claimer, wrong state, dependencies pending); "
    "for wait: the signal ended FAILED, EXPIRED or UNCLAIMED",
    4: "not found: no such signal, agent or blackboard",
    5: "timed out waiting (watch, wait)",
    INTERRUPTED: "interrupted (Ctrl-C); a worker stops cleanly instead and exits 0",
}


def exit_code(error: BaseException) -> int:
    """The code of the family `error` belongs to; UNEXPECTED when it belongs to none."""
    if isinstance(error, KeyboardInterrupt):
        return INTERRUPTED
    return next((code for family, code in FAMILIES.items() if isinstance(error, family)), UNEXPECTED)


def help_text() -> str:
    """The exit codes as `blackboard --help` lists them."""
    rows = (
        textwrap.fill(meaning, 96, initial_indent=f"  {code:<5}", subsequent_indent=" " * 7)
        for code, meaning in MEANINGS.items()
    )
    return "exit codes:\n" + "\n".join(rows)
