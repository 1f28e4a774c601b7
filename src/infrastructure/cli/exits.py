"""Exit codes: what each code means, and the code of an error (its family's, from errors/families.py).

`main` chooses every exit code here; the parser's help prints `MEANINGS`, and a test holds docs/cli.md's
"Exit codes" table to both and to the families' table. Light on purpose: the parser imports it before the
arguments are known.
"""

from __future__ import annotations

import textwrap

from blackboard.infrastructure.errors import families as error_families

OK = 0
UNEXPECTED = error_families.UNEXPECTED.exit_code  # an error of no family, or a reader that went away
INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT

MEANINGS: dict[int, str] = {
    OK: "done",
    UNEXPECTED: "unavailable (the database unreachable or locked, a board too busy) or an unexpected error; "
    "one line on stderr",
    2: "bad input: usage, or a value that fails validation; nothing is written",
    3: "refused by the state machine (already claimed, not the claimer, wrong state, dependencies pending); "
    "for wait and show --follow: the signal ended FAILED, EXPIRED, UNCLAIMED or CANCELLED",
    4: "not found: no such signal, agent or blackboard",
    5: "timed out waiting (watch, wait, show --follow)",
    6: "upgrade needed: the log holds an event, or the database a revision, newer than this blackboard; "
    "stderr names the release to upgrade to",
    INTERRUPTED: "interrupted (Ctrl-C); a worker stops cleanly instead and exits 0",
}


def exit_code(error: BaseException) -> int:
    """The code of the family `error` belongs to; UNEXPECTED when it belongs to none."""
    if isinstance(error, KeyboardInterrupt):
        return INTERRUPTED
    return error_families.family_of(error).exit_code


def help_text() -> str:
    """The exit codes as `blackboard --help` lists them."""
    rows = (
        textwrap.fill(meaning, 96, initial_indent=f"  {code:<5}", subsequent_indent=" " * 7)
        for code, meaning in MEANINGS.items()
    )
    return "exit codes:\n" + "\n".join(rows)
